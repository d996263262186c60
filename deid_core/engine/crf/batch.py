"""A token CRF model's predictions for many notes at once with the numpy scorer (conf/crf.toml [tagging] scorer).

Per note, only the features become row ids (deid_core.engine.crf.emissions); emissions,
marginals and MAP paths are computed for chunks of notes of similar length, a bounded number
of tokens at a time. A note whose features fail is reported as that note's error; a chunk
whose scoring fails is scored again note by note, so only the failing note is lost.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from deid_core.doc import Doc
from deid_core.engine.crf.emissions import Emissions, EncodedNote
from deid_core.engine.crf.labels import recall_knob
from deid_core.engine.crf.scorer import CrfWeights, Decoded, Workspace, decode
from deid_core.spans import Span

log = logging.getLogger(__name__)

Prediction = tuple[list[str], list[float]]  # Viterbi tags (recall knob applied), per-token PHI marginal


def chunks(lengths: Sequence[int], max_tokens: int) -> list[list[int]]:
    """Note indices in chunks of similar length (longest first), each at most max_tokens tokens or one note."""
    out: list[list[int]] = []
    size = 0
    for i in sorted(range(len(lengths)), key=lambda i: -lengths[i]):
        if not out or size + lengths[i] > max_tokens:
            out.append([])
            size = 0
        out[-1].append(i)
        size += lengths[i]
    return out


# One position of the batched passes costs about as much as crfsuite scoring this many tokens of
# one note (measured, one core: a 52,500-token note alone 0.85-0.99 s batched, 0.73-0.78 s crfsuite).
STEP_COST = 1.2


def outliers(lengths: Sequence[int], max_tokens: int) -> set[int]:
    """Notes better scored by crfsuite, one by one: the batch's longest notes, as long as leaving
    them out saves more positions (each costing STEP_COST tokens) than their tokens; and any note
    longer than max_tokens (it would need memory for a chunk of its own)."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    best, cost, k, alone = 0, STEP_COST * (lengths[order[0]] if order else 0), 0, 0.0
    for k in range(len(order)):
        alone += lengths[order[k]]
        c = alone + STEP_COST * (lengths[order[k + 1]] if k + 1 < len(order) else 0)
        if c < cost:
            best, cost = k + 1, c
    return {i for i in order[:best]} | {i for i, n in enumerate(lengths) if n > max_tokens}


def _label(labels: list[str], k: int) -> str:
    """labels[k] for a label id decode computed (-1: not computed there; never a label from the end)."""
    if k < 0:
        raise RuntimeError("the best other label was not computed at a recall-knob token")
    return labels[k]


class BatchPredictor:
    """Numpy inference for one model: Viterbi tags and PHI marginals of many notes, as CrfModel.predict."""

    def __init__(self, weights: CrfWeights, emissions: Emissions, begin: str, max_tokens: int = 32_768) -> None:
        if "O" not in weights.labels:
            raise ValueError("the numpy CRF scorer needs a model with label O")
        self.weights = weights
        self.emissions = emissions
        self.begin = begin  # prefix of a tag the recall knob starts
        self.max_tokens = max_tokens
        self.other = weights.labels.index("O")
        self.work = Workspace()  # a chunk's big arrays, reused from chunk to chunk

    def predict_many(self, docs: Sequence[Doc], rules: Sequence[Sequence[Span]], threshold: float,
                     marginals: bool, gates: Sequence[Sequence[int]]) -> list[Prediction | Exception]:
        """Per note: (tags, phi) or the exception its features or scoring raised.

        phi is the PHI marginal of every token when `threshold` < 1 or `marginals`; else 1.0 on
        Viterbi PHI tokens and 0.0 elsewhere, with the marginal at the `gates` positions (as the
        crfsuite path computes them).
        """
        out: list[Prediction | Exception | None] = [None] * len(docs)
        encoded = self.encode_many(docs, rules, out)
        self.score_many(encoded, threshold, marginals, gates, out)
        return out  # type: ignore[return-value]

    def encode_many(self, docs: Sequence[Doc], rules: Sequence[Sequence[Span]],
                    out: list) -> dict[int, EncodedNote]:
        """Row ids of each note (the per-note Python work); a note that fails gets its exception in `out`."""
        self.emissions.start_batch()
        encoded: dict[int, EncodedNote] = {}
        for i, (doc, r) in enumerate(zip(docs, rules, strict=True)):
            try:
                encoded[i] = self.emissions.encode(doc, r)
            except Exception as exc:  # noqa: BLE001 - fail closed for this note only
                out[i] = exc
        return encoded

    def score_many(self, encoded: dict[int, EncodedNote], threshold: float, marginals: bool,
                   gates: Sequence[Sequence[int]], out: list) -> None:
        """Predictions of the encoded notes into `out`, a chunk of similar-length notes at a time."""
        todo = sorted(encoded)
        for chunk in chunks([len(encoded[i].types) for i in todo], self.max_tokens):
            idx = [todo[k] for k in chunk]
            try:
                self._score(idx, encoded, threshold, marginals, gates, out)
            except Exception as exc:  # noqa: BLE001 - find the failing note: score the chunk note by note
                # a scorer bug would otherwise show only as a slowdown (the notes' results are the same)
                log.warning("CRF scoring failed for a chunk of %d notes (%s); scoring them one by one",
                            len(idx), type(exc).__name__)
                for i in idx:
                    try:
                        self._score([i], encoded, threshold, marginals, gates, out)
                    except Exception as exc:  # noqa: BLE001 - fail closed for this note only
                        out[i] = exc

    def _score(self, idx: list[int], encoded: dict[int, EncodedNote], threshold: float, marginals: bool,
               gates: Sequence[Sequence[int]], out: list) -> None:
        emission, lengths = self.emissions.scores([encoded[i] for i in idx])
        dec = decode(emission, lengths, self.weights.trans, self.other, self.work, threshold)
        bounds = np.concatenate(([0], np.cumsum(lengths))).tolist()
        if threshold >= 1.0 and not marginals:
            for k, i in enumerate(idx):
                out[i] = self._note(dec, bounds[k], bounds[k + 1], gates[i])
            return
        # the whole chunk's tags, PHI marginals and recall-knob positions at once, then cut per note
        labels = self.weights.labels
        tags = list(map(labels.__getitem__, dec.path.tolist()))
        phi = (1.0 - dec.p_o).tolist()
        knob = dec.knob_tokens  # decode's: MAP label O and a PHI marginal above the threshold
        cut = np.searchsorted(knob, bounds).tolist()
        knob = knob.tolist()
        best = dec.best_other
        for k, i in enumerate(idx):
            a, b = bounds[k], bounds[k + 1]
            note_tags = tags[a:b]
            if cut[k] < cut[k + 1]:  # most notes: no token for the knob
                recall_knob(note_tags, [j - a for j in knob[cut[k]:cut[k + 1]]],
                            lambda j, a=a: _label(labels, best[a + j]), self.begin)
            out[i] = note_tags, phi[a:b]

    def _note(self, dec: Decoded, a: int, b: int, gate: Sequence[int]) -> Prediction:
        """Tags of one note without the recall knob; phi 1.0 on PHI tags, else 0.0, but the marginal at `gate`."""
        labels = self.weights.labels
        path = dec.path[a:b]
        tags = [labels[k] for k in path.tolist()]
        phi = (path != self.other).astype(float)
        phi[list(gate)] = 1.0 - dec.p_o[a:b][list(gate)]
        return tags, phi.tolist()
