"""Word clusters learned without labels from training text (nothing downloaded).

Each word of frequency >= min_count gets a vector of its left/right neighbour counts over the
most frequent context words, reduced by truncated SVD (log-scaled, row-normalised), then
k-means at several granularities (e.g. 32 and 256 clusters): coarse and fine cluster ids are
two features, a cheap stand-in for Brown-cluster path prefixes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from deid_core.text.tokenize import token_offsets


def _kmeans(x: np.ndarray, k: int, rng: np.random.Generator, iters: int = 25) -> np.ndarray:
    """Cluster index per row (k-means++ seeding, Lloyd iterations, cosine on unit rows)."""
    n = x.shape[0]
    k = min(k, n)
    centers = [x[rng.integers(n)]]
    d2 = np.full(n, np.inf)
    for _ in range(1, k):
        d2 = np.minimum(d2, ((x - centers[-1]) ** 2).sum(1))
        p = d2 / d2.sum() if d2.sum() > 0 else None
        centers.append(x[rng.choice(n, p=p)])
    c = np.stack(centers)
    assign = np.zeros(n, dtype=np.int64)
    for _ in range(iters):
        assign_new = (x @ c.T).argmax(1)
        if np.array_equal(assign_new, assign) and _ > 0:
            break
        assign = assign_new
        for j in range(k):
            m = assign == j
            if m.any():
                v = x[m].mean(0)
                c[j] = v / (np.linalg.norm(v) or 1.0)
    return assign


def train_clusters(
    texts: Iterable[str], *, min_count: int = 3, dims: int = 50, k: Iterable[int] = (32, 256),
    contexts: int = 1000, seed: int = 13,
) -> dict[str, tuple[str, ...]]:
    """word (lower-case) -> cluster ids, one per granularity in `k`."""
    seqs = [[t.lower() for t in token_offsets(text)[0]] for text in texts]
    freq = Counter(t for s in seqs for t in s)
    vocab = sorted(w for w, c in freq.items() if c >= min_count)
    if len(vocab) < 4:
        return {}
    ctx_words = [w for w, _ in freq.most_common(contexts)]
    cidx = {w: i for i, w in enumerate(ctx_words)}
    widx = {w: i for i, w in enumerate(vocab)}
    nc = len(ctx_words)
    m = np.zeros((len(vocab), 2 * nc), dtype=np.float32)
    for s in seqs:
        for i, w in enumerate(s):
            wi = widx.get(w)
            if wi is None:
                continue
            if i:
                ci = cidx.get(s[i - 1])
                if ci is not None:
                    m[wi, ci] += 1
            if i + 1 < len(s):
                ci = cidx.get(s[i + 1])
                if ci is not None:
                    m[wi, nc + ci] += 1
    m = np.log1p(m)
    m /= np.linalg.norm(m, axis=1, keepdims=True) + 1e-9
    u, sv, _ = np.linalg.svd(m, full_matrices=False)
    d = min(dims, u.shape[1])
    emb = u[:, :d] * sv[:d]
    emb /= np.linalg.norm(emb, axis=1, keepdims=True) + 1e-9
    rng = np.random.default_rng(seed)
    assigns = [_kmeans(emb, kk, rng) for kk in k]
    return {w: tuple(str(int(a[i])) for a in assigns) for i, w in enumerate(vocab)}


def save_clusters(clusters: dict[str, tuple[str, ...]], path: Path) -> None:
    """Write word<TAB>id<TAB>id... lines, sorted by word."""
    with open(path, "w", encoding="utf-8") as fh:
        for w in sorted(clusters):
            fh.write(w + "\t" + "\t".join(clusters[w]) + "\n")


def load_clusters(path: Path) -> dict[str, tuple[str, ...]]:
    """Read a clusters file written by save_clusters."""
    out: dict[str, tuple[str, ...]] = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 2:
                out[parts[0]] = tuple(parts[1:])
    return out
