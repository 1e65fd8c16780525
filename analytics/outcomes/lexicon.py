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
takes it back. Limits: sarcasm, a negation further away or in another clause, or a
wording not covered is not seen.

A user lexicon (`load_lexicon`) is a TOML or JSON file whose keys are categories
(`closing`, `give_up`, `human`, `wrong`, `negation`, `filler`) and values lists of
patterns; it replaces the built-in patterns of the categories it names, or adds to them
when `extend = true`.

>>> built_in().matches("human", "Ich möchte mit einem ECHTEN Mitarbeiter sprechen")
True
>>> built_in().matches("human", "No need to talk to a person, thanks")
False
>>> built_in().matches("wrong", "The item doesn't work"), built_in().matches("wrong", "That still doesn't work")
(False, True)
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

CATEGORIES = ("closing", "give_up", "human", "wrong", "negation", "filler")
#: Tokens before a match searched for a negation.
NEGATION_WINDOW = 4

#: Tokens allowed between two parts of a pattern (`a ... b`).
GAP = 3

# Words naming the parts of a pattern, by language (joined with "|" into pattern parts).
_EN_ASK = "talk|speak|chat|connect me|transfer me|put me through|get me|reach"
_EN_PERSON = "person|human|humans|agent|representative|rep|someone|somebody|operator|manager|supervisor|staff"
_DE_ASK = "sprechen|reden|chatten|verbinden|weiterleiten|durchstellen|verbinde|verbindest"
_DE_PERSON = ("mensch|menschen|mitarbeiter|mitarbeiterin|mitarbeitenden|berater|beraterin|kundenberater|person"
              "|jemandem|jemand|agenten|kundendienst|kundenservice|support|ansprechpartner|sachbearbeiter")
_FR_ASK = ("parler|parle|passer|passez moi|passe moi|transferer|transferez moi|mettre en relation|mettez moi en relation"
           "|joindre|contacter|discuter")
_FR_PERSON = "personne|humain|etre humain|conseiller|conseillere|agent|quelqu'un|operateur|operatrice|interlocuteur"
_ES_ASK = ("hablar|hable|hablo|pasar|pasame|paseme|pasa|pase|comunicar|comunicarme|comunica|comunique|comuniqueme|transferir|transfiera"
           "|transfierame|contactar|chatear")
_ES_PERSON = "persona|humano|agente|asesor|asesora|operador|operadora|alguien|representante|ejecutivo|empleado"

# A reference to the reply, and a verdict on it.
_EN_REPLY = "answer|answers|reply|response|solution|suggestion|that|this|you"
_EN_VERDICT = ("wrong|useless|incorrect|not helpful|unhelpful|not right|not correct|not true|nonsense|rubbish|garbage"
               "|pointless|doesn't help|does not help|didn't help|did not help|isn't helping|is not helping"
               "|makes no sense|doesn't make sense|does not make sense|doesn't work|does not work|didn't work"
               "|did not work|not what i asked|not what i asked for|didn't answer|did not answer|are not listening"
               "|aren't listening")
_DE_REPLY = "antwort|antworten|losung|vorschlag|das|dies|sie|du"
_DE_VERDICT = ("falsch|nutzlos|unbrauchbar|sinnlos|quatsch|unsinn|hilft nicht|hilft mir nicht|hilft uns nicht"
               "|hilft mir gar nicht|hilft gar nicht|hilft mir uberhaupt nicht|hilft uberhaupt nicht|bringt nichts"
               "|bringt mir nichts|stimmt nicht|stimmt so nicht|stimmt einfach nicht|nicht hilfreich|nicht richtig"
               "|macht keinen sinn|ergibt keinen sinn|verstehen mich nicht|versteht mich nicht|horen mir nicht zu"
               "|funktioniert nicht|geht nicht|hat nicht geholfen|hat nicht funktioniert|liegen falsch|liegst falsch")
_FR_REPLY = "reponse|reponses|solution|ca|c|cela|ceci|vous|tu"
_FR_VERDICT = ("faux|fausse|inutile|inutiles|incorrect|incorrecte|n'aide pas|ne m'aide pas|ne m'aide pas du tout"
               "|ne m'aide en rien|ne sert a rien|ne me sert a rien|sert a rien|n'a aucun sens|n'a pas de sens|absurde"
               "|n'importe quoi|pas bon|pas juste|ne repond pas|ne marche pas|ne fonctionne pas|n'a pas marche"
               "|n'a pas fonctionne|trompez|vous trompez|te trompes|ne comprenez pas|ne m'ecoutez pas")
_ES_REPLY = "respuesta|respuestas|solucion|eso|esto|usted|tu|ustedes"
_ES_VERDICT = ("incorrecto|incorrecta|inutil|inutiles|mal|esta mal|no sirve|no sirve de nada|no sirve para nada"
               "|no ayuda|no me ayuda|no me ayuda nada|no me sirve|no tiene sentido|no tiene ningun sentido|no es correcto|no es cierto"
               "|no funciona|no funciono|no me entiende|no me entiendes|no me escucha|se equivoca|te equivocas"
               "|equivocado|equivocada|absurdo|absurda")
# A verdict said on its own: the whole clause, with an intensifier at most.
_ALONE = ("wrong|useless|incorrect|nonsense|rubbish|unhelpful|not helpful|completely wrong|totally wrong|so wrong"
          "|all wrong|just wrong|completely useless|totally useless|so useless|wrong answer|still wrong|not what i asked"
          "|falsch|nutzlos|quatsch|unsinn|vollig falsch|total falsch|komplett falsch|vollig nutzlos|leider falsch"
          "|faux|inutile|completement faux|totalement faux|archi faux|completement inutile|totalement inutile|nul"
          "|n'importe quoi"
          "|incorrecto|inutil|mal|totalmente mal|muy mal|completamente incorrecto|totalmente inutil|no sirve"
          "|makes no sense|macht keinen sinn|ergibt keinen sinn|n'a aucun sens|no tiene sentido")

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
    # An assistant giving up or apologising for failing: first person + inability (+ what it could not do).
    "give_up": (
        "i|we ... couldn't|could not|wasn't able to|was not able to|weren't able to|were unable to|was unable to"
        "|failed to|did not manage to|didn't manage to",
        "i|we ... can't|cannot|can not|am unable to|'m unable to|are unable to|am not able to|'m not able to"
        "|are not able to|won't be able to|will not be able to ... help|assist|do|complete|process|find|access|fix"
        "|resolve|retrieve|change|cancel|proceed|finish|look up|handle|locate|update|issue|perform|carry out|go further",
        "i can't help|i cannot help|i'm unable to|i am unable to|i'm not able to|i am not able to",
        "something went wrong|an error occurred|an error has occurred|ran into an error|ran into a problem",
        "sorry|unfortunately|afraid ... not possible|isn't possible|is not possible",
        "ich|wir ... kann|konnte|konnen|konnten|war|waren ... nicht|kein|keine|keinen|nichts|nicht in der lage",
        "kann|konnte|konnen|konnten ... ich|wir ... nicht|kein|keine|keinen|nichts",
        "kann|konnte ... nichts ... tun|machen|unternehmen|erreichen",
        "leider nicht moglich|nicht in der lage|etwas ist schiefgelaufen|ist etwas schiefgelaufen"
        "|ein fehler ist aufgetreten|ist ein fehler aufgetreten|es tut mir leid ich konnte nicht",
        "je|nous ... ne peux|ne pouvons|ne pourrai|ne pourrons|n'ai pas pu|n'avons pas pu|n'ai pas reussi"
        "|n'avons pas reussi|n'arrive pas|n'arrivons pas|ne parviens pas|ne suis pas en mesure|ne sommes pas en mesure",
        "je|nous ... n'ai|n'avons ... pas pu|pas reussi|pas ete en mesure",
        "impossible de|une erreur s'est produite|une erreur est survenue|il m'est impossible|il nous est impossible",
        "no puedo|no pude|no he podido|no podemos|no pudimos|no hemos podido|no me es posible|no me fue posible"
        "|no es posible|no fue posible|no logre|no consegui|no he logrado|no he conseguido|ocurrio un error"
        "|se produjo un error|hubo un error|ha ocurrido un error",
    ),
    # A user asking for a human: a request verb a few words before a person noun.
    "human": (
        f"{_EN_ASK} ... {_EN_PERSON}",
        f"{_EN_PERSON} ... talk to me|speak to me|speak with me|talk with me|chat with me|call me",
        "human agent|live agent|real person|real human|actual person|actual human|representative|human being",
        f"mit ... {_DE_PERSON} ... {_DE_ASK}",
        f"{_DE_ASK} ... mit ... {_DE_PERSON}",
        "echten menschen|echter mensch|echten mitarbeiter|einen mitarbeiter|kundenberater|menschlichen mitarbeiter",
        f"{_FR_ASK} ... {_FR_PERSON}",
        "un vrai conseiller|une vraie personne|un agent humain|un etre humain|un humain|un conseiller humain",
        f"{_ES_ASK} ... {_ES_PERSON}",
        "agente humano|persona real|un representante|un humano|una persona de verdad|asesor humano",
    ),
    # A user saying the answer is wrong or useless: a reference to the reply and a verdict, in one clause,
    # or a verdict alone, or still failing after the answer.
    "wrong": (
        f"{_EN_REPLY} ~ {_EN_VERDICT}",
        f"{_DE_REPLY} ~ {_DE_VERDICT}",
        f"{_FR_REPLY} ~ {_FR_VERDICT}",
        f"{_ES_REPLY} ~ {_ES_VERDICT}",
        f"^ {_ALONE} $",
        "wrong answer|useless answer|incorrect answer|unhelpful answer|wrong information|falsche antwort"
        "|nutzlose antwort|mauvaise reponse|reponse fausse|reponse inutile|respuesta incorrecta|respuesta equivocada"
        "|respuesta inutil",
        "still ~ doesn't work|does not work|not working|broken|wrong|failing",
        "funktioniert immer noch nicht|funktioniert noch immer nicht|geht immer noch nicht|immer noch falsch",
        "ne marche toujours pas|ne fonctionne toujours pas|marche toujours pas|toujours faux",
        "sigue sin funcionar|todavia no funciona|aun no funciona|sigue fallando|sigue mal|sigue sin servir",
        "you're not listening|you are not listening|you don't understand|you do not understand|n'importe quoi",
    ),
    # Words that, just before a match or between its parts, take its meaning back (or make it hypothetical).
    "negation": (
        "no", "not", "don't", "dont", "never", "without", "no need", "if", "nicht", "kein", "keine", "ohne", "nie",
        "wenn", "falls", "ob", "pas", "sans", "jamais", "ne", "n", "si", "sin", "nunca", "ni",
    ),
    # Words allowed between the parts of a `~` pattern: verbs "to be", intensifiers, "still", "again".
    "filler": (
        "is", "s", "are", "re", "was", "were", "just", "completely", "totally", "so", "really", "absolutely", "very",
        "still", "again", "simply", "plain", "all", "also", "utterly", "entirely", "quite", "pretty", "honestly",
        "literally", "clearly", "obviously", "ist", "war", "sind", "waren", "ja", "einfach", "vollig", "total",
        "komplett", "echt", "wirklich", "leider", "schon", "wieder", "auch", "absolut", "ganz", "immer", "noch",
        "doch", "so", "halt", "eben", "mal", "jetzt", "gar", "est", "c", "etait", "vraiment", "completement",
        "totalement", "encore", "tout", "a", "fait", "juste", "absolument", "toujours", "franchement", "carrement",
        "es", "esta", "fue", "era", "estan", "son", "totalmente", "completamente", "muy", "realmente", "de", "nuevo",
        "otra", "vez", "simplemente", "todavia", "sigue", "aun", "tambien", "absolutamente",
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
        heads = tuple({alt[0]: tuple(a for a in part if a[0] == alt[0]) for alt in part} for part in self.parts)
        object.__setattr__(self, "_heads", heads)

    def firsts(self) -> set[str]:
        return set(self._heads[0])


def parse(text: str) -> Pattern | None:
    """A pattern from its text: parts joined by ` ... ` or ` ~ `, alternatives by `|`, a
    leading `^` / trailing `$` anchoring it to its clause. A plain phrase is one part.

    >>> parse("talk|speak ... person").parts
    ((('talk',), ('speak',)), (('person',),))
    """
    words = text.split()
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
    """Patterns by category (`parse`); `negation` and `filler` are word lists."""

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
        object.__setattr__(self, "_negations", self.words("negation"))
        object.__setattr__(self, "_filler", frozenset(w for words in self.words("filler") for w in words))

    def words(self, category: str) -> tuple[tuple[str, ...], ...]:
        return tuple(alt for p in self.phrases.get(category, ()) for part in p.parts for alt in part)

    def find(self, category: str, parts: list[list[str]], words: frozenset[str] | None = None) -> bool:
        """Whether a pattern of `category` occurs in one of the clauses `parts` (`clauses`),
        not negated. `words`, the tokens of `parts` as a set, makes a text with no pattern's
        first word a set operation."""
        by_first = self._index.get(category, {})
        if words is not None and words.isdisjoint(by_first):
            return False
        negations = self._negations if category in NEGATED_CATEGORIES else ()
        for toks in parts:
            for i, tok in enumerate(toks):
                for pattern in by_first.get(tok, ()):
                    if pattern.start and i:
                        continue
                    if self._match(toks, i, pattern, 0, negations) \
                            and not _negated(toks[max(0, i - NEGATION_WINDOW):i], negations):
                        return True
        return False

    def _match(self, toks: list[str], i: int, pattern: Pattern, k: int, negations) -> bool:
        """Whether part `k` of `pattern` and the parts after it match from token `i`."""
        if i >= len(toks):
            return False
        for alt in pattern._heads[k].get(toks[i], ()):
            j = i + len(alt)
            if tuple(toks[i:j]) != alt:
                continue
            if k == len(pattern.parts) - 1:
                if not pattern.end or j == len(toks):
                    return True
                continue
            filler_only = pattern.gaps[k] == "~"
            for nxt in range(j, min(j + GAP, len(toks) - 1) + 1):
                if nxt > j and (toks[nxt - 1] not in self._filler if filler_only else _negated(toks[j:nxt], negations)):
                    break  # (a longer gap holds the same word)
                if self._match(toks, nxt, pattern, k + 1, negations):
                    return True
        return False

    def matches(self, category: str, text: str) -> bool:
        return self.find(category, clauses(text))

    def fingerprint(self) -> str:
        """A digest of every pattern: a derived table written with other phrases is not read."""
        data = {c: [[p.parts, p.gaps, p.start, p.end] for p in ps] for c, ps in self.phrases.items()}
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


def _negated(before: list[str], negations) -> bool:
    for neg in negations:
        n = len(neg)
        if any(tuple(before[j:j + n]) == neg for j in range(len(before) - n + 1)):
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
