# Cython declarations for screen.py (pure Python mode: the .py runs unchanged without Cython).
import cython

@cython.locals(k=cython.Py_ssize_t, i=cython.Py_ssize_t, owner=tuple, hits=list)
cdef _count(list sets, dict needed, bytes data)
