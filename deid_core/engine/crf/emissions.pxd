# Cython declarations for emissions.py (pure Python mode: the .py runs unchanged without Cython).
import cython

cpdef list empty_lists(Py_ssize_t n)

cpdef list pick(list values, list ids)

@cython.locals(out=list, x=list, last=list)
cpdef list doc_rows(list extra, dict rows, object row)
