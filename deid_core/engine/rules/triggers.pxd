# Cython declarations for triggers.py (pure Python mode: the .py runs unchanged without Cython).
# The note's text stays `object`: Cython's `str` rejects str subclasses (numpy.str_) that Python accepts.
import cython

@cython.locals(end_idx=cython.Py_ssize_t, back=cython.Py_ssize_t, pos=cython.Py_ssize_t, i=cython.Py_ssize_t,
               found=list)
cdef _collect(object automaton, object low, dict starts, set anchored)
