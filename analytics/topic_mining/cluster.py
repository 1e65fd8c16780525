"""Topics of short texts, offline and deterministic: TF-IDF, LSA, spherical k-means (numpy only).

A document is a conversation's question and the tools the agent called to answer it. Its
features: the question's words (Unicode word rules, `tokens.py`: a grapheme cluster is never cut,
scripts without spaces cut into short terms; normalised, function words and tokens with
digits dropped), its concepts (`concepts.py`: "refund", "Rückerstattung", "remboursement"
and "reembolso" are one concept, so questions meet across languages without any tool; a
word naming a concept counts as the concept), the character 4-grams of its words (so
"rembourser" meets "remboursement", "Rechnung" meets "Rechnungen") and the tool names,
one signal among the text's: two subjects the agent answers with one tool stay two when
their words and concepts differ. Latent semantic analysis (a truncated SVD of the TF-IDF
matrix) maps features that co-occur close together. k-means finds up to `K_FINE` fine
clusters (a topic split by language or wording), merged while their centroids are as close
as `MERGE_COSINE` (average linkage); every step has fixed seeds and sorted inputs, and every
decision compares cosines rounded far above the BLAS kernels' rounding (`DECIDED_DECIMALS`), so
the same documents give the same topics, ids and labels on every machine.

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
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from analytics.conversation_outcomes.lexicon import normalise
from analytics.topic_mining.concepts import Concepts, built_in as built_in_concepts
from analytics.topic_mining import tokens
from analytics.topic_mining.stopwords import CONVERSATIONAL, STOPWORDS

#: An identifier or a number: a run of word characters and `-_.@+/:#` holding a digit ("A-1043",
#: "INV-2037", "user4093@example.com", "3.5"); dropped whole, so its letters are no topic word.
_ID = re.compile(r"[\w\-.@+/:#]*\d[\w\-.@+/:#]*")
#: Character n-grams of this length, taken inside each word padded with `<` at its start (`_features`).
NGRAM = 4
#: Weights of the feature groups against the words' (each group l2-normalised first): the tools,
#: one signal among the text's, not a trump (two subjects answered by one tool stay two); the
#: concepts (`concepts.py`), the bridge between languages and wordings; the character n-grams.
TOOL_WEIGHT, CONCEPT_WEIGHT, NGRAM_WEIGHT = 0.8, 1.5, 0.6
#: A tool called in more questions than the usual tool weighs less: `TOOL_WEIGHT` times
#: (its idf / the median of the documents' tool idfs) to this power, at most 1.
TOOL_IDF_POWER = 3
#: A feature must occur in this many documents to count; one in more than this share is noise.
MIN_DF, MAX_DF_SHARE = 2, 0.5
#: LSA dimensions; fine k-means clusters; the centroid cosine at which two of them are one topic;
#: documents (distinct question and tools) the model is fitted on (the rest are projected).
DIMENSIONS, K_FINE, MERGE_COSINE = 48, 24, 0.15
FIT_SAMPLE = 20_000
SEED = 20_260_101
TOP_TERMS, TYPICAL = 8, 3
#: A label is the top three terms when a topic has at least this many; else its most typical question.
MIN_LABEL_TERMS = 2


class Doc(NamedTuple):
    """One conversation: its key, its question, and the tools called in answer (a tuple: a load
    makes one per thread)."""

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
    """The topic words of `text`: normalised, no function words, no ids or numbers, nothing of
    a personal value (`without_personal`).

    >>> words("Où est mon colis ? La commande A-4411 n'est pas arrivée.")
    ['colis', 'commande', 'arrivee']
    >>> words("refund to alice.wonder@ent-mail.com please")
    ['refund']
    """
    return [w for w in tokens.terms(_ID.sub(" ", normalise(without_personal(text)))) if len(w) > 1
            and w not in STOPWORDS and not any(ch.isdigit() for ch in w) and "_" not in w]


#: An at sign, as written or escaped: a text without one holds no address, and the other built-in
#: kinds are digits (or hex groups), which `words` drops anyway.
_MAY_HOLD = re.compile(r"[@\uFF20\uFE6B]|%(?:25)*(?:40|EF)|&#|&(?:amp;)?commat|\\+[ux]", re.IGNORECASE)


def without_personal(text: str) -> str:
    """`text` with each personal value (masking's detector, its configured terms and patterns
    included) made a space. Topics are computed from the stored text and shown to masking
    sessions: an address's parts (`alice`, `wonder`) would become topic terms masking cannot
    recognise on their own.

    >>> without_personal("mail alice@ex.com now")
    'mail   now'
    """
    from analytics.masking import redactor
    from analytics.redact import find_personal_data

    config = redactor().config
    if not (config.terms or config.patterns or _MAY_HOLD.search(text)):
        return text
    for found in reversed(find_personal_data(text, config)):
        text = f"{text[:found.start]} {text[found.end:]}"
    return text


Item = tuple[tuple[str, ...], tuple[str, ...]]  # (a question's words, the tools): what the model sees


#: Feature groups by the first letter of a feature's name: words, n-grams, tools, concepts.
_GROUP = {"w": 0, "c": 1, "t": 2, "k": 3}


def _features(item: Item, concepts: Concepts, subject: bool = False) -> Counter:
    """A question's features: its words (a word naming a concept counts as the concept instead),
    the character n-grams of every word, its concepts and its tools; `subject`: without the words
    of conversation (`CONVERSATIONAL`: "help", "only", "keeps") and their n-grams, the features
    that say what is asked (`_said`).

    A word's n-grams start at its beginning (`<`) and never take its end (`>`): endings are
    grammar ("-ing", "-ate", "-ed"), and "opening hours" and "CE marking" would share "ing>"
    only; stems still meet ("rembourser" and "remboursement", "Rechnung" and "Rechnungen").

    >>> from analytics.topic_mining.concepts import built_in
    >>> sorted(_features((("help", "marking"), ()), built_in(), subject=True))
    ['c:<mar', 'c:arki', 'c:king', 'c:mark', 'c:rkin', 'w:marking']
    """
    wording, tools = item
    found: Counter = Counter()
    for w in wording:
        if subject and w in CONVERSATIONAL:
            continue
        if not concepts.of_word(w):
            found["w:" + w] += 1
        padded = ["<", *tokens.clusters(w)]  # (a letter with its marks is one character of an n-gram)
        for i in range(len(padded) - NGRAM + 1):
            found["c:" + "".join(padded[i:i + NGRAM])] += 1
    for c in concepts.concepts(list(wording)):
        found["k:" + c] += 1
    for t in tools:
        found["t:" + t] += 1
    return found


def _said(items: list[Item], enc: "_Encoded", idf: np.ndarray, concepts: Concepts) -> np.ndarray:
    """Whether each item has a feature the model keeps (`idf` not NaN) other than the words of
    conversation and their n-grams: a question that shares "help" and "only" and nothing else
    with the others says nothing they ask, and `_assign` puts it with the questions that share
    nothing, not with whichever question it shares "help" with."""
    kept = np.zeros(len(items), dtype=bool)
    np.logical_or.at(kept, enc.rows, ~np.isnan(idf[enc.cols]))
    index = {name: i for i, name in enumerate(enc.names)}
    for r in np.flatnonzero(kept):
        if any(w in CONVERSATIONAL for w in items[r][0]):
            kept[r] = any(f in index and not np.isnan(idf[index[f]]) for f in _features(items[r], concepts, subject=True))
    return kept


class _Sparse:
    """A sparse matrix as (row, column, value) triples, with the two products LSA needs."""

    def __init__(self, rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, shape: tuple[int, int]):
        self.rows, self.cols, self.vals, self.shape = rows, cols, vals, shape

    def dot(self, dense: np.ndarray, transpose: bool = False) -> np.ndarray:
        """`self @ dense` (or `self.T @ dense`): one weighted bincount per column of `dense`."""
        out_index, in_index = (self.cols, self.rows) if transpose else (self.rows, self.cols)
        size = self.shape[1] if transpose else self.shape[0]
        out = np.empty((size, dense.shape[1]))
        for j in range(dense.shape[1]):
            out[:, j] = np.bincount(out_index, weights=self.vals * dense[in_index, j], minlength=size)
        return out


@dataclass
class _Encoded:
    """Every item's raw feature counts as triples; feature names by id; each feature's group (`_GROUP`)."""

    rows: np.ndarray
    cols: np.ndarray
    counts: np.ndarray
    names: list[str]
    groups: np.ndarray
    items: int
    tools: np.ndarray  # (bool: a tool's feature)


def _encode(items: list[Item], concepts: Concepts) -> _Encoded:
    index: dict[str, int] = {}
    rows: list[int] = []
    cols: list[int] = []
    counts: list[int] = []
    for r, item in enumerate(items):
        for f, n in _features(item, concepts).items():
            rows.append(r)
            cols.append(index.setdefault(f, len(index)))
            counts.append(n)
    names = list(index)
    groups = np.array([_GROUP[f[0]] for f in names], dtype=np.int64)
    return _Encoded(np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64), np.array(counts, dtype=np.float64),
                    names, groups, len(items), np.array([f[0] == "t" for f in names], dtype=bool))


def _vocabulary(enc: _Encoded, fit: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Each feature's smooth idf over the items `fit` (a boolean mask), NaN for a feature not kept
    (in fewer than `MIN_DF` documents, or in more than `MAX_DF_SHARE` of them unless a tool)."""
    mask = fit[enc.rows]
    df = np.bincount(enc.cols[mask], weights=weights[enc.rows[mask]], minlength=len(enc.names))
    total = float(weights[fit].sum())
    kept = (df >= MIN_DF) & ((df <= MAX_DF_SHARE * total) | enc.tools)
    return np.where(kept, np.log((1 + total) / (1 + df)) + 1, np.nan)


def _tool_factors(enc: _Encoded, idf: np.ndarray, fit: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Each feature's factor on its group weight: 1, or for a tool `(idf / median) ** TOOL_IDF_POWER`
    at most 1, the median taken over the fitted documents' tool features (a shared tool, one
    that answers two subjects, is called more often than the usual tool: it says less)."""
    factors = np.ones(len(enc.names))
    tools = enc.tools & ~np.isnan(idf)
    mask = fit[enc.rows] & tools[enc.cols]
    if mask.any():
        values, w = idf[enc.cols[mask]], weights[enc.rows[mask]]
        order = np.argsort(values, kind="stable")
        cumulative = np.cumsum(w[order])
        median = values[order][int(np.searchsorted(cumulative, cumulative[-1] / 2))]
        factors[tools] = np.minimum(1.0, idf[tools] / median) ** TOOL_IDF_POWER
    return factors


def _tfidf(enc: _Encoded, idf: np.ndarray, factors: np.ndarray, take: np.ndarray | None = None) -> _Sparse:
    """TF-IDF rows of the items `take` (indexes; None: all), renumbered from 0: sublinear tf, each
    feature group l2-normalised and weighted (times each feature's `factors`), rows l2-normalised;
    features without an idf left out."""
    new_row = np.arange(enc.items)
    if take is not None:
        new_row = np.full(enc.items, -1)
        new_row[take] = np.arange(len(take))
    keep = (new_row[enc.rows] >= 0) & ~np.isnan(idf[enc.cols])
    rows, cols = new_row[enc.rows[keep]], enc.cols[keep]
    vals = (1 + np.log(enc.counts[keep])) * idf[cols]
    groups = enc.groups[cols]
    cell = rows * 4 + groups
    norm = np.sqrt(np.bincount(cell, weights=vals * vals))
    vals = np.array([1.0, NGRAM_WEIGHT, TOOL_WEIGHT, CONCEPT_WEIGHT])[groups] * factors[cols] * vals / norm[cell]
    size = enc.items if take is None else len(take)
    row_norm = np.sqrt(np.bincount(rows, weights=vals * vals, minlength=size))
    return _Sparse(rows, cols, vals / np.where(row_norm[rows] > 0, row_norm[rows], 1.0), (size, len(enc.names)))


#: Cosines are compared at this many decimals. The BLAS kernel a CPU picks sums products in its own
#: order, so the same data gives cosines a few 1e-14 apart from one machine to another, and two
#: near-equal ones (a document as close to two centroids, or a cosine of 0 to every centroid) would
#: rank either way: rounded far above that noise, every machine takes the same decisions. A tie
#: left goes to the centroid k-means++ chose first; a cosine of 0 to all of them is no decision
#: at all (`_kmeans`, `_assign`).
DECIDED_DECIMALS = 9


def _decided(cosines: np.ndarray) -> np.ndarray:
    """`cosines` as the model compares them (`DECIDED_DECIMALS`).

    >>> _decided(np.array([0.3 + 1e-15, 0.3])).tolist()
    [0.3, 0.3]
    """
    return np.round(cosines, DECIDED_DECIMALS)


def _unit(x: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norm > 0, norm, 1.0)


#: An item whose TF-IDF row (unit length) keeps less than this norm in the LSA space has no
#: direction there: what is left is rounding, which differs from one machine to another.
PROJECTED_FLOOR = 1e-6


def _project(m: _Sparse, basis: np.ndarray) -> np.ndarray:
    """The unit LSA vectors of the rows of `m`; 0 for a row the space does not hold (`PROJECTED_FLOOR`)."""
    x = m.dot(basis)
    norm = np.linalg.norm(x, axis=1, keepdims=True)
    return np.where(norm >= PROJECTED_FLOOR, x / np.where(norm > 0, norm, 1.0), 0.0)


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
    """Weighted spherical k-means (cosine), k-means++ start: (centroids, labels).

    An item orthogonal to every centroid (its best cosine 0 or less: no feature in common) is in
    no cluster, label -1: a cosine of 0 to all of them says nothing, and taking the first would
    make a cluster of unrelated items whose centroid then joins topics by either's features."""
    first = int(np.argmax(w))  # (deterministic: the most frequent document)
    centres = [x[first]]
    best = 1.0 - _decided(x @ x[first])
    for _ in range(1, k):
        p = np.clip(best, 0, None) ** 2 * w
        if p.sum() <= 0:
            break
        nxt = int(rng.choice(len(x), p=p / p.sum()))
        centres.append(x[nxt])
        best = np.minimum(best, 1.0 - _decided(x @ x[nxt]))
    c = np.array(centres)
    labels = np.full(len(x), -2)  # (no label yet: the first round always counts)
    for _ in range(rounds):
        sims = _decided(x @ c.T)
        new = np.where(sims.max(axis=1) > 0, np.argmax(sims, axis=1), -1)
        if np.array_equal(new, labels):
            break
        labels = new
        sums = np.zeros_like(c)
        placed = labels >= 0
        np.add.at(sums, labels[placed], x[placed] * w[placed, None])
        c = _unit(np.where(np.linalg.norm(sums, axis=1, keepdims=True) > 0, sums, c))
    return c, labels


def _merge(centres: np.ndarray, sizes: np.ndarray, threshold: float) -> np.ndarray:
    """Average-linkage merging of k-means centroids: the two closest groups (cosine of their
    size-weighted mean directions) join while that cosine is at least `threshold`; the group of each centroid."""
    groups = [[j] for j in range(len(centres))]
    sums = [centres[j] * sizes[j] for j in range(len(centres))]
    while len(groups) > 1:
        unit = _unit(np.array(sums))
        sim = _decided(unit @ unit.T)
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


#: Item cosines computed at once when placing the items near no topic centre (memory: 8 bytes each).
_NEAREST_CELLS = 4_000_000


def _pull(x: np.ndarray, weights: np.ndarray, labels: np.ndarray, orphan: np.ndarray, placed: np.ndarray) -> None:
    """Give each `orphan` item (a mask, updated) the label of its nearest item among `placed` (indexes):
    the highest cosine above 0, then the heavier item, then the first; repeated with the items
    just placed, so a chain of items each near the next follows its first."""
    while orphan.any() and len(placed):
        lost = np.flatnonzero(orphan)
        found = np.full(len(lost), -1)
        step = max(1, _NEAREST_CELLS // len(placed))
        towards, heavier = x[placed].T, weights[placed][None, :]
        for s in range(0, len(lost), step):
            near = _decided(x[lost[s:s + step]] @ towards)
            top = near.max(axis=1, keepdims=True)
            pick = np.argmax(np.where(near == top, heavier, -np.inf), axis=1)
            found[s:s + step] = np.where(top[:, 0] > 0, pick, -1)
        got = found >= 0
        labels[lost[got]] = labels[placed[found[got]]]
        orphan[lost[got]] = False
        placed = lost[got]


def _assign(x: np.ndarray, centres: np.ndarray, weights: np.ndarray,
            said: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Each item's topic (the centre of highest cosine) and the cosines to every topic's centre.

    An item orthogonal to every centre (best cosine 0 or less: a cosine of 0 to all says nothing,
    and the first topic would take it) takes the topic of its nearest item (`_pull`): a question
    asked without a tool is pulled by its twin with the same words and a tool. Items near no
    placed item at all start topics of their own, the heaviest first, each pulling its nearest;
    the items without any feature the model keeps (no word, concept, n-gram or tool shared with
    another conversation) are one topic, and so are the items whose kept features are words of
    conversation only (`said` False, `_said`)."""
    sims = _decided(x @ centres.T)
    labels = np.argmax(sims, axis=1)
    orphan = sims.max(axis=1) <= 0
    topics = len(centres)
    blank = orphan & ~np.any(x != 0, axis=1)
    if said is not None:
        blank |= ~said
    if blank.any():
        labels[blank], orphan[blank], topics = topics, False, topics + 1
    _pull(x, weights, labels, orphan, np.flatnonzero(~orphan & ~blank))
    while orphan.any():
        lost = np.flatnonzero(orphan)
        first = lost[int(np.argmax(weights[lost]))]
        labels[first], orphan[first], topics = topics, False, topics + 1
        _pull(x, weights, labels, orphan, np.array([first]))
    if topics > len(centres):
        extra = np.zeros((topics - len(centres), x.shape[1]))
        new = labels >= len(centres)
        np.add.at(extra, labels[new] - len(centres), x[new] * weights[new, None])
        sims = np.hstack([sims, _decided(x @ _unit(extra).T)])
    return labels, sims


def _stable_order(items: list[Item]) -> list[int]:
    """Indexes of `items` in an order that depends on their content only (a hash: a fair sample)."""
    keyed = [(hashlib.blake2b(repr(item).encode(), digest_size=8).digest(), item, i) for i, item in enumerate(items)]
    return [i for *_, i in sorted(keyed)]


def cluster(docs: list[Doc], k: int | None = None, concepts: Concepts | None = None) -> Topics:
    """The topics of `docs` (k: k k-means clusters, not merged, and the topics `_assign` starts for
    items near none of them; None: fine clusters merged;
    `concepts`: the concept table, `concepts.load_concepts`; None: the built-in one).

    Documents with the same words and tools are one item (weighted by their number): one
    question asked about a thousand orders is one row of the model."""
    if not docs:
        return Topics()
    # Each distinct (text, tools) pair is read once; a document is then an index (a key met
    # twice keeps its last document, as a dict by key would).
    last = {d.key: i for i, d in enumerate(docs)}
    if len(last) < len(docs):
        docs = [docs[i] for i in sorted(last.values())]
    pair_ids: dict[tuple[str, tuple[str, ...]], int] = {}
    doc_pair = np.fromiter((pair_ids.setdefault((d.text, d.tools), len(pair_ids)) for d in docs), dtype=np.int64,
                           count=len(docs))
    wordings: dict[str, tuple[str, ...]] = {}
    pair_items: list[Item] = []
    for text, tools in pair_ids:
        if text not in wordings:
            wordings[text] = tuple(words(text))
        pair_items.append((wordings[text], tuple(sorted(set(tools)))))
    counts: Counter = Counter()
    for item, n in zip(pair_items, np.bincount(doc_pair, minlength=len(pair_items)).tolist()):
        counts[item] += n
    unique = sorted(counts)
    index = {u: i for i, u in enumerate(unique)}
    doc_item = np.array([index[item] for item in pair_items], dtype=np.int64)[doc_pair]
    weights = np.array([counts[u] for u in unique], dtype=np.float64)
    labels, sims = np.zeros(len(unique), dtype=int), None
    enc = _encode(unique, concepts or built_in_concepts())
    fit = np.zeros(len(unique), dtype=bool)
    fit[_stable_order(unique)[:FIT_SAMPLE]] = True
    idf = _vocabulary(enc, fit, weights) if len(unique) > 1 else np.full(len(enc.names), np.nan)
    if not np.isnan(idf).all():
        fit_index = np.flatnonzero(fit)
        factors = _tool_factors(enc, idf, fit, weights)
        m_fit = _tfidf(enc, idf, factors, fit_index)
        basis = _lsa_basis(m_fit, DIMENSIONS, np.random.default_rng(SEED))
        x_fit = _project(m_fit, basis)
        w_fit = weights[fit_index]
        k_fine = k or min(K_FINE, max(2, len(fit_index) // 2))  # (a few documents: a few fine clusters)
        fine, fine_labels = _kmeans(x_fit, w_fit, max(1, min(k_fine, len(fit_index))), np.random.default_rng(SEED))
        placed = fine_labels >= 0
        sizes = np.bincount(fine_labels[placed], weights=w_fit[placed], minlength=len(fine))
        group = _merge(fine, sizes, MERGE_COSINE if k is None else np.inf)
        centres = np.zeros((group.max() + 1, fine.shape[1]))
        np.add.at(centres, group, fine * sizes[:, None])
        centres = _unit(centres)
        x_all = x_fit if len(fit_index) == len(unique) else _project(_tfidf(enc, idf, factors), basis)
        said = _said(unique, enc, idf, concepts or built_in_concepts())
        labels, sims = _assign(x_all, centres, weights, said)
        blank = ~said | ~np.any(x_all != 0, axis=1)
    else:
        blank = np.ones(len(unique), dtype=bool)
    # (the topic of the items without a feature the model keeps: `_assign` gives them one label)
    return _finish(docs, doc_item, unique, labels, weights, sims, int(labels[blank][0]) if blank.any() else None)



#: Texts of a topic (its most typical first) read to find how its label's words are written.
SPELLING_TEXTS = 200


def spelled(terms: tuple[str, ...], texts: list[str]) -> list[str]:
    """`terms` (normalised: no accents, casefolded) as the texts write them, lower-case: each
    term's most frequent written form (ties: the first in code-point order), the term if none.

    >>> spelled(("reservation", "hotel"), ["Ma réservation d'hôtel", "réservation annulée", "Reservation?"])
    ['réservation', 'hôtel']
    """
    wanted = set(terms)
    seen: dict[str, Counter] = {t: Counter() for t in terms}
    for text in texts:
        if text.isascii():
            continue  # (an ASCII text writes a term as the term itself, lower-cased)
        for token in tokens.terms(unicodedata.normalize("NFC", text).lower()):
            if (term := normalise(token)) in wanted:
                seen[term][token] += 1
    for text in texts:
        if text.isascii():
            for token in tokens.terms(text.lower()):
                if token in wanted and seen[token]:  # (counted only where another spelling competes)
                    seen[token][token] += 1
    return [min(seen[t].items(), key=lambda kv: (-kv[1], kv[0]))[0] if seen[t] else t for t in terms]


#: Characters of a question quoted as a label.
LABEL_QUOTE_CHARS = 40


def quoted(text: str) -> str:
    """A question as a label: whitespace folded, cut to `LABEL_QUOTE_CHARS` with "…", in quotes.

    >>> quoted("Is this   covered by warranty?")
    '“Is this covered by warranty?”'
    >>> quoted("the app crashes when i open my orders tab on my phone")
    '“the app crashes when i open my orders t…”'
    """
    folded = " ".join(text.split())
    return f"“{folded if len(folded) <= LABEL_QUOTE_CHARS else folded[:LABEL_QUOTE_CHARS - 1] + '…'}”"

#: The label of the topic of questions without a feature the model keeps, when they have two or
#: more wordings: they share no word, concept, n-gram or tool with any other conversation, so
#: they are together for want of anything in common, which the label says (not one question's words).
UNMATCHED_LABEL = "(no words in common)"


def _finish(docs: list[Doc], doc_item: np.ndarray, unique: list[Item], labels: np.ndarray, weights: np.ndarray,
            sims: np.ndarray | None, unmatched: int | None = None) -> Topics:
    """Topics with terms, typical questions, ids by size (then label) and every doc's id;
    `unmatched`: the label (in `labels`) of the items without a kept feature, named `UNMATCHED_LABEL`
    when it holds two wordings or more.

    A term's weight in a topic: the documents of the topic holding it times its idf over all
    documents, so a word every topic uses ("order", "bitte") does not name one. A typical
    question: the text of the smallest key among the documents of an item closest to the centre."""
    smallest: dict[int, Doc] = {}  # item index -> its document of the smallest key
    for d, i in zip(docs, doc_item.tolist()):
        if i not in smallest or d.key < smallest[i].key:
            smallest[i] = d
    example = {unique[i]: d for i, d in smallest.items()}
    df: Counter = Counter()
    for (wording, _), w in zip(unique, weights):
        for term in set(wording):
            df[term] += w
    total = float(weights.sum())
    drafts = []
    for j in sorted(set(labels.tolist())):
        members = np.flatnonzero(labels == j)
        size = int(weights[members].sum())
        term_weight: Counter = Counter()
        tool_count: Counter = Counter()
        for i in members:
            wording, tools = unique[i]
            for w in set(wording):
                term_weight[w] += weights[i]
            for t in tools:
                tool_count[t] += weights[i]
        # (a word of one conversation only, a name or a typo, never names a topic; nor does a word of conversation)
        scored = {t: n * np.log((1 + total) / (1 + df[t])) for t, n in term_weight.items()
                  if df[t] >= MIN_DF and t not in CONVERSATIONAL}
        terms = tuple(t for t, _ in sorted(scored.items(), key=lambda kv: (-round(kv[1], 9), kv[0]))[:TOP_TERMS])
        near = sorted(members, key=lambda i: (-(round(sims[i, j], 9) if sims is not None else 0.0), -weights[i], unique[i]))
        picked: list[Doc] = []
        seen: set[tuple[str, ...]] = set()
        for i in near:
            if unique[i][0] not in seen:  # (the same words with other tools: one wording)
                seen.add(unique[i][0])
                picked.append(example[unique[i]])
            if len(picked) == TYPICAL:
                break
        tools = tuple(t for t, _ in sorted(tool_count.items(), key=lambda kv: (-kv[1], kv[0]))[:3])
        # (fewer than two words to name it, a mixed group or a single conversation: its most typical question does)
        terms = tuple(spelled(terms, [example[unique[i]].text for i in near[:SPELLING_TEXTS]]))
        label = ", ".join(terms[:3]) if len(terms) >= MIN_LABEL_TERMS else quoted(picked[0].text)
        if j == unmatched and len({unique[i][0] for i in members}) > 1:
            label, terms = UNMATCHED_LABEL, ()
        drafts.append((size, label, j, terms, tuple(d.text for d in picked), tuple(d.key for d in picked), tools))
    drafts.sort(key=lambda d: (-d[0], d[1], d[4]))
    topics, new_id = [], {}
    for tid, (size, label, j, terms, questions, examples, tools) in enumerate(drafts):
        new_id[j] = tid
        topics.append(Topic(tid, label, terms, questions, examples, tools, size))
    topic_of = [new_id[j] for j in labels.tolist()]
    return Topics(topics, {d.key: topic_of[i] for d, i in zip(docs, doc_item.tolist())})
