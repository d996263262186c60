# Cython declarations for tagger.py (pure Python mode: the .py runs unchanged without Cython).
import cython

@cython.locals(n=cython.Py_ssize_t, covered=cython.Py_ssize_t, p=cython.Py_ssize_t, end=cython.Py_ssize_t,
               long=cython.bint)
cdef _try_at(object tagger, object rule, list positions, str text, list phi, list sup, object timeout)

@cython.locals(start=cython.Py_ssize_t, end=cython.Py_ssize_t)
cdef _span_of(object tagger, object rule, object m, str text)
