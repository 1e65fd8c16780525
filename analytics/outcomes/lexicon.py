"""The phrases the outcome signals look for, in English, German, French and Spanish, and
the text normalisation that makes them match across case, accents and Unicode forms.

A text is normalised (NFKC, casefolded, accents stripped, typographic apostrophes made
plain), quoted passages are dropped ("…", “…”, «…»), and it is split into word tokens
(Unicode `\\w+`) within clauses (split at `, . ; : ! ?` and line breaks). A phrase
matches where its own tokens occur consecutively in one clause: whole words only, so
"agent" never matches "agentur". In the `human` and `wrong` categories a match
preceded, within `NEGATION_WINDOW` tokens of its clause, by a negation ("no need to
talk to a person", "not wrong") does not count. Limits: sarcasm, a negation further away, or a phrase in a language
not listed is not seen.

A user lexicon (`load_lexicon`) is a TOML or JSON file whose keys are categories
(`closing`, `give_up`, `human`, `wrong`, `negation`) and values lists of phrases; it
replaces the built-in phrases of the categories it names, or adds to them when
`extend = true`.

>>> built_in().matches("human", "Can I TALK to a Person?")
True
>>> built_in().matches("human", "No need to talk to a person, thanks")
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

from analytics.errors import BadRequest

CATEGORIES = ("closing", "give_up", "human", "wrong", "negation")
#: Tokens before a match searched for a negation.
NEGATION_WINDOW = 4

_BUILT_IN: dict[str, tuple[str, ...]] = {
    # A user's message ending the conversation well (also needs to be short: `outcomes.signals`).
    "closing": (
        "thanks bye", "thank you bye", "thanks that's all", "that's all", "that is all", "perfect thanks",
        "that's all i needed", "all good", "bye", "goodbye", "have a nice day", "problem solved", "that solved it",
        "that worked", "works now", "thanks a lot", "thank you so much", "thanks", "thank you", "cheers",
        "danke", "vielen dank", "tschuss", "auf wiedersehen", "das wars", "das war's", "alles klar danke", "hat geklappt",
        "merci", "merci beaucoup", "au revoir", "c'est tout", "parfait merci", "bonne journee", "ca marche merci",
        "gracias", "muchas gracias", "adios", "hasta luego", "eso es todo", "perfecto gracias", "ya funciona",
    ),
    # An assistant giving up or apologising for failing.
    "give_up": (
        "i'm sorry i couldn't", "i am sorry i could not", "i couldn't", "i could not", "i was unable to",
        "i'm unable to", "i am unable to", "unable to", "i can't help", "i cannot help", "i'm not able to",
        "something went wrong", "i failed to", "i wasn't able to", "i was not able to",
        "es tut mir leid ich konnte nicht", "ich konnte nicht", "ich kann leider nicht", "leider nicht moglich",
        "etwas ist schiefgelaufen", "nicht in der lage",
        "je n'ai pas pu", "je ne peux pas", "je suis desole je n'ai pas", "impossible de", "une erreur s'est produite",
        "no pude", "no he podido", "lo siento no pude", "no puedo", "no es posible", "ocurrio un error",
    ),
    # A user asking for a human.
    "human": (
        "talk to a person", "talk to a human", "speak to a person", "speak to a human", "speak to someone",
        "talk to someone", "human agent", "real person", "real human", "live agent", "representative",
        "customer service agent", "speak to an agent", "talk to an agent", "speak to a manager",
        "mit einem menschen sprechen", "mit einem mitarbeiter sprechen", "echten menschen", "einen mitarbeiter",
        "kundenberater", "mit jemandem sprechen",
        "parler a un conseiller", "parler a un humain", "parler a quelqu'un", "un vrai conseiller", "un agent humain",
        "une vraie personne",
        "hablar con una persona", "hablar con un humano", "hablar con alguien", "agente humano", "un representante",
        "persona real",
    ),
    # A user saying the answer is wrong or useless.
    "wrong": (
        "that's wrong", "that is wrong", "this is wrong", "wrong answer", "that's not right", "that is not right",
        "that's incorrect", "useless", "not helpful", "doesn't work", "does not work", "didn't work", "did not work",
        "still not working", "still doesn't work", "still wrong", "you're not listening", "makes no sense",
        "funktioniert immer noch nicht", "ne marche toujours pas", "ne fonctionne toujours pas", "sigue sin funcionar",
        "todavia no funciona",
        "das ist falsch", "stimmt nicht", "nutzlos", "hilft nicht", "funktioniert nicht", "bringt nichts",
        "c'est faux", "ca ne marche pas", "ca marche pas", "inutile", "ne fonctionne pas", "n'importe quoi",
        "no sirve", "es incorrecto", "eso esta mal", "no funciona", "inutil", "no tiene sentido",
    ),
    # Words that, just before a phrase, take its meaning back.
    "negation": (
        "no", "not", "don't", "dont", "never", "without", "no need", "nicht", "kein", "keine", "ohne", "nie",
        "pas", "sans", "jamais", "ne", "sin", "nunca", "ni",
    ),
}

_QUOTED = re.compile(r'"[^"]*"|“[^”]*”|«[^»]*»|„[^“”]*[“”]')
_TOKEN = re.compile(r"\w+")
_CLAUSE = re.compile(r"[,.;:!?¡¿\n]+")
#: Categories where a negation just before a match takes it back.
NEGATED_CATEGORIES = ("human", "wrong")
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


def clauses(text: str) -> list[list[str]]:
    """The tokens of `text` (as `tokens`) clause by clause.

    >>> clauses("Je ne comprends pas, ça ne marche pas")
    [['je', 'ne', 'comprends', 'pas'], ['ca', 'ne', 'marche', 'pas']]
    """
    parts = _CLAUSE.split(_QUOTED.sub(" ", normalise(text)))
    return [t for t in (_TOKEN.findall(p) for p in parts) if t]


@dataclass(frozen=True)
class Lexicon:
    """Phrases by category, each as its tuple of normalised tokens."""

    phrases: dict[str, tuple[tuple[str, ...], ...]]

    def __post_init__(self) -> None:
        # {category: {first token: phrases starting with it}}: a text is scanned once per category.
        index: dict[str, dict[str, list[tuple[str, ...]]]] = {}
        for category, phrases in self.phrases.items():
            by_first: dict[str, list[tuple[str, ...]]] = {}
            for phrase in phrases:
                by_first.setdefault(phrase[0], []).append(phrase)
            index[category] = by_first
        object.__setattr__(self, "_index", index)

    def find(self, category: str, parts: list[list[str]], words: frozenset[str] | None = None) -> bool:
        """Whether a phrase of `category` occurs in one of the clauses `parts` (`clauses`),
        not negated just before. `words`, the tokens of `parts` as a set, makes a text with no
        phrase's first word a set operation."""
        by_first = self._index.get(category, {})
        if words is not None and words.isdisjoint(by_first):
            return False
        negations = self.phrases.get("negation", ()) if category in NEGATED_CATEGORIES else ()
        for toks in parts:
            for i, tok in enumerate(toks):
                for phrase in by_first.get(tok, ()):
                    if tuple(toks[i:i + len(phrase)]) == phrase and not _negated(toks, i, negations):
                        return True
        return False

    def matches(self, category: str, text: str) -> bool:
        return self.find(category, clauses(text))

    def fingerprint(self) -> str:
        """A digest of every phrase: a derived table written with other phrases is not read."""
        return hashlib.sha256(json.dumps(self.phrases, sort_keys=True).encode()).hexdigest()[:16]


def _negated(toks: list[str], start: int, negations) -> bool:
    before = toks[max(0, start - NEGATION_WINDOW):start]
    for neg in negations:
        n = len(neg)
        if any(tuple(before[j:j + n]) == neg for j in range(len(before) - n + 1)):
            return True
    return False


def _compile(phrases: dict[str, list[str] | tuple[str, ...]]) -> Lexicon:
    out = {}
    for category, items in phrases.items():
        compiled = {tuple(tokens(p)) for p in items}
        # longer phrases first (cheaper early exits are not needed: any match answers)
        out[category] = tuple(sorted((p for p in compiled if p), key=lambda p: (-len(p), p)))
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
    try:
        if p.suffix.lower() == ".toml":
            import tomllib

            data = tomllib.loads(p.read_text(encoding="utf-8"))
        else:
            data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BadRequest(f"lexicon {p}: {exc}") from None
    return lexicon_from(data, where=str(p))


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
