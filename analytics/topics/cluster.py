"""Topics of short texts, offline and deterministic: TF-IDF, LSA, spherical k-means (numpy only).

A document is a conversation's question and the tools the agent called to answer it. Its
features: the question's words (Unicode `\\w+`, normalised, function words and tokens with
digits dropped), the character 4-grams of those words (so "rembourser" meets
"remboursement", "Rechnung" meets "Rechnungen") and the tool names. Tools are the bridge
between languages: a German and a Spanish refund question share no word, but the agent
answers both with the same tool, and latent semantic analysis (a truncated SVD of the
TF-IDF matrix) maps words that co-occur with the same tools close together, so a question
whose turn called no tool still lands with its topic. k-means finds `K_FINE` fine clusters
(a topic split by language or wording), merged while their centroids are as close as
`MERGE_COSINE` (average linkage); every step has fixed seeds and sorted inputs, so the same documents give the same
topics, ids and labels.

>>> docs = [Doc(f"t{i}", q, tools) for i, (q, tools) in enumerate([
...     ("refund for my broken blender", ("lookup_order",)), ("I want a refund, item broken", ("lookup_order",)),
...     ("Rückerstattung bitte", ("lookup_order",)), ("where is my parcel", ("track_parcel",)),
...     ("parcel late, where is it", ("track_parcel",)), ("Wo ist mein Paket", ("track_parcel",))] * 3)]
>>> found = cluster(docs)
>>> sorted({found.assignment[f"t{i}"] for i in (0, 1, 2)}), sorted({found.assignment[f"t{i}"] for i in (3, 4, 5)})
([0], [1])
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from analytics.outcomes.lexicon import normalise
from analytics.topics.stopwords import STOPWORDS

_WORD = re.compile(r"\w+")
#: An identifier or a number: a run of word characters and `-_.@+/:#` holding a digit ("A-1043",
#: "INV-2037", "user4093@example.com", "3.5"); dropped whole, so its letters are no topic word.
_ID = re.compile(r"[\w\-.@+/:#]*\d[\w\-.@+/:#]*")
#: Character n-grams of this length, taken inside each word padded with `<` `>`.
NGRAM = 4
#: Weight of the tool features against the text's (each part l2-normalised first).
TOOL_WEIGHT = 0.8
#: Weight of the character n-grams against whole words.
NGRAM_WEIGHT = 0.6
#: A feature must occur in this many documents to count; one in more than this share is noise.
MIN_DF, MAX_DF_SHARE = 2, 0.5
#: LSA dimensions; fine k-means clusters; the centroid cosine at which two of them are one topic;
#: documents (distinct question and tools) the model is fitted on (the rest are projected).
DIMENSIONS, K_FINE, MERGE_COSINE = 48, 24, 0.15
FIT_SAMPLE = 20_000
SEED = 20_260_101
TOP_TERMS, TYPICAL = 8, 3


@dataclass(frozen=True)
class Doc:
    """One conversation: its key, its question, and the tools called in answer."""

    key: str
    text: str
    tools: tuple[str, ...] = ()


@dataclass(frozen=True)
class Topic:
    """A cluster: id (0 the largest), label (its top three terms), top terms, typical questions, size."""

    id: int
    label: str
    terms: tuple[str, ...]
    questions: tuple[str, ...]
    examples: tuple[str, ...]  # a key of each typical question's documents (the smallest)
    tools: tuple[str, ...]
    size: int


@dataclass
class Topics:
    topics: list[Topic] = field(default_factory=list)
    assignment: dict[str, int] = field(default_factory=dict)  # key -> topic id


def words(text: str) -> list[str]:
    """The topic words of `text`: normalised, no function words, no ids or numbers.

    >>> words("Où est mon colis ? La commande A-4411 n'est pas arrivée.")
    ['colis', 'commande', 'arrivee']
    """
    return [w for w in _WORD.findall(_ID.sub(" ", normalise(text))) if len(w) > 1 and w not in STOPWORDS
            and not any(ch.isdigit() for ch in w) and "_" not in w]


def _features(text: str, tools: tuple[str, ...]) -> Counter:
    found: Counter = Counter()
    for w in words(text):
        found["w:" + w] += 1
        padded = f"<{w}>"
        for i in range(len(padded) - NGRAM + 1):
            found["c:" + padded[i:i + NGRAM]] += 1
    for t in tools:
        found["t:" + t] += 1
    return found


class _Sparse:
    """A CSR-like matrix: rows' feature ids and values, with the products LSA needs."""

    def __init__(self, rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, shape: tuple[int, int]):
        order = np.lexsort((cols, rows))
        self.rows, self.cols, self.vals, self.shape = rows[order], cols[order], vals[order], shape

    def dot(self, dense: np.ndarray, transpose: bool = False) -> np.ndarray:
        """`self @ dense` (or `self.T @ dense`), in blocks of non-zeros."""
        out_index, in_index = (self.cols, self.rows) if transpose else (self.rows, self.cols)
        out = np.zeros((self.shape[1] if transpose else self.shape[0], dense.shape[1]), dtype=np.float64)
        step = max(1, 4_000_000 // max(1, dense.shape[1]))
        for start in range(0, len(self.vals), step):
            stop = start + step
            np.add.at(out, out_index[start:stop], dense[in_index[start:stop]] * self.vals[start:stop, None])
        return out


def _matrix(docs: list[tuple[str, tuple[str, ...]]], weights: np.ndarray) -> tuple[_Sparse, list[str], np.ndarray]:
    """TF-IDF rows (sublinear tf, smooth idf, feature groups weighted, rows l2-normalised); features; idf."""
    counted = [_features(t, tools) for t, tools in docs]
    df: Counter = Counter()
    for c, w in zip(counted, weights):
        for f in c:
            df[f] += w
    total = float(weights.sum())
    names = sorted(f for f, n in df.items() if n >= MIN_DF and (n <= MAX_DF_SHARE * total or f.startswith("t:")))
    index = {f: i for i, f in enumerate(names)}
    idf = np.array([np.log((1 + total) / (1 + df[f])) + 1 for f in names])
    group_weight = {"w": 1.0, "c": NGRAM_WEIGHT, "t": TOOL_WEIGHT}
    rows, cols, vals = [], [], []
    for r, c in enumerate(counted):
        kept = [(index[f], (1 + np.log(n)) * idf[index[f]], f[0]) for f, n in c.items() if f in index]
        for group in ("w", "c", "t"):
            part = [(i, v) for i, v, g in kept if g == group]
            norm = np.sqrt(sum(v * v for _, v in part)) or 1.0
            for i, v in part:
                rows.append(r)
                cols.append(i)
                vals.append(group_weight[group] * v / norm)
    rows_a, cols_a, vals_a = np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64), np.array(vals)
    row_norm = np.sqrt(np.bincount(rows_a, weights=vals_a * vals_a, minlength=len(docs)))
    vals_a = vals_a / np.where(row_norm[rows_a] > 0, row_norm[rows_a], 1.0)
    return _Sparse(rows_a, cols_a, vals_a, (len(docs), len(names))), names, idf


def _unit(x: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norm > 0, norm, 1.0)


def _lsa_basis(m: _Sparse, rank: int, rng: np.random.Generator) -> np.ndarray:
    """The top right singular vectors of `m` (features x rank), randomized SVD with two power iterations."""
    rank = max(1, min(rank, m.shape[0] - 1, m.shape[1]))
    q, _ = np.linalg.qr(m.dot(rng.standard_normal((m.shape[1], rank + 8))))
    for _ in range(2):
        q, _ = np.linalg.qr(m.dot(m.dot(q, transpose=True)))
    b = m.dot(q, transpose=True).T  # (rank+8) x features
    _, _, vt = np.linalg.svd(b, full_matrices=False)
    basis = vt[:rank].T
    # A singular vector's sign is arbitrary: fix it (largest entry positive) so reruns agree.
    signs = np.sign(basis[np.argmax(np.abs(basis), axis=0), np.arange(basis.shape[1])])
    return basis * np.where(signs == 0, 1.0, signs)


def _kmeans(x: np.ndarray, w: np.ndarray, k: int, rng: np.random.Generator, rounds: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """Weighted spherical k-means (cosine), k-means++ start: (centroids, labels)."""
    first = int(np.argmax(w))  # (deterministic: the most frequent document)
    centres = [x[first]]
    best = 1.0 - x @ x[first]
    for _ in range(1, k):
        p = np.clip(best, 0, None) ** 2 * w
        if p.sum() <= 0:
            break
        nxt = int(rng.choice(len(x), p=p / p.sum()))
        centres.append(x[nxt])
        best = np.minimum(best, 1.0 - x @ x[nxt])
    c = np.array(centres)
    labels = np.full(len(x), -1)
    for _ in range(rounds):
        new = np.argmax(x @ c.T, axis=1)
        if np.array_equal(new, labels):
            break
        labels = new
        sums = np.zeros_like(c)
        np.add.at(sums, labels, x * w[:, None])
        c = _unit(np.where(np.linalg.norm(sums, axis=1, keepdims=True) > 0, sums, c))
    return c, labels


def _merge(centres: np.ndarray, sizes: np.ndarray, threshold: float) -> np.ndarray:
    """Average-linkage merging of k-means centroids: the two closest groups (cosine of their
    size-weighted mean directions) join while that cosine is at least `threshold`; the group of each centroid."""
    groups = [[j] for j in range(len(centres))]
    sums = [centres[j] * sizes[j] for j in range(len(centres))]
    while len(groups) > 1:
        unit = _unit(np.array(sums))
        sim = unit @ unit.T
        np.fill_diagonal(sim, -np.inf)
        a, b = sorted(np.unravel_index(int(np.argmax(sim)), sim.shape))
        if sim[a, b] < threshold:
            break
        groups[a] += groups.pop(b)
        sums[a] = sums[a] + sums.pop(b)
    out = np.zeros(len(centres), dtype=int)
    for g, members in enumerate(groups):
        out[members] = g
    return out


def _stable_order(items: list[tuple[str, tuple[str, ...]]]) -> list[int]:
    """Indexes of `items` in an order that depends on their content only (a hash: a fair sample)."""
    keyed = [(hashlib.blake2b(f"{t}\x00{','.join(tools)}".encode(), digest_size=8).digest(), t, tools, i)
             for i, (t, tools) in enumerate(items)]
    return [i for *_, i in sorted(keyed)]


def cluster(docs: list[Doc], k: int | None = None) -> Topics:
    """The topics of `docs` (k: exactly k k-means clusters, not merged; None: fine clusters merged)."""
    if not docs:
        return Topics()
    counts = Counter((d.text, tuple(sorted(set(d.tools)))) for d in docs)
    unique = sorted(counts)
    weights = np.array([counts[u] for u in unique], dtype=np.float64)
    if len(unique) < 2:
        return _finish(docs, unique, np.zeros(len(unique), dtype=int), weights, None, [])
    rng = np.random.default_rng(SEED)
    order = _stable_order(unique)
    fit = sorted(order[:FIT_SAMPLE])
    m_fit, names, idf = _matrix([unique[i] for i in fit], weights[fit])
    if m_fit.shape[1] == 0:
        return _finish(docs, unique, np.zeros(len(unique), dtype=int), weights, None, [])
    basis = _lsa_basis(m_fit, DIMENSIONS, rng)
    x_fit = _unit(m_fit.dot(basis))
    w_fit = weights[fit]
    k_fine = k or min(K_FINE, int(np.ceil(np.sqrt(len(fit)))))  # (a few documents: a few fine clusters)
    fine, fine_labels = _kmeans(x_fit, w_fit, max(1, min(k_fine, len(fit))), np.random.default_rng(SEED))
    sizes = np.bincount(fine_labels, weights=w_fit, minlength=len(fine))
    group = _merge(fine, sizes, MERGE_COSINE if k is None else np.inf)
    centres = np.zeros((group.max() + 1, fine.shape[1]))
    np.add.at(centres, group, fine * sizes[:, None])
    centres = _unit(centres)
    if len(fit) == len(unique):
        x_all = x_fit
    else:
        m_all = _project(unique, names, idf)
        x_all = _unit(m_all.dot(basis))
    labels = np.argmax(x_all @ centres.T, axis=1)
    return _finish(docs, unique, labels, weights, x_all @ centres.T, names)


def _project(unique, names, idf) -> _Sparse:
    """TF-IDF rows of every unique document over the fitted features and idf."""
    index = {f: i for i, f in enumerate(names)}
    group_weight = {"w": 1.0, "c": NGRAM_WEIGHT, "t": TOOL_WEIGHT}
    rows, cols, vals = [], [], []
    for r, (t, tools) in enumerate(unique):
        kept = [(index[f], (1 + np.log(n)) * idf[index[f]], f[0]) for f, n in _features(t, tools).items() if f in index]
        for group in ("w", "c", "t"):
            part = [(i, v) for i, v, g in kept if g == group]
            norm = np.sqrt(sum(v * v for _, v in part)) or 1.0
            for i, v in part:
                rows.append(r)
                cols.append(i)
                vals.append(group_weight[group] * v / norm)
    return _Sparse(np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64), np.array(vals), (len(unique), len(names)))


def _finish(docs: list[Doc], unique: list, labels: np.ndarray, weights: np.ndarray, sims, names) -> Topics:
    """Topics with terms, typical questions, ids by size (then label) and every doc's id.

    A term's weight in a topic: the documents of the topic holding it times its idf over all
    documents, so a word every topic uses ("order", "bitte") does not name one."""
    first_key: dict[tuple, str] = {}
    for d in docs:
        u = (d.text, tuple(sorted(set(d.tools))))
        first_key[u] = min(first_key.get(u, d.key), d.key)
    df: Counter = Counter()
    for (text, _), w in zip(unique, weights):
        for term in set(words(text)):
            df[term] += w
    total = float(weights.sum())
    drafts = []
    for j in sorted(set(labels.tolist())):
        members = np.flatnonzero(labels == j)
        size = int(weights[members].sum())
        term_weight: Counter = Counter()
        tool_count: Counter = Counter()
        for i in members:
            text, tools = unique[i]
            for w in set(words(text)):
                term_weight[w] += weights[i]
            for t in tools:
                tool_count[t] += weights[i]
        # A term's share of the topic's documents over its share of all documents' (ties: alphabetical).
        scored = {t: n * np.log((1 + total) / (1 + df[t])) for t, n in term_weight.items()}
        terms = tuple(t for t, _ in sorted(scored.items(), key=lambda kv: (-round(kv[1], 9), kv[0]))[:TOP_TERMS])
        near = sorted(members, key=lambda i: (-(sims[i, j] if sims is not None else 0.0), -weights[i], unique[i][0]))
        questions: list[str] = []
        examples: list[str] = []
        seen: set[tuple[str, ...]] = set()
        for i in near:
            wording = tuple(words(unique[i][0]))  # (one question asked about two orders is one wording)
            if wording not in seen:
                seen.add(wording)
                questions.append(unique[i][0])
                examples.append(first_key[unique[i]])
            if len(questions) == TYPICAL:
                break
        label = ", ".join(terms[:3]) or "(no words)"
        tools = tuple(t for t, _ in sorted(tool_count.items(), key=lambda kv: (-kv[1], kv[0]))[:3])
        drafts.append((size, label, j, terms, tuple(questions), tuple(examples), tools))
    drafts.sort(key=lambda d: (-d[0], d[1], d[4]))
    topics, new_id = [], {}
    for tid, (size, label, j, terms, questions, examples, tools) in enumerate(drafts):
        new_id[j] = tid
        topics.append(Topic(tid, label, terms, questions, examples, tools, size))
    by_doc = {u: new_id[int(j)] for u, j in zip(unique, labels)}
    return Topics(topics, {d.key: by_doc[(d.text, tuple(sorted(set(d.tools))))] for d in docs})
