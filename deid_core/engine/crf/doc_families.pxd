# Cython declarations for doc_families.py (pure Python mode: the .py runs unchanged without Cython).
# C integers for token indexes and loop counters, list / str for the containers the loops index;
# the functions keep their Python signatures (cpdef: callable from Python, registered by doc_family).
# The note's text stays `object`: Cython's `str` rejects str subclasses (numpy.str_) that Python accepts.
import cython

cpdef object _span_token_range(object ctx, object start, object end)

@cython.locals(starts=list, ends=list, toks=list, n=Py_ssize_t, i=Py_ssize_t, j=Py_ssize_t,
               k=Py_ssize_t, length=Py_ssize_t, tags=list, e=Py_ssize_t)
cpdef d_sentence(object ctx, list feats)

@cython.locals(tag=str, i=Py_ssize_t)
cpdef d_section(object ctx, list feats)

@cython.locals(starts=list, n=Py_ssize_t, last=Py_ssize_t, pos=Py_ssize_t, i=Py_ssize_t)
cpdef d_line(object ctx, list feats)

@cython.locals(out=dict, starts=list, i=Py_ssize_t, k=Py_ssize_t)
cpdef dict _attribute_names(object ctx)

@cython.locals(starts=list, ranges=list, stop=Py_ssize_t, i=Py_ssize_t, j=Py_ssize_t, k=Py_ssize_t, tag=str)
cpdef d_attribute(object ctx, list feats)

@cython.locals(n=Py_ssize_t, i=Py_ssize_t, lows=list, h=str)
cpdef d_metadata(object ctx, list feats)

@cython.locals(n=Py_ssize_t, i=Py_ssize_t, tag=str)
cpdef d_rule_hits(object ctx, list feats)

@cython.locals(tags=list, i=Py_ssize_t)
cpdef d_gazetteer(object ctx, list feats)
