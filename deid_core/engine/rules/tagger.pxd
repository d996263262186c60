# Cython declarations for tagger.py (pure Python mode: the .py runs unchanged without Cython).
# The note's text stays `object`: Cython's `str` rejects str subclasses (numpy.str_) that Python accepts.
import cython

@cython.locals(n=cython.Py_ssize_t, covered=cython.Py_ssize_t, p=cython.Py_ssize_t, end=cython.Py_ssize_t,
               long=cython.bint)
cdef _try_at(object tagger, object rule, list positions, object text, list phi, list sup, object timeout)

@cython.locals(start=cython.Py_ssize_t, end=cython.Py_ssize_t)
cdef _span_of(object tagger, object rule, object m, object text)
