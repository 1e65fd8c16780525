"""Aligning two lists of messages: which entry of one stands for which of the other.

One rule for both places that compare message lists: Resume QA (an observed
window against the expected one, contract §5.6) and the transcript diff (two
branches, two checkpoints, two threads). Items only need `message_id`,
`speaker` and `content`.

Anchors first: the same message id, then the same speaker and text, then the
same text, each claimed in list order so repeated texts pair up in turn.
Anchors off one longest in-order run are *moved* (reordered). What is left is
paired within the stretch between two in-order anchors, same speaker, in
order, when the texts are `similar`: those entries stand for each other with
their text altered. An entry is compared with the next `SIMILAR_WINDOW`
unpaired entries of its speaker on the other side, no further: an altered entry
stands near where it was, and a longer search makes aligning quadratic (a
100,000-line log with no text of the transcript took 10 minutes and more; see
bench/bench_align.py). Anything still unpaired is only on its side.

>>> from collections import namedtuple
>>> M = namedtuple("M", "message_id speaker content")
>>> a = [M(None, "user", "Hi"), M(None, "assistant", "The review is on Tuesday.")]
>>> b = [M(None, "user", "Hi"), M(None, "assistant", "The review is on Wednesday.")]
>>> pair(a, b)
Alignment(pairs={0: 0, 1: 1}, moved=set(), how={0: 'speaker and text', 1: 'similar text'})
"""

from __future__ import annotations

import bisect
import difflib
import re
from collections import defaultdict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

#: Texts at least this similar (difflib ratio) stand for the same entry when nothing else matches.
SIMILARITY = 0.5
#: Longer texts are judged by their first this many characters each: difflib keeps an index entry
#: per character of one side and takes time up to the product of the two lengths (a 95 MB text
#: against a short one took 4 GB).
SIMILAR_MAX_CHARS = 10_000
#: How many unpaired entries of the other side, in order, an entry is compared with by `similar`.
SIMILAR_WINDOW = 16
_SPACES = re.compile(r"\s+")


class Item(Protocol):
    message_id: str | None
    speaker: str
    content: str


@dataclass(frozen=True)
class Alignment:
    """`pairs`: right index → left index; `moved`: right indexes of pairs out of order;
    `how`: right index → what paired it (`message id`, `speaker and text`, `text`, `similar text`)."""

    pairs: dict[int, int]
    moved: set[int]
    how: dict[int, str]


def similar(expected: str, observed: str) -> bool:
    """Whether a text is recognisably the other one, altered.

    One a prefix of the other (a truncated or extended text), or a difflib
    similarity of at least `SIMILARITY` (whitespace runs count as one space) of
    their first `SIMILAR_MAX_CHARS` characters.

    >>> similar("The review is on Tuesday at 10:00.", "The review is on Wednesday at 10:00.")
    True
    >>> similar("Question 21: what is step 21?", "I never said this.")
    False
    """
    return _similar(expected, observed)


def _normal(text: str) -> str:
    """Whitespace runs one space, stripped."""
    # (`str.split` would make an object of every word: a regular expression keeps one string)
    return _SPACES.sub(" ", text).strip()


class _Text:
    """A text as `similar` compares it: `_normal`, cut to `SIMILAR_MAX_CHARS`, with what the
    bounds below need made once however often it is compared."""

    __slots__ = ("whole", "cut", "masks")

    def __init__(self, text: str) -> None:
        self.whole = _normal(text)
        self.cut = self.whole[:SIMILAR_MAX_CHARS]
        self.masks: dict[str, int] | None = None

    def char_masks(self) -> dict[str, int]:
        """Character → the bits of its positions in `cut` (for `_lcs_length`)."""
        if self.masks is None:
            self.masks = {}
            for i, ch in enumerate(self.cut):
                self.masks[ch] = self.masks.get(ch, 0) | (1 << i)
        return self.masks


def _lcs_length(a: _Text, b: str) -> int:
    """The length of a longest common subsequence of `a.cut` and `b`, by the bit-parallel
    algorithm (Hyyrö 2004): one pass over `b`, each step a few operations on an integer of
    `len(a.cut)` bits.

    >>> _lcs_length(_Text("the review is on Tuesday"), "the review is Wednesday")
    20
    """
    masks, full = a.char_masks(), (1 << len(a.cut)) - 1
    row = full
    for ch in b:
        m = masks.get(ch)
        if m is not None:
            u = row & m
            row = ((row + u) | (row - u)) & full
    return len(a.cut) - row.bit_count()


def _similar(a: str | _Text, b: str | _Text) -> bool:
    """`similar` of two texts (`_Text`, or `_normal` strings).

    difflib's ratio is 2·M / (len a + len b), M the characters of its matching blocks, which
    are a common subsequence: so M is at most the shorter length and at most the longest
    common subsequence. Both bounds are tried first, the second far cheaper than the ratio
    (about 1/30 of it on two lines of English), and unrelated texts rarely pass it (the
    characters two unrelated English lines share, difflib's quick_ratio, mostly do).
    """
    a, b = (t if isinstance(t, _Text) else _Text(t) for t in (a, b))
    if not a.whole or not b.whole:
        return a.whole == b.whole
    if a.whole.startswith(b.whole) or b.whole.startswith(a.whole):
        return True
    total = len(a.cut) + len(b.cut)
    if 2 * min(len(a.cut), len(b.cut)) < SIMILARITY * total:
        return False
    if 2 * _lcs_length(a, b.cut) < SIMILARITY * total:
        return False
    return difflib.SequenceMatcher(None, a.cut, b.cut, autojunk=False).ratio() >= SIMILARITY


def increasing(seq: Sequence[int]) -> set[int]:
    """Indexes (into `seq`) of one longest strictly increasing subsequence.

    >>> sorted(increasing([0, 2, 1, 3]))
    [0, 2, 3]
    """
    tails: list[int] = []  # tails[k] = index in seq of the smallest tail of an increasing run of length k+1
    tail_values: list[int] = []
    prev: list[int | None] = [None] * len(seq)
    for i, value in enumerate(seq):
        k = bisect.bisect_left(tail_values, value)
        if k > 0:
            prev[i] = tails[k - 1]
        if k == len(tails):
            tails.append(i)
            tail_values.append(value)
        else:
            tails[k] = i
            tail_values[k] = value
    keep: set[int] = set()
    node = tails[-1] if tails else None
    while node is not None:
        keep.add(node)
        node = prev[node]
    return keep


def pair(left: Sequence[Item], right: Sequence[Item]) -> Alignment:
    """Pair right entries (by index) with left ones; see the module docstring for the rule."""
    pairs: dict[int, int] = {}
    how: dict[int, str] = {}
    free_left = set(range(len(left)))

    def claim(key: Callable[[Any], Any], label: str) -> None:
        buckets: dict[object, deque[int]] = defaultdict(deque)
        for i, e in enumerate(left):
            k = key(e)
            if i in free_left and k is not None:
                buckets[k].append(i)
        for j, o in enumerate(right):
            if j in pairs:
                continue
            k = key(o)
            bucket = buckets.get(k) if k is not None else None
            if bucket:
                i = bucket.popleft()
                pairs[j] = i
                how[j] = label
                free_left.discard(i)

    claim(lambda m: m.message_id, "message id")
    claim(lambda m: (m.speaker, m.content), "speaker and text")
    claim(lambda m: m.content, "text")

    anchors = sorted(pairs)  # right indexes, in right order
    keep = increasing([pairs[j] for j in anchors])
    in_order = [anchors[k] for k in sorted(keep)]
    in_order_set = set(in_order)
    moved = {j for j in anchors if j not in in_order_set}

    # Stretch number of an entry = how many in-order anchors precede it on its side.
    anchor_left = [pairs[j] for j in in_order]
    left_over: dict[tuple[int, str], list[int]] = defaultdict(list)
    for i in sorted(free_left):
        left_over[(bisect.bisect_left(anchor_left, i), left[i].speaker)].append(i)
    # In order within a stretch, across speakers too: an entry pairs only after the stretch's
    # last similar pair on the left (else two speakers' pairs could cross, and a crossed pair
    # is neither in order nor counted as moved).
    # Each candidate list stays sorted and whole: the entries it may still offer are those past
    # the stretch's last pair (any speaker's), the next `SIMILAR_WINDOW` of them.
    last: dict[int, int] = {}
    texts: dict[int, _Text] = {}  # left index → its `_Text`, made once however often it is compared
    for j in range(len(right)):
        if j in pairs:
            continue
        stretch = bisect.bisect_left(in_order, j)
        candidates = left_over.get((stretch, right[j].speaker))
        if not candidates:
            continue
        start = bisect.bisect_right(candidates, last.get(stretch, -1))
        observed = _Text(right[j].content)
        for i in candidates[start:start + SIMILAR_WINDOW]:
            if i not in texts:
                texts[i] = _Text(left[i].content)
            if _similar(texts[i], observed):
                pairs[j] = i
                how[j] = "similar text"
                last[stretch] = i
                break
    return Alignment(pairs, moved, how)


def merged_order(n_left: int, n_right: int, alignment: Alignment) -> list[tuple[int | None, int | None]]:
    """Both lists as one sequence of `(left index, right index)`, diff-style: the pairs in
    order, and in each gap between two of them the left-only entries, then the right-only
    ones (a moved pair stands where its right entry is).

    >>> merged_order(3, 2, Alignment({0: 0, 1: 2}, set(), {}))
    [(0, 0), (1, None), (2, 1)]
    >>> merged_order(1, 1, Alignment({}, set(), {}))
    [(0, None), (None, 0)]
    """
    out: list[tuple[int | None, int | None]] = []
    placed = set(alignment.pairs.values())
    next_left = next_right = 0

    def flush(left_upto: int, right_upto: int) -> None:
        nonlocal next_left, next_right
        for i in range(next_left, left_upto):
            if i not in placed:
                out.append((i, None))
        for j in range(next_right, right_upto):
            out.append((alignment.pairs.get(j), j))  # right-only, or a moved pair
        next_left, next_right = max(next_left, left_upto), max(next_right, right_upto)

    for j in sorted(alignment.pairs):
        if j in alignment.moved:
            continue
        i = alignment.pairs[j]
        flush(i, j)
        out.append((i, j))
        next_left, next_right = i + 1, j + 1
    flush(n_left, n_right)
    return out
