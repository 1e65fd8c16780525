"""Addresses written with their `@` or their dots spelled out (`analytics.redact`'s `EMAIL` kind).

Each is found from its `@` (spelled or not) and read as the address it spells, so
`alice (at) example (dot) com` has the placeholder of `alice@example.com`. The forms, by how the
`@` is written:

- in brackets, `(at)`, `[at]`, `{at}`, `<at>`, `[@]`: any domain of two labels or more (`alice[at]example[.]com`,
  `alice (at) mail.example.org`);
- the bare word `at`, between dashes (`heidi -at- example -dot- com`) or underscores
  (`oscar_at_example_dot_com`): only with the domain's dots spelled the same way (` dot `, `-dot-`,
  `_dot_`, or in brackets) and a common top-level domain (`SPELLED_TLDS`), since `look it up at
  example.com`, `width at and dot is` and `created_at_index` are not addresses; or, bare, after a
  name holding a dot or an underscore, with plain dots (`john.smith at gmail.com`, `bob_smith at
  example.org`), a common top-level domain again;
- an `@` itself, with a dot of the domain spelled (`alice@example[dot]com`), or a comma for its last
  dot before a common top-level domain (`victor@example,com`); an address written plainly is
  `analytics.redact`'s own;
- an `@` or the domain's dots with spaces round them (`john @ gmail . com`, `john @gmail.com`,
  `john@ gmail .com`): a name right before the `@`, a domain of labels and a known top-level domain
  (`SPACED_TLDS`, in lower or upper case: not a word opening a sentence), so `meet @ 5 . ok`,
  `price @ 3.50` and `a . b` are no addresses. A dot with spaces after it alone counts after an `@`
  with spaces round it, or as the domain's one dot (`john@gmail. com`): `bob@example.com. Info …` is
  an address and a sentence. An `@` in brackets takes such a domain too (`john (at) gmail . com`).

A local part is at most 64 characters, read back from the `@`. The search barrier blinds what this
finds (`analytics.masking.blinded`), so a masked search sees no part of such an address either.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

import phonenumbers

# An `@` spelled out, each form a group. Found from its core and widened over the spaces round it
# (`_widened`): a pattern that opens with `[ \t]*` is tried at every space of a run, in time of the
# run's length squared.
_AT = re.compile(
    r"(?P<bracket>[(\[{<][ \t]*(?:at|@)[ \t]*[)\]}>])"
    r"|(?P<word>(?<=[ \t])at(?=[ \t]))"
    r"|(?P<dash>-[ \t]*at[ \t]*-)"
    r"|(?P<under>(?<=[^\W_])_at_(?=[^\W_]))"
    r"|(?P<sign>@)", re.IGNORECASE)
_TLD = r"[^\W\d_]{2,24}(?![\w-])"
# A label of a domain, at most 63 characters: in the bracketed and word forms, and after an `@`.
_LABEL = r"[^\W_](?:[\w-]{0,61}[^\W_])?"
# A dot spelled out (`(dot)`, `[.]`, `[dot]`, ` dot `), or a dot.
_DOT_SPELLED = r"(?:[ \t]*[(\[{<][ \t]*(?:dot|\.)[ \t]*[)\]}>][ \t]*|[ \t]+dot[ \t]+)"
_DOTS = re.compile(rf"{_DOT_SPELLED}|\.", re.IGNORECASE)
_SPELLED_DOMAIN = re.compile(rf"{_LABEL}(?:(?:{_DOT_SPELLED}|\.){_LABEL}){{0,6}}(?:{_DOT_SPELLED}|\.){_TLD}",
                             re.IGNORECASE)
# A comma for the last dot (`victor@example,com`).
_COMMA_DOTS = re.compile(r"[.,]")
_COMMA_DOMAIN = re.compile(rf"{_LABEL}(?:\.{_LABEL}){{0,6}},{_TLD}")
# Dashes round `dot` (`example -dot- com`); a label's own dashes are not followed by `dot-`.
_AFTER_DASH_DOT = r"[ \t]*dot[ \t]*-"
_DASH_DOT = rf"[ \t]*-{_AFTER_DASH_DOT}[ \t]*"
_DASH_DOTS = re.compile(rf"{_DASH_DOT}|\.", re.IGNORECASE)
_DASH_LABEL = rf"[^\W_](?:[^\W_]|-(?!{_AFTER_DASH_DOT})(?=[^\W_])){{0,62}}"
_DASH_DOMAIN = re.compile(rf"{_DASH_LABEL}(?:(?:{_DASH_DOT}|\.){_DASH_LABEL}){{0,6}}(?:{_DASH_DOT}|\.){_TLD}",
                          re.IGNORECASE)
# Underscores round `dot` (`example_dot_com`); a label holds no underscore.
_UNDER_DOTS = re.compile(r"_dot_|\.", re.IGNORECASE)
_UNDER_LABEL = r"[^\W_](?:[^\W_]|-(?=[^\W_])){0,62}"
_UNDER_DOMAIN = re.compile(rf"{_UNDER_LABEL}(?:(?:_dot_|\.){_UNDER_LABEL}){{0,6}}(?:_dot_|\.){_TLD}",
                           re.IGNORECASE)
# The spaced form's domain (`gmail . com`): each dot with spaces before it, after it or both; after an `@`
# written without spaces round it, a dot with spaces after it alone only as the domain's one dot
# (`gmail. com`; in `bob@example.com. Info` it ends a sentence).
_SPACED_DOMAIN = re.compile(rf"{_LABEL}(?:[ \t]*\.[ \t]*{_LABEL}){{0,6}}[ \t]*\.[ \t]*{_TLD}")
_TIGHT_DOT = r"(?:[ \t]+\.[ \t]*|\.)"
_TIGHT_DOMAIN = re.compile(rf"{_LABEL}(?:\.[ \t]+{_TLD}|(?:{_TIGHT_DOT}{_LABEL}){{0,6}}{_TIGHT_DOT}{_TLD})")
_SPACED_DOTS = re.compile(r"[ \t]*\.[ \t]*")
_DOT_THEN_SPACE = re.compile(r"(?<![ \t])\.[ \t]")
_LOCAL = re.compile(r"[\w.+'-]")
#: Top-level domains an address spelled with the bare word `at` may end in: common ones that are no
#: English word (`… at and dot is …` is a sentence, `is` Iceland's domain).
SPELLED_TLDS = frozenset(("com", "org", "net", "edu", "gov", "mil", "int", "io", "uk", "de", "fr", "nl", "eu", "ca",
                          "au", "ch", "se", "es", "pl", "ru", "cn", "jp", "br", "info", "biz", "dev", "app"))
#: Top-level domains an address written with spaces round its `@` or its dots may end in: the common ones
#: above, a country's two letters (the regions `phonenumbers` knows: `co`, `ai`, `me`, `io`) and a few
#: newer generic ones. (An `@` said so is no word; `meet @ 5 . ok` still ends in no domain.)
SPACED_TLDS = SPELLED_TLDS | {r.lower() for r in phonenumbers.SUPPORTED_REGIONS} | {
    "xyz", "online", "site", "tech", "cloud", "email", "mobi", "asia"}


@functools.cache
def _spelled_sign():
    """RE2: what every spelled address holds, an `@` in brackets, a dot spelled out, a comma after
    an `@`, or an `@` or a dot after it with a space next to it; a text without one holds none.
    (RE2 for its speed: most texts are read only by this.)"""
    import re2

    options = re2.Options()
    options.log_errors = False
    return re2.compile(r"(?i)[(\[{<][ \t]*(?:at|@|dot|\.)[ \t]*[)\]}>]|[ \t]dot[ \t]|-[ \t]*dot[ \t]*-|_dot_|@[^\s@,]*,"
                       r"|[._][\w'+-]*[ \t]+at[ \t]+[\w-]+\.|[ \t]@|@[ \t]|@[^\s@]*(?:[ \t]\.|\.[ \t])", options)


def obfuscated_emails(text: str) -> Iterator[tuple[int, int, str]]:
    """Each address written with its `@` or its dots spelled out: (start, end, the address with `@`
    and dots).

    >>> text = "alice (at) example (dot) com, bob[at]mail[.]example[.]org, carol at acme dot io"
    >>> [v for _, _, v in obfuscated_emails(text + "; look at example.com, meet at noon dot, at and dot is")]
    ['alice@example.com', 'bob@mail.example.org', 'carol@acme.io']
    >>> text = "dan@example[dot]com, eve@example,com, heidi -at- example -dot- com, oscar_at_example_dot_com"
    >>> [v for _, _, v in obfuscated_emails(text + ", ok@example.com, created_at_index, me@home,please")]
    ['dan@example.com', 'eve@example.com', 'heidi@example.com', 'oscar@example.com']
    """
    try:
        if not _spelled_sign().search(text):
            return
    except UnicodeEncodeError:  # (a lone surrogate, which RE2 cannot read: the text is read in full)
        pass
    look = 0
    while (core := _AT.search(text, look)) is not None:
        look = core.end()
        form = core.lastgroup
        at, after = (core.start(), core.end()) if form == "under" else _widened(text, core.start(), core.end())
        spaced = form == "sign" and (at, after) != (core.start(), core.end())  # (spaces round an `@`)
        start = at
        while start > max(0, at - 64) and _LOCAL.match(text, start - 1):
            start -= 1
        while start < at and not text[start].isalnum():  # (a local part starts with a letter or digit)
            start += 1
        if start == at:
            continue
        if spaced and not text[at - 1].isalnum():
            continue  # (spaces round an `@` after no name: `… ) @ x . com`)
        found = _domain(text, after, form, dotted_name=form == "word" and _DOTTED_NAME.fullmatch(text, start, at) is not None)
        if found is None and form in ("sign", "bracket") and any(c.isalpha() for c in text[start:at]):
            found = _spaced_domain(text, after, spaced or form == "bracket")  # (a name before it: not `10 @ 5 . de`)
        if found is None:
            continue
        end, domain = found
        local = text[start:at]
        if form in ("bracket", "word"):  # (its dots may be spelled in the local part too: `jane dot doe at …`)
            start, local = _spelled_local(text, start, local)
        yield start, end, (local + "@" + domain).casefold()
        look = end


# A person's name as an address's local part: words of letters joined by dots or underscores
# (`john.smith`, `bob_smith`; not `v1.2`).
_DOTTED_NAME = re.compile(r"[^\W\d_]+(?:[._][^\W\d_]+)+")
# A word of a local part and a spelled dot after it, ending where the part read so far starts.
_LOCAL_BEFORE = re.compile(rf"(?<![\w.+'-])([^\W_][\w.+'-]{{0,63}})(?:{_DOT_SPELLED})\Z", re.IGNORECASE)


def _spelled_local(text: str, start: int, local: str) -> tuple[int, str]:
    """A local part read back over the dots spelled in it, at most 64 characters: where it starts, and
    it with plain dots.

    >>> text = "write to jane dot doe at example dot com"
    >>> _spelled_local(text, text.index("doe"), "doe")
    (9, 'jane.doe')
    """
    while True:
        m = _LOCAL_BEFORE.search(text, max(0, start - 128), start)
        if m is None or len(m.group(1)) + 1 + len(local) > 64:
            return start, local
        start, local = m.start(1), m.group(1) + "." + local


def _domain(text: str, at: int, form: str, dotted_name: bool = False) -> tuple[int, str] | None:
    """The domain at `at` after an `@` written in `form`: where it ends and its name with plain dots,
    or None when the form's rule does not hold (module docstring). `dotted_name`: the name before a
    bare `at` holds a dot or an underscore (`john.smith at gmail.com`), so plain dots will do."""
    if form == "dash":
        pattern, dots = _DASH_DOMAIN, _DASH_DOTS
    elif form == "under":
        pattern, dots = _UNDER_DOMAIN, _UNDER_DOTS
    else:
        pattern, dots = _SPELLED_DOMAIN, _DOTS
    m = pattern.match(text, at)
    if m is None and form == "sign":
        pattern, dots = _COMMA_DOMAIN, _COMMA_DOTS
        m = pattern.match(text, at)
    if m is None:
        return None
    written = dots.findall(m.group())
    tld = m.group()[m.group().rindex(written[-1]) + len(written[-1]):].lower()
    spelled = any(d != "." for d in written)
    if form == "bracket" or (spelled and (form == "sign" and pattern is _SPELLED_DOMAIN or tld in SPELLED_TLDS)) \
            or (dotted_name and tld in SPELLED_TLDS):
        return m.end(), dots.sub(".", m.group())
    return None


def _spaced_domain(text: str, at: int, spaced: bool) -> tuple[int, str] | None:
    """The domain at `at` after an `@` when it or the `@` has spaces round it (`gmail . com`), a known
    top-level domain in lower or upper case ending it: where it ends and its name with plain dots, or None.
    `spaced`: the `@` had spaces round it (then a dot may have spaces after it alone: `gmail. com`;
    without, only as the domain's one dot and before a common top-level domain, `SPELLED_TLDS`:
    in `ann@home. so tired` the dot ends a sentence).

    >>> [_spaced_domain(t, t.index("@") + 2, True) for t in ("john@ gmail . com", "ann @ home. COM", "me @ home . Com")]
    [(17, 'gmail.com'), (15, 'home.COM'), None]
    >>> [_spaced_domain(t, 4, False) for t in ("bob@example.com. info", "bob@example .com", "bob@example. com")]
    [None, (16, 'example.com'), (16, 'example.com')]
    >>> _spaced_domain("ann@home. so tired", 4, False), _spaced_domain("ann@home .so tired", 4, False)
    (None, (12, 'home.so'))
    """
    m = (_SPACED_DOMAIN if spaced else _TIGHT_DOMAIN).match(text, at)
    if m is None or not (spaced or " " in m.group() or "\t" in m.group()):
        return None  # (no space anywhere: an address written plainly, `analytics.redact`'s own)
    tld = m.group()[m.group().rindex(".") + 1:].strip(" \t")
    known = SPACED_TLDS if spaced or not _DOT_THEN_SPACE.search(m.group()) else SPELLED_TLDS
    if tld.lower() not in known or not (tld.islower() or tld.isupper()):
        return None
    return m.end(), _SPACED_DOTS.sub(".", m.group())


def _widened(text: str, start: int, end: int) -> tuple[int, int]:
    """A spelled `@` at text[start:end] widened over the spaces and tabs on each side of it.

    >>> _widened("bob  (at) x", 5, 9)
    (3, 10)
    """
    while start and text[start - 1] in " \t":
        start -= 1
    while end < len(text) and text[end] in " \t":
        end += 1
    return start, end
