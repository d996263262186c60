"""Emission scores of a token CRF for a batch of notes, without building per-token feature lists.

A token's emission (its attributes' state weights summed per label) splits into parts that a
FeatureExtractor defines per token *type* or per small key: its own strings, each window
offset's strings of the neighbour's type, its shape n-grams (per triple of compressed shapes),
its word bigrams (rare: only pairs the model knows) and its doc-family strings. Each distinct
list of strings is summed once into a row of a weight table; a note becomes one type id and one
doc-strings row per token, and the emissions of a batch are numpy gathers over those tables.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from deid_core.doc import Doc
from deid_core.engine.crf.features import FeatureExtractor
from deid_core.engine.crf.scorer import CrfWeights, Workspace, work_array
from deid_core.spans import Span

try:  # RowEmission.scaled_exp's gathers as a C loop, when its build is current (deid_core.compiled); else numpy
    from deid_core.engine.crf import _emissions_fast
except ImportError:
    _emissions_fast = None

_BITS = 21  # compressed-shape ids per field of a shape-triple key
_BLOCK = 2048  # tokens per block of table gathers (the block stays in cache)
_DENSE_SHAPES = 64  # shape-triple rows in a dense (id, id, id) table while there are at most this many shapes
_PAIRS = 1024  # initial capacity of the word-pair rows (doubled as needed)
_TINY = 1e-200  # a product row whose largest value is below this is recomputed from its summed scores


@dataclass
class EncodedNote:
    """One note as ids: per token its type and the row of its doc-family strings."""

    types: list[int]
    docs: list[int]
    generation: int


class Emissions:
    """One model's emission scores from its extractor's strings, as interned weight rows.

    Tables grow with the token types seen and are emptied when they pass `max_rows` types or rows
    (between batches only). They hold ~0.3 KB per type (docs/BENCHMARKS.md, round 11); a type's
    feature strings are built by the extractor without keeping them in its cache.
    """

    def __init__(self, weights: CrfWeights, extractor: FeatureExtractor, max_rows: int = 200_000) -> None:
        if extractor.known is None or extractor.as_bytes:
            raise ValueError("emission tables need an extractor filtering by the model's attributes, as text")
        self.weights = weights
        self.extractor = extractor
        self.offsets = [o for o, _ in extractor.offsets]
        self.width = max([1] + [abs(o) for o in self.offsets])  # padding types between notes
        self.max_rows = max_rows
        self.generation = 0
        self._reset()

    def _reset(self) -> None:
        self.generation += 1
        num_labels = len(self.weights.labels)
        self.vectors = np.zeros((1024, num_labels))  # summed weights of each interned list of strings
        self.exp_vectors = np.ones((1024, num_labels))  # exp(vectors - row_max)
        self.row_max = np.zeros(1024)
        self.rows: dict[tuple[str, ...], int] = {(): 0}  # row 0: nothing known (zero vector)
        self.row_keys: list[tuple[str, ...]] = [()]
        self.shapes: dict[str, int] = {"<S>": 0, "<E>": 1}  # compressed shape -> id
        self.shape_names = ["<S>", "<E>"]
        self.triples: dict[int, int] = {}  # shape-triple key -> row
        # the same as a dense table over (previous, own, next) shape ids, -1 where not yet known
        self.triple_table = np.full(_DENSE_SHAPES ** 3, -1, dtype=np.int64)
        # (previous type, type) key -> its index in pair_rows: the rows of its wb and wf strings (index 0 unused)
        self.pairs: dict[int, int] = {}
        self.pair_rows = np.zeros((_PAIRS, 2), dtype=np.int64)
        # per type id: own and window rows, compressed-shape id, bigram halves, lower-cased text.
        # Type 0 stands for the positions outside a note: the extractor's padding, '<S>' on the left.
        self.types: dict[str, int] = {}
        self.type_rows = np.zeros((1024, 1 + len(self.offsets)), dtype=np.int64)
        self.type_rows[0, 1:] = [self.row(self.extractor.pad[o]) for o in self.offsets]
        self.type_shape = np.zeros(1024, dtype=np.int64)
        self.type_left = np.zeros(1024, dtype=bool)
        self.type_right = np.zeros(1024, dtype=bool)
        self.type_left[0] = "<S>" in self.extractor.bigram_left
        self.type_low = ["<S>"]

    def row(self, strings: Sequence[str]) -> int:
        """The row holding the summed weights of these strings (unknown strings weigh nothing)."""
        key = tuple(strings)
        r = self.rows.get(key)
        if r is None:
            r = self.rows[key] = len(self.row_keys)
            self.row_keys.append(key)
            if r == len(self.vectors):
                self.vectors, self.exp_vectors, self.row_max = (
                    np.concatenate([x, np.full_like(x, fill)])
                    for x, fill in ((self.vectors, 0.0), (self.exp_vectors, 1.0), (self.row_max, 0.0)))
            ids = [i for i in map(self.weights.attributes.get, key) if i is not None]
            v = self.vectors[r] = self.weights.state[ids].sum(axis=0)
            self.row_max[r] = v.max()
            self.exp_vectors[r] = np.exp(v - self.row_max[r])
        return r

    def _type(self, token: str) -> int:
        t = self.types.get(token)
        if t is not None:  # a new type seen twice in one note
            return t
        e = self.extractor.build(token)  # not kept by the extractor: these tables hold what is needed
        t = self.types[token] = len(self.type_low)
        if t == len(self.type_rows):
            self.type_rows, self.type_shape, self.type_left, self.type_right = (
                np.concatenate([x, np.zeros_like(x)])
                for x in (self.type_rows, self.type_shape, self.type_left, self.type_right))
        self.type_rows[t] = [self.row(e.own), *(self.row(e.win[o]) for o in self.offsets)]
        shape = self.shapes.get(e.cshape)
        if shape is None:
            shape = self.shapes[e.cshape] = len(self.shape_names)
            self.shape_names.append(e.cshape)
        self.type_shape[t] = shape
        self.type_left[t], self.type_right[t] = e.bl, e.br
        self.type_low.append(e.low)
        return t

    def encode(self, doc: Doc, rule_spans: Sequence[Span]) -> EncodedNote:
        """The ids of one note (the per-note Python work; may raise for a bad note)."""
        toks = doc.tokens[0]
        types = list(map(self.types.get, toks))
        if None in types:
            types = [self._type(t) if i is None else i for t, i in zip(toks, types, strict=True)]
        extra = empty_lists(len(toks))
        # each type's lower-cased text (TypeEntry.low): no per-token lower()
        self.extractor.add_doc_features(doc, rule_spans, extra, pick(self.type_low, types))
        return EncodedNote(types, self.doc_rows(extra), self.generation)

    def doc_rows(self, extra: list[list[str]]) -> list[int]:
        """The row of each token's doc-family strings (see `doc_rows`)."""
        return doc_rows(extra, self.rows, self.row)

    def start_batch(self) -> None:
        """Empty the tables if they grew past max_rows (notes encoded before this are then stale)."""
        if max(len(self.row_keys), len(self.type_low), len(self.pairs)) > self.max_rows:
            self._reset()

    def scores(self, notes: Sequence[EncodedNote]) -> tuple[RowEmission, np.ndarray]:
        """(emission scores of every token of the notes, stacked; the notes' lengths)."""
        if any(n.generation != self.generation for n in notes):
            raise RuntimeError("notes encoded before the emission tables were emptied")
        pad = [0] * self.width
        ext = list(pad)  # type ids, with `width` padding types before, between and after the notes
        docs: list[int] = []
        for n in notes:
            ext.extend(n.types)
            ext.extend(pad)
            docs.extend(n.docs)
        lengths = np.array([len(n.types) for n in notes], dtype=np.int64)
        types = np.array(ext, dtype=np.int64)
        at = np.arange(len(docs)) + self.width * (1 + np.repeat(np.arange(len(notes)), lengths))  # in `types`
        dense = 3 + len(self.offsets)
        rows = np.empty((len(docs), dense + 2), dtype=np.int64)
        rows[:, 0] = self.type_rows[types[at], 0]
        rows[:, 1] = docs
        rows[:, 2] = self._shape_ngrams(types, at)
        for k, o in enumerate(self.offsets, start=1):
            rows[:, 2 + k] = self.type_rows[types[at + o], k]
        rows[:, dense], rows[:, dense + 1] = self._word_bigrams(types, at)  # mostly row 0
        return RowEmission(rows, self.vectors, self.exp_vectors, self.row_max, dense), lengths

    def _shape_ngrams(self, types: np.ndarray, at: np.ndarray) -> np.ndarray:
        """Per token: the row of its shape n-gram strings (one row per triple of compressed shapes)."""
        if not (self.extractor.shape_ngram and len(at)):
            return np.zeros(len(at), dtype=np.int64)
        shape = self.type_shape[types]
        prev = np.where(types[at - 1] == 0, 0, shape[at - 1])
        nxt = np.where(types[at + 1] == 0, 1, shape[at + 1])
        if len(self.shape_names) <= _DENSE_SHAPES:  # one gather; the triples not seen yet through the dict
            dense = (prev * _DENSE_SHAPES + shape[at]) * _DENSE_SHAPES + nxt
            rows = self.triple_table[dense]
            new = np.flatnonzero(rows < 0)
            if len(new):
                for d in np.unique(dense[new]).tolist():
                    a, rest = divmod(d, _DENSE_SHAPES ** 2)
                    self.triple_table[d] = self._triple((a << 2 * _BITS) | ((rest // _DENSE_SHAPES) << _BITS)
                                                        | (rest % _DENSE_SHAPES))
                rows[new] = self.triple_table[dense[new]]
            return rows
        keys, inverse = np.unique((prev << 2 * _BITS) | (shape[at] << _BITS) | nxt, return_inverse=True)
        get = self.triples.get
        return np.array([get(k) or self._triple(k) for k in keys.tolist()], dtype=np.int64)[inverse]

    def _word_bigrams(self, types: np.ndarray, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per token: the rows of its known word bigrams with the previous word (wb) and the next (wf)."""
        wb = np.zeros(len(at), dtype=np.int64)
        wf = np.zeros(len(at), dtype=np.int64)
        if not self.extractor.word_bigram:
            return wb, wf
        # pairs (previous word or <S>, word) whose halves both occur in bigrams the model knows
        pairs = np.flatnonzero(self.type_right[types[at]] & self.type_left[types[at - 1]])
        if not len(pairs):
            return wb, wf
        prev = types[at[pairs] - 1]
        keys, inverse = np.unique((prev << 32) | types[at[pairs]], return_inverse=True)
        get = self.pairs.get
        index = np.array([get(k) or self._pair(k) for k in keys.tolist()], dtype=np.int64)  # may grow pair_rows
        rows = self.pair_rows[index[inverse]]
        wb[pairs] = rows[:, 0]
        inside = prev != 0  # wf belongs to the previous token, when there is one
        wf[pairs[inside] - 1] = rows[inside, 1]
        return wb, wf

    def _pair(self, key: int) -> int:
        wb, wf = self.extractor.word_pair(self.type_low[key >> 32], self.type_low[key & 0xFFFFFFFF])
        k = self.pairs[key] = len(self.pairs) + 1
        if k == len(self.pair_rows):
            self.pair_rows = np.concatenate([self.pair_rows, np.zeros_like(self.pair_rows)])
        self.pair_rows[k] = (self.row([wb]) if wb else 0, self.row([wf]) if wf else 0)
        return k

    def _triple(self, key: int) -> int:
        r = self.triples.get(key)
        if r is not None:
            return r
        mask = (1 << _BITS) - 1
        names = tuple(self.shape_names[(key >> s) & mask] for s in (2 * _BITS, _BITS, 0))
        r = self.triples[key] = self.row(self.extractor.shape_ngrams(names))
        return r


def empty_lists(n: int) -> list[list[str]]:
    """n new empty lists."""
    return [[] for _ in range(n)]


def pick(values: list, ids: list[int]) -> list:
    """values[i] for each i of ids."""
    return [values[i] for i in ids]


def doc_rows(extra: list[list[str]], rows: dict[tuple[str, ...], int],
             row: Callable[[Sequence[str]], int]) -> list[int]:
    """The row of each token's doc-family strings: `rows` holds the known lists, `row` adds one. A token
    with the same strings as the one before it (three in four: the families mark ranges) reuses its row
    without a tuple and a lookup."""
    get = rows.get
    out: list[int] = []
    last: list[str] | None = None
    r = 0
    for x in extra:
        if x != last:
            r = get(tuple(x)) or row(x)
            last = x
        out.append(r)
    return out


class RowEmission:
    """A batch's emissions as row ids per token: E[t] = sum of vectors[rows[t, k]] over k (scorer.Emission).

    Columns from `dense` on are mostly row 0 (nothing) and are applied only where they are not.
    """

    def __init__(self, rows: np.ndarray, vectors: np.ndarray, exp_vectors: np.ndarray, row_max: np.ndarray,
                 dense: int) -> None:
        self.ids = rows
        self.vectors = vectors
        self.exp_vectors = exp_vectors
        self.row_max = row_max
        self.dense = dense

    def scaled_exp(self, order: np.ndarray, work: Workspace | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Products of the rows' exp(vector - row max): no exp per token. The products are the C loop of
        _emissions_fast when built, else numpy (`scaled_exp_numpy`, the reference): the same values."""
        if _emissions_fast is None:
            return self.scaled_exp_numpy(order, work)
        ids = np.ascontiguousarray(self.ids[order])
        ee = work_array(work, "ee", len(ids), self.vectors.shape[1])
        top = np.empty(len(ids))
        _emissions_fast.gather_product(self.exp_vectors, ids, self.dense, ee, top)
        return ee, self._shift(ids, ee, top)

    def scaled_exp_numpy(self, order: np.ndarray, work: Workspace | None = None) -> tuple[np.ndarray, np.ndarray]:
        """scaled_exp in numpy (the reference and the pure path): a cache-sized block at a time."""
        ids = self.ids[order]
        ee = work_array(work, "ee", len(ids), self.vectors.shape[1])
        buf = np.empty((min(_BLOCK, len(ids)), self.vectors.shape[1]))
        # Each row's sum, taken while its block is in cache: one matrix-vector product per block, where a
        # row maximum (a reduction over 36 values per row in numpy) cost ~a quarter of this function.
        # Every value is in [0, 1]: a row whose maximum is below _TINY sums to less than L * _TINY, and its
        # computed sum to less than (L + 1) * _TINY (L labels); rows above that bound are never tiny.
        top = np.empty(len(ids))
        ones = np.ones(self.vectors.shape[1])
        for a in range(0, len(ids), _BLOCK):
            block = ids[a:a + _BLOCK]
            out = ee[a:a + len(block)]
            np.take(self.exp_vectors, block[:, 0], axis=0, out=out)
            for k in range(1, self.dense):
                tmp = buf[: len(block)]
                np.take(self.exp_vectors, block[:, k], axis=0, out=tmp)
                out *= tmp
            for k in range(self.dense, ids.shape[1]):
                some = np.flatnonzero(block[:, k])
                out[some] *= self.exp_vectors[block[some, k]]
            np.matmul(out, ones, out=top[a:a + len(block)])
        return ee, self._shift(ids, ee, top)

    def _shift(self, ids: np.ndarray, ee: np.ndarray, top: np.ndarray) -> np.ndarray:
        """Each token's shift (its rows' maxima summed), after rescaling exactly the tiny product rows of ee
        in place; `top` holds each product row's sum (any summation order: it only picks candidates)."""
        shift = np.take(self.row_max, ids) @ np.ones(ids.shape[1])  # a product, not a reduction over 9 values
        tiny = np.flatnonzero(top < (ee.shape[1] + 1) * _TINY)  # candidates; then the rows whose maximum is
        tiny = tiny[ee[tiny].max(axis=1) < _TINY]  # below _TINY (row maxima on different labels): rescale exactly
        if len(tiny):
            e = self.vectors[ids[tiny]].sum(axis=1)
            shift[tiny] = e.max(axis=1)
            ee[tiny] = np.exp(e - shift[tiny, None])
        return shift

    def rows(self, tokens: np.ndarray) -> np.ndarray:
        """E[tokens]."""
        return self.vectors[self.ids[tokens]].sum(axis=1)

    def at(self, tokens: np.ndarray, labels: np.ndarray) -> np.ndarray:
        """E[tokens, labels]: one flat gather over the dense columns, summed by a matrix-vector product (a
        reduction over a few values per row is slow in numpy); the sparse columns only where they are not row 0."""
        width = self.vectors.shape[1]
        flat = self.vectors.reshape(-1)
        labels = np.asarray(labels)
        ids = self.ids[tokens]
        pos = ids[:, :self.dense] * width
        pos += labels[:, None]
        out = np.take(flat, pos) @ np.ones(self.dense)
        for k in range(self.dense, ids.shape[1]):
            some = np.flatnonzero(ids[:, k])
            out[some] += np.take(flat, ids[some, k] * width + labels[some])
        return out
