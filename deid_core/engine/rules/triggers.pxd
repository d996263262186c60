# Cython declarations for triggers.py (pure Python mode: the .py runs unchanged without Cython).
import cython

@cython.locals(end_idx=cython.Py_ssize_t, back=cython.Py_ssize_t, pos=cython.Py_ssize_t, i=cython.Py_ssize_t,
               found=list)
cdef _collect(object automaton, str low, dict starts, set anchored)
