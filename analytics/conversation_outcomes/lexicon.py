"""The patterns the outcome signals look for, in English, German, French and Spanish, and
the text normalisation that makes them match across case, accents and Unicode forms.

A text is normalised (NFKC, casefolded, accents stripped, typographic apostrophes made
plain), quoted passages are dropped ("…", “…”, «…»), and it is split into word tokens
(Unicode `\\w+`) within clauses (split at `, . ; : ! ?` and line breaks).

A pattern (`parse`) is parts in order within one clause: `talk|speak ... person|human`
is a request verb, then up to `GAP` tokens, then a person noun; `answer|that ~ wrong`
allows only `filler` words ("is", "completely", "still" …) between; `^ … $` anchor
it to the whole clause. A part's alternatives are phrases whose tokens occur
consecutively, whole words only ("agent" never matches "agentur"); a plain phrase is a
one-part pattern. In the `human` and `wrong` categories a negation ("no need", "not",
"if", "ne", …) among the `NEGATION_WINDOW` tokens before a match, or in a gap inside it,
takes it back. A `contrast` word ("but", "aber", "mais", "pero" …) after a `closing` match
takes it back ("thanks, but that's not what I asked"); after a `give_up` match it does when a
`recovered` phrase follows it (the assistant delivers after all: "… at first, but here it is").
An `idiom` match (a negated comparative or "can only": "I couldn't be happier", "je ne peux que
vous remercier") is one filler word to `give_up`, `human` and `wrong` (`IDIOM_MASKED`).
Limits: sarcasm, a negation further away or in another clause, or a wording not covered is
not seen.

A user lexicon (`load_lexicon`) is a TOML or JSON file whose keys are categories
(`closing`, `give_up`, `human`, `wrong`, `recovered`, `idiom`, `pending`, `identity`, `negation`, `filler`,
`contrast`) and values lists of
patterns; it replaces the built-in patterns of the categories it names, or adds to them
when `extend = true`.

>>> built_in().matches("human", "Ich möchte mit einem ECHTEN Mitarbeiter sprechen")
True
>>> built_in().matches("human", "No need to talk to a person, thanks")
False
>>> built_in().matches("wrong", "The item doesn't work"), built_in().matches("wrong", "That still doesn't work")
(False, True)
>>> built_in().matches("give_up", "I couldn't find it at first, but here it is: INV-7")
False
>>> normalise("Ça NE marche pas") == normalise("c\\u0327a ne marche pas")
True
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from analytics import jsontext
from analytics.errors import BadRequest
from analytics.user_files import read_user_text
from analytics.conversation_outcomes.lexicon_words import BUILT_IN as _BUILT_IN

CATEGORIES = ("closing", "give_up", "human", "wrong", "negation", "filler", "contrast", "recovered", "idiom",
              "pending", "identity")
#: Tokens before a match searched for a negation.
NEGATION_WINDOW = 4

#: Tokens allowed between two parts of a pattern (`a ... b`).
GAP = 3

_QUOTED = re.compile(r'"[^"]*"|“[^”]*”|«[^»]*»|„[^“”]*[“”]')
_TOKEN = re.compile(r"\w+")
_CLAUSE = re.compile(r"[,.;:!?¡¿\n]+")
#: Categories where a negation just before a match takes it back.
NEGATED_CATEGORIES = ("human", "wrong", "recovered")
#: Categories a `contrast` after the match takes back: a closing always ("thanks, but that's not
#: what I asked"), a give-up when the assistant then delivers (a `recovered` match after the contrast).
CONTRASTED_CATEGORIES = {"closing": None, "give_up": "recovered"}
#: Categories that read an `idiom` match ("I couldn't be happier", "je ne peux que vous remercier") as one
#: filler word: a negated comparative or "can only" says the opposite of its words, so neither its
#: "couldn't" (a give-up) nor its "ne" (a negation) counts, while "you couldn't be more wrong" is a verdict.
IDIOM_MASKED = ("give_up", "human", "wrong")
#: Each masking category and the categories that read its matches as one filler word: an `idiom` as
#: above; an `identity` question ("are you a human or a bot?", "vous êtes un humain ?") asks what the
#: agent is, so its person noun asks for no one (`human`).
MASKS = {"idiom": IDIOM_MASKED, "identity": ("human",)}
#: The token an idiom's words become: no pattern's word (tokens are `\w+`), and a filler.
_IDIOM_TOKEN = ""
_APOSTROPHES = ("’", "‘", "ʼ", "`")


#: The combining diacritical marks (accents) left after NFD: the blocks U+0300–036F, 1AB0–1AFF,
#: 1DC0–1DFF, 20D0–20FF, FE20–FE2F (the vowel signs of other scripts are kept: they spell words).
_ACCENTS = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")


def normalise(text: str | None) -> str:
    """`text` in NFKC, casefolded, without accents, with plain apostrophes.

    >>> normalise("Tschüß, DANKE")
    'tschuss, danke'
    """
    text = text or ""
    if text.isascii():  # (NFKC, accents: nothing to do; casefold is lower)
        return text.lower().replace("`", "'")
    text = unicodedata.normalize("NFKC", text).casefold()
    for typographic in _APOSTROPHES:
        text = text.replace(typographic, "'")
    if text.isascii():
        return text
    return unicodedata.normalize("NFC", _ACCENTS.sub("", unicodedata.normalize("NFD", text)))


def tokens(text: str) -> list[str]:
    """The word tokens of `text`, normalised, quoted passages dropped.

    >>> tokens('He said "useless" — ÇA marche')
    ['he', 'said', 'ca', 'marche']
    """
    return _TOKEN.findall(_QUOTED.sub(" ", normalise(text)))


def words(text: str) -> list[str]:
    """Every word token of `text`, normalised, quoted passages included (a message's length).

    >>> len(words('It said "call us" and nothing else')), len(tokens('It said "call us" and nothing else'))
    (7, 5)
    """
    return _TOKEN.findall(normalise(text))


def clauses(text: str) -> list[list[str]]:
    """The tokens of `text` (as `tokens`) clause by clause.

    >>> clauses("Je ne comprends pas, ça ne marche pas")
    [['je', 'ne', 'comprends', 'pas'], ['ca', 'ne', 'marche', 'pas']]
    """
    parts = _CLAUSE.split(_QUOTED.sub(" ", normalise(text)))
    return [t for t in (_TOKEN.findall(p) for p in parts) if t]


@dataclass(frozen=True)
class Pattern:
    """Parts that occur in this order in one clause. A part is its alternatives, each a tuple of
    tokens occurring consecutively; `gaps[k]` is what may stand between part k and k+1: 0
    (nothing), `"..."` (up to `GAP` tokens, no negation) or `"~"` (up to `GAP` filler words).
    `start`/`end`: the match begins/ends its clause."""

    parts: tuple[tuple[tuple[str, ...], ...], ...]
    gaps: tuple[str, ...] = ()
    start: bool = False
    end: bool = False

    def __post_init__(self) -> None:
        # per part, {first token: alternatives starting with it}: a position tries only those.
        heads = []
        for part in self.parts:
            by_head: dict[str, list[tuple[str, ...]]] = {}
            for alt in part:
                by_head.setdefault(alt[0], []).append(alt)
            heads.append({head: tuple(alts) for head, alts in by_head.items()})
        object.__setattr__(self, "_heads", tuple(heads))

    def firsts(self) -> set[str]:
        return set(self._heads[0])


#: The words of a pattern's syntax (`parse`).
_SYNTAX = frozenset({"...", "~", "^", "$"})


def parse(text: str) -> Pattern | None:
    """A pattern from its text: parts joined by ` ... ` or ` ~ `, alternatives by `|`, a
    leading `^` / trailing `$` anchoring it to its clause. A plain phrase is one part.

    >>> parse("talk|speak ... person").parts
    ((('talk',), ('speak',)), (('person',),))
    """
    words = text.split()
    if "|" not in text and not _SYNTAX.intersection(words):  # a plain phrase (most of a long lexicon)
        phrase = tuple(tokens(text))
        return Pattern(((phrase,),)) if phrase else None
    start = bool(words) and words[0] == "^"
    end = bool(words) and words[-1] == "$"
    words = words[1 if start else 0:len(words) - 1 if end else len(words)]
    parts, gaps, current = [], [], []
    for word in [*words, "..."]:
        if word in ("...", "~"):
            alts = tuple(dict.fromkeys(t for t in (tuple(tokens(a)) for a in " ".join(current).split("|")) if t))
            if alts:
                parts.append(alts)
                gaps.append(word)
            current = []
        else:
            current.append(word)
    if not parts:
        return None
    return Pattern(tuple(parts), tuple(gaps[:-1]), start, end)


@dataclass(frozen=True)
class Lexicon:
    """Patterns by category (`parse`); `negation`, `filler` and `contrast` are word lists."""

    phrases: dict[str, tuple[Pattern, ...]]

    def __post_init__(self) -> None:
        # {category: {first token: patterns starting with it}}: a text is scanned once per category.
        index: dict[str, dict[str, list[Pattern]]] = {}
        for category, patterns in self.phrases.items():
            by_first: dict[str, list[Pattern]] = {}
            for pattern in patterns:
                for first in pattern.firsts():
                    by_first.setdefault(first, []).append(pattern)
            index[category] = by_first
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_negations", _by_length(self.words("negation")))
        # {first token: (tokens, anywhere), in the lexicon's order}: a contrast written with `^` counts
        # only opening a clause or right after a match.
        contrasts: dict[str, list[tuple[tuple[str, ...], bool]]] = {}
        for p in self.phrases.get("contrast", ()):
            for part in p.parts:
                for alt in part:
                    contrasts.setdefault(alt[0], []).append((alt, not p.start))
        object.__setattr__(self, "_contrasts", contrasts)
        object.__setattr__(self, "_filler", frozenset([_IDIOM_TOKEN, *(w for words in self.words("filler") for w in words)]))

    def words(self, category: str) -> tuple[tuple[str, ...], ...]:
        return tuple(alt for p in self.phrases.get(category, ()) for part in p.parts for alt in part)

    def find(self, category: str, parts: list[list[str]], words: frozenset[str] | None = None) -> bool:
        """Whether a pattern of `category` occurs in one of the clauses `parts` (`clauses`),
        not negated. `words`, the tokens of `parts` as a set, makes a text with no pattern's
        first word a set operation."""
        by_first = self._index.get(category, {})
        if words is not None and words.isdisjoint(by_first):
            return False
        for masking, masked in MASKS.items():
            if category in masked:
                parts = self._masked(parts, words, masking)
        negations = self._negations if category in NEGATED_CATEGORIES else {}
        contrasted = category in CONTRASTED_CATEGORIES
        for c, toks in enumerate(parts):
            seen: dict[int, dict] = {}  # per pattern: its (token, part) answers in this clause, whatever the start
            for i, tok in enumerate(toks):
                for pattern in by_first.get(tok, ()):
                    if pattern.start and i:
                        continue
                    end = self._match(toks, i, pattern, 0, negations, seen.setdefault(id(pattern), {}))
                    if end < 0 or _negated(toks[max(0, i - NEGATION_WINDOW):i], negations):
                        continue
                    if contrasted and self._taken_back(category, parts, c, end):
                        continue
                    return True
        return False

    def _masked(self, parts: list[list[str]], words: frozenset[str] | None, masking: str = "idiom") -> list[list[str]]:
        """`parts` with each match of the `masking` category (`MASKS`), the longest from each token, made
        one `_IDIOM_TOKEN` (the same list when none matches)."""
        idioms = self._index.get(masking)
        if not idioms or (words is not None and words.isdisjoint(idioms)):
            return parts
        out = []
        for toks in parts:
            kept, i, seen = [], 0, {}
            while i < len(toks):
                end = max((e for e in (self._match(toks, i, p, 0, {}, seen.setdefault(id(p), {}))
                                       for p in idioms.get(toks[i], ()) if not (p.start and i)) if e > i), default=-1)
                if end < 0:
                    kept.append(toks[i])
                    i += 1
                else:
                    kept.append(_IDIOM_TOKEN)
                    i = end
            out.append(kept)
        return out

    def _taken_back(self, category: str, parts: list[list[str]], c: int, end: int) -> bool:
        """Whether a `contrast` after a match ending at token `end` of clause `c` takes it back: one
        anywhere after it, or for a closing and a contrast written `^ …` one right after the match or
        opening a later clause ("danke, aber …", not the particle in "das ging aber schnell"); then,
        for a give-up, a match of the category `CONTRASTED_CATEGORIES` names after the contrast."""
        then = CONTRASTED_CATEGORIES[category]
        for k in range(c, len(parts)):
            toks = parts[k]
            first = end if k == c else 0
            for at in range(first, len(toks)):
                n = next((len(w) for w, anywhere in self._contrasts.get(toks[at], ())
                          if (anywhere or then or at == first) and tuple(toks[at:at + len(w)]) == w), 0)
                if not n:
                    continue
                return then is None or self.find(then, [toks[at + n:], *parts[k + 1:]])
        return False

    def _match(self, toks: list[str], i: int, pattern: Pattern, k: int, negations, seen: dict) -> int:
        """Where the match of part `k` of `pattern` and the parts after it from token `i` ends, or -1.

        `seen` holds the pattern's answer for each (token, part) already tried in this clause (it does
        not depend on where the match started): each gap tries up to `GAP` + 1 places for the next
        part, so without it a pattern of many gaps that fails late is tried in exponentially many
        ways (six gaps: minutes on a long message)."""
        if (i, k) in seen:
            return seen[i, k]
        seen[i, k] = found = self._match_here(toks, i, pattern, k, negations, seen)
        return found

    def _match_here(self, toks: list[str], i: int, pattern: Pattern, k: int, negations, seen: dict) -> int:
        if i >= len(toks):
            return -1
        for alt in pattern._heads[k].get(toks[i], ()):
            j = i + len(alt)
            if tuple(toks[i:j]) != alt:
                continue
            if k == len(pattern.parts) - 1:
                if not pattern.end or j == len(toks):
                    return j
                continue
            filler_only = pattern.gaps[k] == "~"
            for nxt in range(j, min(j + GAP, len(toks) - 1) + 1):
                if nxt > j and (toks[nxt - 1] not in self._filler if filler_only else _negated(toks[j:nxt], negations)):
                    break  # (a longer gap holds the same word)
                found = self._match(toks, nxt, pattern, k + 1, negations, seen)
                if found >= 0:
                    return found
        return -1

    def matches(self, category: str, text: str) -> bool:
        return self.find(category, clauses(text))

    def fingerprint(self) -> str:
        """A digest of every pattern: a derived table written with other phrases is not read. Taken
        once per lexicon (its patterns never change) and kept: every signals check compares it, and
        serialising the built-in patterns cost about 0.02 CPU s a check."""
        digest = self.__dict__.get("_fingerprint")
        if digest is None:
            data = {c: [[p.parts, p.gaps, p.start, p.end] for p in ps] for c, ps in self.phrases.items()}
            digest = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]
            object.__setattr__(self, "_fingerprint", digest)
        return digest


def _by_length(phrases: tuple[tuple[str, ...], ...]) -> dict[int, frozenset[tuple[str, ...]]]:
    """{number of tokens: the phrases of that many}: whether a phrase occurs among a few tokens is one
    set lookup per place and length, however many phrases there are."""
    out: dict[int, set[tuple[str, ...]]] = {}
    for phrase in phrases:
        out.setdefault(len(phrase), set()).add(phrase)
    return {n: frozenset(s) for n, s in out.items()}


def _negated(before: list[str], negations: dict[int, frozenset[tuple[str, ...]]]) -> bool:
    """Whether one of `negations` (`_by_length`) occurs among the tokens `before`.

    >>> _negated(["i", "do", "not", "want"], _by_length((("not",), ("no", "need"))))
    True
    """
    for n, phrases in negations.items():
        if any(tuple(before[j:j + n]) in phrases for j in range(len(before) - n + 1)):
            return True
    return False


def _compile(phrases: dict[str, list[str] | tuple[str, ...]]) -> Lexicon:
    out = {}
    for category, items in phrases.items():
        compiled = {p for p in (parse(item) for item in items) if p}
        out[category] = tuple(sorted(compiled, key=repr))
    return Lexicon(out)


_DEFAULT: Lexicon | None = None


def built_in() -> Lexicon:
    """The built-in EN/DE/FR/ES lexicon."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = _compile(_BUILT_IN)
    return _DEFAULT


def load_lexicon(path: str | Path) -> Lexicon:
    """A lexicon from a TOML or JSON file (see the module doc); a bad file is a `BadRequest`.

    >>> load_lexicon("lexicon.toml").matches("human", "hablar con un humano")  # doctest: +SKIP
    True
    """
    p = Path(path)
    return lexicon_from(read_table_file(p, "lexicon"), where=str(p))


def read_table_file(p: Path, what: str):
    """The content of a TOML file (`.toml`) or else a JSON file; an unreadable one is a `BadRequest`
    naming `what` it was read as."""
    try:
        text = read_user_text(p, what)
        if p.suffix.lower() == ".toml":
            from analytics import tomltable

            return tomltable.loads(text)
        return jsontext.loads(text)
    except BadRequest:  # (names the file already: not a regular file, too big)
        raise
    except (OSError, ValueError) as exc:
        raise BadRequest(f"{what} {p}: {exc}") from None


def lexicon_from(data: dict, where: str = "lexicon") -> Lexicon:
    """A lexicon from a mapping of category → phrases (`extend`: add to the built-in ones)."""
    if not isinstance(data, dict):
        raise BadRequest(f"{where}: expected a table of categories")
    extend = bool(data.get("extend", False))
    merged = {k: list(v) for k, v in _BUILT_IN.items()}
    for category, items in data.items():
        if category == "extend":
            continue
        if category not in CATEGORIES:
            raise BadRequest(f"{where}: unknown category {category!r}; known: {', '.join(CATEGORIES)}")
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise BadRequest(f"{where}: {category} must be a list of strings")
        merged[category] = [*merged[category], *items] if extend else list(items)
    return _compile(merged)
