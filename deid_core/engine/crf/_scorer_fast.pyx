# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The CRF scorer's forward-backward as C loops over typed memoryviews (issue 15, form b).

The per-position matrix products call numpy's own BLAS (its cblas_dgemm, whose address scorer.py
hands to use_blas) directly, without a numpy call per position; without it, a C loop does them.

scorer.forward_backward uses this module when its build is current (deid_core.compiled), and its
numpy code (scorer._forward_backward_numpy) otherwise: the numpy code is the reference, and tests
check both give the same labels and marginals within 1e-9 on real notes. The numpy version makes
a few numpy calls per position of the batch (a matrix product, a product, sometimes a rescale),
whose call overhead is most of the scoring's cost; here one position of one note is a few C loops.
Same recurrences, same rescaling positions, so the same values up to floating-point summation order.
"""

from libc.math cimport log
from libc.stdint cimport int64_t
from libc.stdlib cimport free, malloc


# cblas_dgemm of an ILP64 OpenBLAS (numpy's scipy-openblas64): 64-bit sizes
ctypedef void (*dgemm_t)(int order, int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, double alpha,
                         const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
                         int64_t ldc) noexcept nogil
cdef dgemm_t _dgemm = NULL
cdef int _ROW_MAJOR = 101, _NO_TRANS = 111


def use_blas(size_t dgemm_address) -> None:
    """Do the products with this cblas_dgemm (an ILP64 OpenBLAS's; 0: the C loop)."""
    global _dgemm
    _dgemm = <dgemm_t> dgemm_address


def blas_in_use() -> bool:
    """Whether the products go to BLAS."""
    return _dgemm != NULL


cdef void _rows_times(const double* a, Py_ssize_t rows, const double* m, double* out, Py_ssize_t n,
                      Py_ssize_t step) noexcept nogil:
    """out = a @ m for `rows` rows of n values (m is (n, n)): BLAS, `step` rows per call (single-threaded), or C."""
    cdef Py_ssize_t i, r
    if _dgemm != NULL:
        i = 0
        while i < rows:
            r = min(step, rows - i)
            _dgemm(_ROW_MAJOR, _NO_TRANS, _NO_TRANS, r, n, n, 1.0, a + i * n, n, m, n, 0.0, out + i * n, n)
            i += r
        return
    for i in range(rows):
        _vecmat(a + i * n, m, out + i * n, n)


cdef inline void _vecmat(const double* x, const double* m, double* out, Py_ssize_t n) noexcept nogil:
    """out[j] = sum_i x[i] * m[i, j] for an (n, n) C-contiguous m (row by row: the inner loop vectorizes)."""
    cdef Py_ssize_t i, j
    cdef double xi
    for j in range(n):
        out[j] = 0.0
    for i in range(n):
        xi = x[i]
        for j in range(n):
            out[j] += xi * m[i * n + j]


cdef inline double _normalize(double* row, Py_ssize_t n) noexcept nogil:
    """Divide a row by its sum; the sum."""
    cdef Py_ssize_t j
    cdef double c = 0.0
    for j in range(n):
        c += row[j]
    for j in range(n):
        row[j] /= c
    return c


def forward_backward(const double[:, ::1] ee, const int64_t[::1] first, const int64_t[::1] active,
                     Py_ssize_t maxlen, const double[:, ::1] exp_trans, const double[:, ::1] back,
                     Py_ssize_t every, double[:, ::1] alpha, double[:, ::1] beta, double[::1] logc,
                     const int64_t[::1] ends, Py_ssize_t step) -> None:
    """scorer.forward_backward's passes: alpha becomes the unnormalized marginals, logc the log scale factors
    (`logc` zeroed by the caller; `back` = exp_trans.T, C-contiguous; `ends`: time-major rows of the notes' ends;
    `step`: rows per BLAS call)."""
    cdef Py_ssize_t n_labels = ee.shape[1]
    cdef Py_ssize_t s, r, j, f, k, p, f0, f1, k1, row
    cdef double c
    cdef double* tmp
    cdef double* t
    if ee.shape[0] == 0:
        return
    with nogil:
        for r in range(active[0]):
            for j in range(n_labels):
                alpha[r, j] = ee[r, j]
        for s in range(1, maxlen):
            f = first[s]
            k = active[s]
            p = first[s - 1]
            _rows_times(&alpha[p, 0], k, &exp_trans[0, 0], &alpha[f, 0], n_labels, step)
            for r in range(k):
                for j in range(n_labels):
                    alpha[f + r, j] *= ee[f + r, j]
                if s % every == 0:
                    logc[f + r] = log(_normalize(&alpha[f + r, 0], n_labels))
        for r in range(ends.shape[0]):
            row = ends[r]
            c = 0.0
            for j in range(n_labels):
                c += alpha[row, j]
            logc[row] += log(c)
        for r in range(ee.shape[0]):
            for j in range(n_labels):
                beta[r, j] = 1.0
        tmp = <double*> malloc(max(1, active[0]) * n_labels * sizeof(double))
        if tmp == NULL:
            with gil:
                raise MemoryError()
        for s in range(maxlen - 2, -1, -1):
            f1 = first[s + 1]
            k1 = active[s + 1]
            f0 = first[s]
            for r in range(k1):
                t = tmp + r * n_labels
                for j in range(n_labels):
                    t[j] = beta[f1 + r, j] * ee[f1 + r, j]
            _rows_times(tmp, k1, &back[0, 0], &beta[f0, 0], n_labels, step)
            if s % every == 0:
                for r in range(k1):
                    _normalize(&beta[f0 + r, 0], n_labels)
        free(tmp)
        for r in range(ee.shape[0]):
            for j in range(n_labels):
                alpha[r, j] *= beta[r, j]
