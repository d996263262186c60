"""CRF inference for many notes at once in numpy: a crfsuite model's exact weights, marginals and MAP path.

crfsuite scores a label sequence y of a note as sum_t (E[t, y_t] + T[y_{t-1}, y_t]) (no BOS/EOS
transitions), where the emission E[t, l] sums the weights of the token's attributes for label l
(every attribute value is 1.0 here). The scorer reads the weights from the model file itself
(`Tagger.info()` prints them rounded to 6 decimals) and checks them against that dump.

Decoding: forward-backward (scaled, in probability space: one small matrix product per position
across every note of a batch) gives the marginals P[t, l] and log Z; the posterior-argmax path
ŷ is then certified as the MAP path: the MAP path y* has P[t, y*_t] >= P(y*) >= P(ŷ) at every
t, so labels whose marginal is below P(ŷ) are never on it. Where exactly one label per token
passes (every PhysioNet note: P(ŷ) > 0.66), y* = ŷ; elsewhere a Viterbi restricted to the
passing labels runs on the runs of undecided tokens.
"""

from __future__ import annotations

import struct
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

try:  # C loops of forward_backward, when their build is current (deid_core.compiled); else the numpy reference
    from deid_core.engine.crf import _scorer_fast
except ImportError:
    _scorer_fast = None


def _numpy_dgemm() -> int:
    """The address of numpy's own BLAS cblas_dgemm when it is the ILP64 scipy-openblas numpy's wheels
    bundle (the products _scorer_fast does per position then cost what numpy's cost, minus its call
    overhead); 0 otherwise (another BLAS: _scorer_fast's C loop)."""
    import ctypes
    import glob
    import os

    libs = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    for path in sorted(glob.glob(os.path.join(libs, "libscipy_openblas64_*.so"))):
        try:
            return ctypes.cast(ctypes.CDLL(path).scipy_cblas_dgemm64_, ctypes.c_void_p).value or 0
        except (OSError, AttributeError):
            continue
    return 0


if _scorer_fast is not None:
    _scorer_fast.use_blas(_numpy_dgemm())

_FEATURE = np.dtype([("type", "<u4"), ("src", "<u4"), ("dst", "<u4"), ("weight", "<f8")])
_STATE, _TRANSITION = 0, 1
_DUMP_ROUNDING = 5e-7 + 1e-12  # Tagger.info() prints weights with %f
_BLAS_MACS = 400_000  # multiply-adds per matrix product call (OpenBLAS goes multi-threaded past ~2^19)


@dataclass(frozen=True)
class CrfWeights:
    """A first-order crfsuite model: labels, attribute ids, state weights W[attr, label], transitions T."""

    labels: list[str]
    attributes: dict[str, int]
    state: np.ndarray  # (num_attributes, num_labels) float64
    trans: np.ndarray  # (num_labels, num_labels) float64: from -> to

    def with_domain(self, domain: str) -> CrfWeights:
        """EasyAdapt at tagging time: attribute a scores as a plus its copy `domain|a` (either may be absent)."""
        pre = domain + "|"
        names = sorted({a[len(pre):] if a.startswith(pre) else a for a in self.attributes})
        state = np.zeros((len(names), len(self.labels)))
        for i, a in enumerate(names):
            for key in (a, pre + a):
                j = self.attributes.get(key)
                if j is not None:
                    state[i] += self.state[j]
        return CrfWeights(self.labels, {a: i for i, a in enumerate(names)}, state, self.trans)


def read_weights(path: str | Path) -> CrfWeights:
    """The exact weights of a crfsuite CRF1d model file, checked against python-crfsuite's own dump."""
    import pycrfsuite

    buf = Path(path).read_bytes()
    if buf[:4] != b"lCRF" or buf[8:12] != b"FOMC":
        raise ValueError(f"{path}: not a crfsuite first-order CRF model")
    off_features = struct.unpack_from("<I", buf, 28)[0]
    chunk, _, num = struct.unpack_from("<4sII", buf, off_features)
    if chunk != b"FEAT":
        raise ValueError(f"{path}: crfsuite feature chunk not found")
    feats = np.frombuffer(buf, dtype=_FEATURE, count=num, offset=off_features + 12)
    tagger = pycrfsuite.Tagger()
    tagger.open(str(path))
    info = tagger.info()
    labels = list(tagger.labels())
    lid = {k: int(v) for k, v in info.labels.items()}
    aid = {k: int(v) for k, v in info.attributes.items()}
    if [lid.get(x) for x in labels] != list(range(len(labels))):
        raise ValueError(f"{path}: label ids disagree with crfsuite's label order")
    state = np.zeros((len(aid), len(labels)))
    trans = np.zeros((len(labels), len(labels)))
    s = feats[feats["type"] == _STATE]
    t = feats[feats["type"] == _TRANSITION]
    state[s["src"], s["dst"]] = s["weight"]
    trans[t["src"], t["dst"]] = t["weight"]
    _check_dump(path, info, state, trans, aid, lid, len(s), len(t))
    return CrfWeights(labels, aid, state, trans)


def _check_dump(path, info, state, trans, aid, lid, n_state: int, n_trans: int) -> None:
    """The binary weights must be crfsuite's dump, up to its 6-decimal rounding (same features, same ids)."""
    ok = n_state == len(info.state_features) and n_trans == len(info.transitions)
    for table, ids, matrix in ((info.state_features, aid, state), (info.transitions, lid, trans)):
        if ok and table:
            keys, w = zip(*table.items(), strict=True)
            got = matrix[[ids[a] for a, _ in keys], [lid[b] for _, b in keys]]
            ok = bool(np.all(np.abs(got - np.asarray(w, dtype=float)) <= _DUMP_ROUNDING))
    if not ok:
        raise ValueError(f"{path}: weights read from the model file disagree with crfsuite's dump")


@dataclass
class Decoded:
    """Per token of a batch (notes concatenated): MAP label id, P(label O) and the most probable other label."""

    path: np.ndarray  # (N,) int
    p_o: np.ndarray  # (N,) float64
    # (N,) int: argmax of the marginals over labels other than O (first on ties); with decode's `knob`,
    # only at the tokens the recall knob reads (MAP label O, 1 - P(O) > knob), -1 elsewhere
    best_other: np.ndarray
    knob_tokens: np.ndarray | None = None  # with decode's `knob`: those tokens, in order


class TimeMajor:
    """Rows of a batch reordered position by position: notes sorted longest first, so the notes still
    running at position s are a prefix of that order and each step works on one contiguous block."""

    def __init__(self, lengths: np.ndarray) -> None:
        lengths = np.asarray(lengths, dtype=np.int64)
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        order = np.argsort(-lengths, kind="stable")
        maxlen = int(lengths.max(initial=0))
        # active[s]: notes longer than s; first[s]: time-major row of the first of them at position s
        self.active = np.cumsum(np.bincount(lengths, minlength=maxlen + 1)[::-1])[::-1][1:]
        self.first = np.concatenate(([0], np.cumsum(self.active)[:-1]))
        pos = np.repeat(np.arange(maxlen), self.active)
        lane = np.arange(len(pos)) - self.first[pos]
        self.rows = starts[order[lane]] + pos  # time-major row -> note-major row
        self.maxlen = maxlen

    def ends(self) -> np.ndarray:
        """Time-major rows of each note's last token."""
        stop = np.flatnonzero(np.diff(np.r_[self.active, 0]))  # positions where some notes end
        return np.concatenate([np.arange(self.first[s] + self.active[s + 1] if s + 1 < self.maxlen else self.first[s],
                                         self.first[s] + self.active[s]) for s in stop]) if len(stop) else stop


class Workspace:
    """Reusable buffers for a batch's (tokens x labels) arrays, one set per thread.

    A fresh ~10 MB array per chunk is fresh pages from the OS each time (the allocator hands large
    blocks back): their page faults cost about a quarter of the scoring (measured, docs/BENCHMARKS.md
    round 10). Every element of a buffer handed out is written before it is read.
    """

    def __init__(self) -> None:
        self._local = threading.local()

    def array(self, name: str, rows: int, cols: int, dtype: type = np.float64) -> np.ndarray:
        """An uninitialized C-contiguous (rows, cols) array of this thread's buffer `name` (grown as needed)."""
        bufs = self._local.__dict__.setdefault("bufs", {})
        buf = bufs.get(name)
        if buf is None or len(buf) < rows or buf.shape[1:] != (cols,) or buf.dtype != dtype:
            buf = bufs[name] = np.empty((max(rows, 1), cols), dtype=dtype)
        return buf[:rows]


def work_array(work: Workspace | None, name: str, rows: int, cols: int, dtype: type = np.float64) -> np.ndarray:
    """work.array(...), or a new array without a workspace."""
    return np.empty((rows, cols), dtype=dtype) if work is None else work.array(name, rows, cols, dtype)


class Emission(Protocol):
    """A batch's emission scores E (the notes' tokens stacked, note-major), however they are stored."""

    def scaled_exp(self, order: np.ndarray, work: Workspace | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(exp(E[order] - shift[:, None]), shift): rows in `order`, each scaled so nothing over- or underflows
        (the first array may be `work`'s buffer "ee")."""

    def rows(self, tokens: np.ndarray) -> np.ndarray:
        """E[tokens] (every label)."""

    def at(self, tokens: np.ndarray, labels: np.ndarray) -> np.ndarray:
        """E[tokens, labels] (one label per token)."""


class DenseEmission:
    """Emission scores held as one matrix."""

    def __init__(self, scores: np.ndarray) -> None:
        self.scores = np.asarray(scores, dtype=float)

    def scaled_exp(self, order: np.ndarray, work: Workspace | None = None) -> tuple[np.ndarray, np.ndarray]:
        """See Emission."""
        e = self.scores[order]
        shift = e.max(axis=1) if len(e) else np.zeros(0)
        e -= shift[:, None]
        return np.exp(e, out=e), shift

    def rows(self, tokens: np.ndarray) -> np.ndarray:
        """See Emission."""
        return self.scores[tokens]

    def at(self, tokens: np.ndarray, labels: np.ndarray) -> np.ndarray:
        """See Emission."""
        return self.scores[tokens, labels]


def _rescale_every(trans: np.ndarray) -> int:
    """Positions between rescalings: one position multiplies a row's sum by at most L * max exp(T) and at
    least min exp(T), so rows rescaled this often neither over- nor underflow."""
    spread = np.log(len(trans)) + float(np.abs(trans).max()) + 1.0
    return int(min(16, max(1, 300 // spread)))


def forward_backward(ee: np.ndarray, tm: TimeMajor, trans: np.ndarray,
                     work: Workspace | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Unnormalized marginals (time-major; divide each row by its sum) and per-row log scale factors
    whose sum over a note is log Z minus the note's emission shifts. `ee`: exp of the time-major
    emissions, scaled per row.

    Rows are rescaled every `every` positions only (often enough that nothing over- or underflows).
    With `work`, the marginals are its buffer "alpha" (valid until its next use). The compiled C loops
    (_scorer_fast) when built, else the numpy reference (the same values up to summation order).
    """
    if _scorer_fast is None:
        return forward_backward_numpy(ee, tm, trans, work)
    n = len(ee)
    exp_trans = np.exp(trans)
    alpha = work_array(work, "alpha", n, ee.shape[1])
    beta = work_array(work, "beta", n, ee.shape[1])
    logc = np.zeros(n)
    if n == 0:
        return alpha, logc
    first, active = (np.ascontiguousarray(x, dtype=np.int64) for x in (tm.first, tm.active))
    _scorer_fast.forward_backward(np.ascontiguousarray(ee), first, active, tm.maxlen, exp_trans,
                                  np.ascontiguousarray(exp_trans.T), _rescale_every(trans), alpha, beta, logc,
                                  np.ascontiguousarray(tm.ends(), dtype=np.int64),
                                  max(16, _BLAS_MACS // (len(trans) * len(trans))))
    return alpha, logc


def forward_backward_numpy(ee: np.ndarray, tm: TimeMajor, trans: np.ndarray,
                           work: Workspace | None = None) -> tuple[np.ndarray, np.ndarray]:
    """forward_backward in numpy (a few calls per position): the reference and the pure-Python path."""
    n = len(ee)
    exp_trans = np.exp(trans)
    alpha = work_array(work, "alpha", n, ee.shape[1])
    beta = work_array(work, "beta", n, ee.shape[1])
    beta.fill(1.0)
    logc = np.zeros(n)
    if n == 0:
        return alpha, logc
    every = _rescale_every(trans)
    # position s: rows first[s]..first[s] + active[s]; position s - 1's first active[s] rows continue at s
    first, active = tm.first.tolist(), tm.active.tolist()
    one_call = max(16, _BLAS_MACS // (len(trans) * len(trans)))  # rows a single-threaded product takes
    matmul, multiply = np.matmul, np.multiply
    alpha[:active[0]] = ee[:active[0]]
    for s in range(1, tm.maxlen):
        f, k, p = first[s], active[s], first[s - 1]
        a = alpha[f:f + k]
        if k <= one_call:
            matmul(alpha[p:p + k], exp_trans, out=a)
        else:
            _matmul(alpha[p:p + k], exp_trans, a)
        multiply(a, ee[f:f + k], out=a)
        if s % every == 0:
            c = a.sum(axis=1)
            a /= c[:, None]
            logc[f:f + k] = np.log(c)
    ends = tm.ends()
    logc[ends] += np.log(alpha[ends].sum(axis=1))
    back = np.ascontiguousarray(exp_trans.T)
    tmp = np.empty((active[0], ee.shape[1]))
    for s in range(tm.maxlen - 2, -1, -1):
        f1, k1 = first[s + 1], active[s + 1]
        t = tmp[:k1]
        multiply(beta[f1:f1 + k1], ee[f1:f1 + k1], out=t)
        b = beta[first[s]:first[s] + k1]  # the rows of position s that continue at s + 1
        if k1 <= one_call:
            matmul(t, back, out=b)
        else:
            _matmul(t, back, b)
        if s % every == 0:
            b /= b.sum(axis=1, keepdims=True)
    alpha *= beta
    return alpha, logc


def _matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """out = a @ b, a block of rows at a time: OpenBLAS runs a product of more than ~2^19 multiply-adds
    on several threads, which only costs CPU time here (and oversubscribes a Spark worker's cores)."""
    step = max(16, _BLAS_MACS // (b.shape[0] * b.shape[1]))
    if len(a) <= step:
        np.matmul(a, b, out=out)
        return
    for i in range(0, len(a), step):
        np.matmul(a[i:i + step], b, out=out[i:i + step])


def decode(emission: Emission, lengths: np.ndarray, trans: np.ndarray, other: int = 0,
           work: Workspace | None = None, knob: float | None = None) -> Decoded:
    """MAP labels and marginals of every note of a batch (`lengths`: tokens per note, in emission order).

    `other`: the id of label O (excluded from `best_other`); `work`: buffers reused across calls;
    `knob`: `best_other` only where the recall knob at this threshold reads it (None: every token).
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    tm = TimeMajor(lengths)
    ee, shift = emission.scaled_exp(tm.rows, work)
    marg, logc = forward_backward(ee, tm, trans, work)
    del ee
    n = len(marg)
    arange = np.arange(n)
    total = marg.sum(axis=1)
    path_tm = marg.argmax(axis=1)
    p_o_tm = marg[:, other] / total
    rest_tm = 1.0 - marg[arange, path_tm] / total  # probability mass outside the argmax label
    path, p_o, rest, logs = (np.empty_like(x) for x in (path_tm, p_o_tm, rest_tm, logc))
    for out, x in ((path, path_tm), (p_o, p_o_tm), (rest, rest_tm), (logs, logc + shift)):
        out[tm.rows] = x
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    nonempty = starts[lengths > 0]
    first = np.zeros(n, dtype=bool)
    first[nonempty] = True
    last = np.zeros(n, dtype=bool)
    last[(starts + lengths - 1)[lengths > 0]] = True
    # log P(ŷ) of each note: its score (emissions along ŷ + transitions inside the note) - log Z
    step = emission.at(arange, path)
    step[1:] += np.where(first[1:], 0.0, trans[path[:-1], path[1:]])
    log_p = np.zeros(len(lengths))
    if len(nonempty):
        log_p[lengths > 0] = np.add.reduceat(step, nonempty) - np.add.reduceat(logs, nonempty)
    # Labels below half of P(ŷ) are not on the MAP path (the half absorbs rounding in log Z); a
    # token has a second candidate only if the mass outside its argmax label reaches that floor.
    floor = np.repeat(np.exp(log_p) * 0.5, lengths)
    maybe = np.flatnonzero(rest >= floor * (1 - 1e-9))
    inv = np.empty_like(tm.rows)  # note-major row -> time-major row
    inv[tm.rows] = arange
    if len(maybe):
        cand = marg[inv[maybe]] >= (floor[maybe] * total[inv[maybe]])[:, None]
        two = cand.sum(axis=1) > 1
        if two.any():
            restricted_viterbi(path, maybe[two], cand[two], emission, trans, first, last)
    if knob is None:
        at = arange
        best = np.empty_like(path)
    else:  # the recall knob's tokens (as batch.BatchPredictor applies it): a few per note
        at = np.flatnonzero(((1.0 - p_o) > knob) & (path == other))
        best = np.full_like(path, -1)
    best[at] = best_other(marg[inv[at]], other)
    return Decoded(path, p_o, best, None if knob is None else at)


def best_other(marg: np.ndarray, other: int) -> np.ndarray:
    """Per row of marginals, the label of the largest one other than `other` (the first on ties)."""
    if marg.shape[1] < 2:
        return np.zeros(len(marg), dtype=np.int64)
    if other == 0:  # the first maximum past column O (marginals are >= 0)
        return marg[:, 1:].argmax(axis=1) + 1
    masked = marg.copy()
    masked[:, other] = -1.0
    return masked.argmax(axis=1)


def restricted_viterbi(path: np.ndarray, tokens: np.ndarray, cand: np.ndarray, emission: Emission,
                       trans: np.ndarray, first: np.ndarray, last: np.ndarray) -> None:
    """Viterbi over the runs of undecided `tokens` (sorted), each limited to its `cand` labels.

    Decided tokens (one candidate, their label in `path`) split the chain, so each run is solved
    alone with the transition from its left neighbour's label and to its right neighbour's. Ties go
    to the lower label id at every step, as in crfsuite. Writes the runs' labels into `path`.
    """
    num = trans.shape[0]
    none, pad = num, num + 1  # "no neighbour" (transition 0) and padding (impossible)
    t_ext = np.full((num + 2, num + 2), -np.inf)
    t_ext[:num, :num] = trans
    t_ext[none, :num + 1] = 0.0
    t_ext[:num + 1, none] = 0.0
    brk = (np.diff(tokens) > 1) | first[tokens[1:]]
    run_start = tokens[np.r_[True, brk]]
    run_end = tokens[np.r_[brk, True]]
    runs = len(run_start)
    length = run_end - run_start + 1
    steps = int(length.max()) + 2  # + the two neighbours
    k = int(cand.sum(axis=1).max())
    labels = np.full((steps, runs, k), pad)
    emit = np.full((steps, runs, k), -np.inf)
    # right-aligned: each run ends at the last step; earlier steps repeat the left neighbour (a constant)
    offset = steps - 1 - length  # step of each run's first token
    left = np.where(first[run_start], none, path[np.maximum(run_start - 1, 0)])
    right = np.where(last[run_end], none, path[np.minimum(run_end + 1, len(path) - 1)])
    scores = emission.rows(tokens)
    row = 0
    for r in range(runs):
        labels[: offset[r], r, 0] = left[r]
        emit[: offset[r], r, 0] = 0.0
        for j in range(length[r]):
            ls = np.flatnonzero(cand[row])
            labels[offset[r] + j, r, : len(ls)] = ls
            emit[offset[r] + j, r, : len(ls)] = scores[row, ls]
            row += 1
    labels[-1, :, 0] = right
    emit[-1, :, 0] = 0.0
    delta = emit[0]
    back = np.zeros((steps, runs, k), dtype=np.int64)
    for s in range(1, steps):
        step = delta[:, :, None] + t_ext[labels[s - 1][:, :, None], labels[s][:, None, :]]
        back[s] = step.argmax(axis=1)
        delta = np.take_along_axis(step, back[s][:, None, :], axis=1)[:, 0, :] + emit[s]
    sel = np.zeros(runs, dtype=np.int64)
    for s in range(steps - 1, 0, -1):
        sel = back[s][np.arange(runs), sel]
        inside = s - 1 >= offset
        path[(run_start + (s - 1 - offset))[inside]] = labels[s - 1][np.arange(runs), sel][inside]
