"""The words of a text as topics take them: Unicode word rules, grapheme clusters kept whole.

A word is a run of word characters and the combining marks that belong to them (`\\w` alone
stops at a vowel sign or a virama: "रिफंड" would come apart as र, फ, ड). A grapheme cluster (a
letter with its marks, a conjunct joined by a virama) is never cut: not into words, not into the
character n-grams of `clusters`.

Scripts written without spaces are cut into short terms: a run of Han characters (Chinese,
Japanese kanji) into its overlapping two-character terms, a run of Thai, Lao, Khmer or Myanmar
into overlapping pairs of clusters, a Katakana run (a loanword: パスワード) kept whole, and a
Hiragana run, in Japanese the particles and endings between the kanji, dropped.

>>> terms("मुझे रिफंड चाहिए")
['मुझे', 'रिफंड', 'चाहिए']
>>> terms("注文した商品が届きません。返金してください")
['注文', '商品', '届', '返金']
>>> terms("我要退款")
['我要', '要退', '退款']
>>> clusters("रिफंड")
['रि', 'फं', 'ड']
"""

from __future__ import annotations

import functools
import re
import sys
import unicodedata

#: Joiners that hold a cluster together (ZERO WIDTH NON-JOINER and JOINER: Indic and Arabic words).
_JOINERS = "\u200c\u200d"

#: Scripts written without spaces between words: (first, last code point, script).
_UNSPACED = (
    (0x0E00, 0x0E7F, "thai"), (0x0E80, 0x0EFF, "lao"), (0x1000, 0x109F, "myanmar"), (0x1780, 0x17FF, "khmer"),
    (0x3005, 0x3007, "han"), (0x3040, 0x309F, "hiragana"), (0x30A0, 0x30FF, "katakana"), (0x31F0, 0x31FF, "katakana"),
    (0x3400, 0x4DBF, "han"), (0x4E00, 0x9FFF, "han"), (0xF900, 0xFAFF, "han"), (0xFF66, 0xFF9F, "katakana"),
    (0x20000, 0x3FFFF, "han"),
)
#: How a run of each unspaced script becomes terms: pairs of clusters, the run whole, or nothing.
_PAIRS, _WHOLE, _DROPPED = "pairs", "whole", "dropped"
_RUN = {"han": _PAIRS, "thai": _PAIRS, "lao": _PAIRS, "myanmar": _PAIRS, "khmer": _PAIRS,
        "katakana": _WHOLE, "hiragana": _DROPPED}


@functools.cache
def _marks() -> str:
    """A character class body of every combining mark (Unicode categories Mn, Mc, Me) and the joiners."""
    points = [c for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) in ("Mn", "Mc", "Me")]
    points += [ord(j) for j in _JOINERS]
    points.sort()
    spans, start, last = [], points[0], points[0]
    for c in points[1:]:
        if c != last + 1:
            spans.append((start, last))
            start = c
        last = c
    spans.append((start, last))
    return "".join(re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in spans)


@functools.cache
def word_pattern() -> re.Pattern[str]:
    """A word: word characters and combining marks (`\\w+` for a text in ASCII)."""
    return re.compile(rf"(?:\w|[{_marks()}])+")


_ASCII_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    """The words of `text` by Unicode word rules (a word's marks stay in it).

    >>> words("rechnung, bitte!"), words("हिंदी भाषा")
    (['rechnung', 'bitte'], ['हिंदी', 'भाषा'])
    """
    return (_ASCII_WORD if text.isascii() else word_pattern()).findall(text)


def _joins(ch: str) -> bool:
    return unicodedata.category(ch) in ("Mn", "Mc", "Me") or ch in _JOINERS


#: Thai and Lao vowels written before the consonant they follow in speech (เ, แ, โ, ใ, ไ): one cluster with it.
_PREPOSED = frozenset(map(chr, [*range(0x0E40, 0x0E45), *range(0x0EC0, 0x0EC5)]))


def clusters(word: str) -> list[str]:
    """`word` as grapheme clusters: a letter with its marks and joiners, a consonant joined to the
    next one by a virama (a conjunct: "क्ष"), a Thai or Lao preposed vowel with its consonant.

    >>> clusters("क्षमा"), clusters("เงิน")
    (['क्ष', 'मा'], ['เงิ', 'น'])
    """
    if word.isascii():
        return list(word)
    out: list[str] = []
    for ch in word:
        last = out[-1][-1] if out else ""
        if out and (_joins(ch) or unicodedata.combining(last) == 9 or last in _PREPOSED):  # (9: a virama)
            out[-1] += ch
        else:
            out.append(ch)
    return out


def _script(cluster: str) -> str | None:
    point = ord(cluster[0])
    for first, last, script in _UNSPACED:
        if first <= point <= last:
            return script
    return None


def split(word: str) -> list[str]:
    """`word` (one of `words`) as terms: itself, or the short terms of its unspaced scripts' runs."""
    if word.isascii():
        return [word]
    parts = clusters(word)
    scripts = [_script(c) for c in parts]
    if not any(scripts):
        return [word]
    out: list[str] = []
    i = 0
    while i < len(parts):
        j = i
        while j < len(parts) and scripts[j] == scripts[i]:
            j += 1
        run, how = parts[i:j], _RUN.get(scripts[i] or "", _WHOLE)
        if how == _PAIRS and len(run) > 2:
            out += [run[k] + run[k + 1] for k in range(len(run) - 1)]
        elif how != _DROPPED:
            out.append("".join(run))
        i = j
    return out


def terms(text: str) -> list[str]:
    """The terms of `text`: its words (`words`), those of unspaced scripts cut short (`split`)."""
    return [t for w in words(text) for t in split(w)]
