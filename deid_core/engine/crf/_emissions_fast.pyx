# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""RowEmission.scaled_exp's gather-products as one C loop over typed memoryviews (issue 15, form b).

emissions.RowEmission.scaled_exp uses this module when its build is current (deid_core.compiled), and its
numpy code (emissions.scaled_exp_numpy) otherwise: the numpy code is the reference. Same multiplications in
the same order (column 0, then each dense column, then each sparse column where it is not row 0), so the
products are bit-identical; numpy copied whole rows with np.take into a buffer before multiplying (~40 %
of the scoring stage's instructions). The row sums only pick the candidates for the exact tiny-row test,
so their summation order does not change any output.
"""

from libc.stdint cimport int64_t


def gather_product(const double[:, ::1] vectors, const int64_t[:, ::1] ids, Py_ssize_t dense,
                   double[:, ::1] out, double[::1] top) -> None:
    """out[r] = product over k of vectors[ids[r, k]] (columns k >= dense only where not row 0); top[r] = sum(out[r])."""
    cdef Py_ssize_t r, k, j
    cdef Py_ssize_t n = ids.shape[0], m = ids.shape[1], width = vectors.shape[1]
    cdef Py_ssize_t rows = vectors.shape[0]
    cdef int64_t i
    cdef double s
    cdef double* o
    cdef const double* v
    if out.shape[0] < n or out.shape[1] != width or top.shape[0] < n or not 0 < dense <= m:
        raise ValueError("gather_product: shapes do not match")
    for r in range(n):  # fail closed on an id outside the table (numpy would raise IndexError)
        for k in range(m):
            if ids[r, k] < 0 or ids[r, k] >= rows:
                raise IndexError("gather_product: row id outside the table")
    with nogil:
        for r in range(n):
            o = &out[r, 0]
            v = &vectors[ids[r, 0], 0]
            for j in range(width):
                o[j] = v[j]
            for k in range(1, m):
                i = ids[r, k]
                if k >= dense and i == 0:
                    continue
                v = &vectors[i, 0]
                for j in range(width):
                    o[j] *= v[j]
            s = 0.0
            for j in range(width):
                s += o[j]
            top[r] = s
