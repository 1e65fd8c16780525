"""Masking on the way out (contract §11): the one mechanism every text leaving the query layer goes through.

Under a masking policy (`analytics.policy`), each personal value is replaced by its placeholder
(`analytics.redact`: `<EMAIL_1>`, stable per value for the life of the process) wherever text
leaves the tool:

- answers: every frame `analytics.frames.fetch_frame` returns and every report, CSV and download
  (`mask_arrow`; exports mask ids and labels too, `every_text_column`);
- single texts: a thread id in a header or a label, a download's file name, a log or error line
  (`mask_text`, `file_name`);
- the command line: every line a command prints under `--redact`, on stdout and stderr
  (`masked_output`), whatever printed it;
- text search: a masking connection searches each text with every stretch that may hold a
  personal value replaced by a barrier no query matches into or across (`blind_search`,
  `searchable_sql`), so no search — whole value or any part of one — can tell what a masked
  value holds. The barrier is wider than what the detector masks (no checksum, no validity
  check: any run holding `@` — up to white space and the punctuation code puts round a value —,
  any run of 7 digits or more, groups of four to six digits and more joined by commas (or `;'~#`),
  anything shaped like an IP address or an IBAN, an address with its `@` spelled out where the
  detector finds one), so a search is blind inside every masked value and, fail-closed, inside
  some text that is shown unmasked (a date such as `2025-03-05T19:45`, a time `12:30:45`).

>>> t = pa.table({"thread_id": ["acme:web:bob@example.com"], "content": ["mail bob@example.com"]})
>>> mask_arrow(t, Policy(redact=True), every_text_column=True).to_pylist()
[{'thread_id': 'acme:web:<EMAIL_1>', 'content': 'mail <EMAIL_1>'}]
"""

from __future__ import annotations

import codecs
import functools
import os
import re
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

import duckdb
import pyarrow as pa

from analytics.catalog import ALL_TABLES
from analytics.policy import Policy, effective
from analytics.reader_view import DIGIT, view
from analytics.terminal import TextWrapper
from analytics.text_match import BLIND_FUNCTION, register_search_functions
from analytics.redact import CONFIG_ENV, RedactConfig, Redactor, find_terms
from analytics.redact_spelled import obfuscated_emails

#: Text columns the catalogues declare and that never hold personal data (keys, roles,
#: model names, flags): an answer's column of one of these names is left as it is in an
#: answer read in the tool (a page's table, a notebook frame); every other text column of an
#: answer is masked (a query's own columns, e.g. a preview of the first question, included).
#: A name some table declares personal is always masked. Anything exported masks them too.
NOT_PERSONAL = frozenset(
    c.name for t in ALL_TABLES for c in t.columns if c.type.arrow == pa.string() and not c.personal
) - frozenset(c.name for t in ALL_TABLES for c in t.columns if c.personal)

_redactors: dict[str | None, Redactor] = {}
_redactors_lock = threading.Lock()


def redactor() -> Redactor:
    """The process's redactor (for the config file `TRANSCRIPT_LENS_REDACT_CONFIG` names, else
    the defaults): one placeholder per value for the life of the process, so a CLI export,
    a notebook session or an app server names a value the same way in every answer."""
    key = os.environ.get(CONFIG_ENV) or None
    with _redactors_lock:
        r = _redactors.get(key)
        if r is None:
            r = _redactors[key] = Redactor(RedactConfig.from_environment())
        return r


# --- answers -----------------------------------------------------------------------------------

def mask_arrow(table: pa.Table, policy: Policy, *, every_text_column: bool = False) -> pa.Table:
    """`table` with its personal text masked under `policy` (unchanged when it does not mask).

    `every_text_column`: ids and labels too (a CSV leaving the tool: a thread key can hold
    an email); otherwise the text columns named in `NOT_PERSONAL` stay as they are.
    Each distinct value is masked once.

    >>> t = pa.table({"thread_id": ["bob@example.com"], "content": ["mail bob@example.com"]})
    >>> mask_arrow(t, Policy(redact=True)).to_pylist()
    [{'thread_id': 'bob@example.com', 'content': 'mail <EMAIL_1>'}]
    """
    if not policy.redact:
        return table
    r = redactor()
    columns = []
    for name, column in zip(table.column_names, table.columns):
        if every_text_column or name not in NOT_PERSONAL:
            if _is_text(column.type):
                column = _mask_column(column, r)
            elif _holds_text(column.type):  # `list(content)`, a struct or map of texts
                column = pa.chunked_array([pa.array(_mask_nested(column.to_pylist(), r), type=column.type)])
        columns.append(column)
    return pa.table(columns, names=table.column_names)


def _is_text(type_: pa.DataType) -> bool:
    return pa.types.is_string(type_) or pa.types.is_large_string(type_) or pa.types.is_string_view(type_)


def _holds_text(type_: pa.DataType) -> bool:
    if _is_text(type_):
        return True
    if pa.types.is_map(type_):
        return _holds_text(type_.key_type) or _holds_text(type_.item_type)
    if pa.types.is_list(type_) or pa.types.is_large_list(type_) or pa.types.is_fixed_size_list(type_):
        return _holds_text(type_.value_type)
    if pa.types.is_struct(type_):
        return any(_holds_text(type_.field(i).type) for i in range(type_.num_fields))
    return False


def _mask_nested(value, r: Redactor):
    if isinstance(value, str):
        return _mask_value(value, r)
    if isinstance(value, list):  # (a map is a list of (key, value) tuples)
        return [_mask_nested(v, r) for v in value]
    if isinstance(value, tuple):
        return tuple(_mask_nested(v, r) for v in value)
    if isinstance(value, dict):
        return {k: _mask_nested(v, r) for k, v in value.items()}
    return value


def _mask_column(column: pa.ChunkedArray, r: Redactor) -> pa.ChunkedArray:
    column = column.cast(pa.string())
    encoded = column.dictionary_encode().combine_chunks()
    values = [_mask_value(v, r) for v in encoded.dictionary.to_pylist()]
    return pa.chunked_array([pa.DictionaryArray.from_arrays(encoded.indices, pa.array(values, pa.string())).cast(pa.string())])


def _mask_value(value: str | None, r: Redactor) -> str | None:
    # JSON text (tool calls, metadata, interrupt values) is masked value by value and
    # stays JSON; anything else as text.
    if value and value[:1] in "[{":
        return r.json_text(value)
    return r.text(value)


# --- single texts ------------------------------------------------------------------------------

def mask_text(text: str | None, policy: Policy | None = None) -> str | None:
    """`text` as it may leave under `policy` on top of the session's and the deployment's
    (`analytics.policy.effective`): an id in a header, a label, a log or error line.

    >>> mask_text("thread acme:web:bob@example.com", Policy(redact=True))
    'thread acme:web:<EMAIL_1>'
    """
    if text is None or not effective(policy).redact:
        return text
    return _mask_value(text, redactor())


def mask_keys(frame, policy: Policy | None = None):
    """An answer's frame (`analytics.frames.fetch_frame`: its personal columns masked) as it may leave
    as a document a command prints or writes: the columns the answer left as stored
    (`NOT_PERSONAL`: a thread key can hold an e-mail) masked too, value by value. Every value is
    masked once: masked again, a placeholder is text a configured pattern may match (`[A-Z]+_[0-9]+`
    made `<EMAIL_1>` `<<TICKET_2>>`), and a document masked as printed lines breaks where a pattern
    matches a number or a key, or passes a value that a CSV quotes or JSON escapes across a line
    break in pieces. Print the result inside `premasked`.

    >>> import pandas
    >>> frame = pandas.DataFrame({"thread_id": ["acme:web:bob@example.com"], "content": ["mail <EMAIL_1>"]})
    >>> mask_keys(frame, Policy(redact=True)).to_dict("records")
    [{'thread_id': 'acme:web:<EMAIL_1>', 'content': 'mail <EMAIL_1>'}]
    """
    if not effective(policy).redact:
        return frame
    keys = {c: frame[c].map(lambda v: mask_text(v, policy), na_action="ignore")
            for c in frame.columns if c in NOT_PERSONAL}
    return frame.assign(**keys)


def mask_lines(text: str, policy: Policy | None = None) -> str:
    """A document as it may leave (a table, CSV or JSON the command line prints or writes), masked
    as text, its layout kept: what `masked_output` does to every line a command prints.

    >>> mask_lines('  {"thread_id": "acme:web:bob@example.com"},', Policy(redact=True))
    '  {"thread_id": "acme:web:<EMAIL_1>"},'
    """
    return redactor().text(text) if effective(policy).redact else text


def file_name(name: str, policy: Policy | None = None) -> str:
    """A file name as it may leave: masked, placeholders spelled without `<>` (not welcome in file names).

    >>> file_name("notes of bob@example.com.csv", Policy(redact=True)), file_name("search.csv", Policy(redact=True))
    ('notes of EMAIL_1.csv', 'search.csv')
    """
    if not effective(policy).redact:
        return name
    stem, suffix = (name[:-len(s)], s) if (s := _suffix(name)) else (name, "")
    return re.sub(r"[<>]", "", redactor().text(stem)) + suffix


def _suffix(name: str) -> str:
    match = re.search(r"\.(?:csv|jsonl?|txt|html|md|zip|parquet)$", name, re.IGNORECASE)
    return match.group() if match else ""


# --- the command line's output -----------------------------------------------------------------

class _MaskedStream(TextWrapper):
    """A text stream that writes each complete line masked (a value never spans lines); the
    last, unfinished line when the command ends (`masked_output`)."""

    def __init__(self, inner) -> None:
        super().__init__(inner)
        self._pending = ""
        self.buffer = _MaskedBytes(self)
        self.premasked = False

    def write(self, s: str) -> int:
        if self.premasked:
            self.close_line()
            return self._inner.write(s)
        self._pending += s
        if "\n" in self._pending:
            done, _, self._pending = self._pending.rpartition("\n")
            self._inner.write(mask_lines(done + "\n", Policy(redact=True)))
        return len(s)

    def close_line(self) -> None:
        if self._pending:
            self._inner.write(mask_lines(self._pending, Policy(redact=True)))
            self._pending = ""
        self._inner.flush()


class _MaskedBytes:
    """`sys.stdout.buffer` under masking: bytes written are UTF-8 text, masked as lines are
    (decoded incrementally: a character cut between two writes stays whole); inside `premasked`,
    written as they are."""

    def __init__(self, stream: _MaskedStream) -> None:
        self._stream = stream
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def write(self, data: bytes) -> int:
        inner = getattr(self._stream._inner, "buffer", None)
        if self._stream.premasked and inner is not None:
            self._stream.close_line()  # (flushes the text stream before its bytes)
            return inner.write(data)
        self._stream.write(self._decoder.decode(bytes(data)))
        return len(data)

    def flush(self) -> None:
        self._stream.flush()


@contextmanager
def premasked() -> Iterator[None]:
    """Inside the block, what is printed to stdout is written as it is: a document whose every
    value was masked already (`mask_keys`). Masked again as text, a configured pattern that
    matches its numbers or keys (`\\d{5,}`) would break it (`"content_chars": <CUSTNO_3>`).

    >>> with premasked(): print("no policy, no change")
    no policy, no change
    """
    stream = sys.stdout
    if not isinstance(stream, _MaskedStream):
        yield
        return
    stream.premasked = True
    try:
        yield
    finally:
        stream.premasked = False


@contextmanager
def masked_output(on: bool = False) -> Iterator[None]:
    """Inside the block, under a masking policy (or `on`), everything printed to stdout and
    stderr is masked line by line: a command's rows, headers, listings, log lines and error
    messages alike.

    >>> with masked_output(): print("no policy, no change")
    no policy, no change
    """
    if not (on or effective().redact):
        yield
        return
    saved = sys.stdout, sys.stderr
    out, err = _MaskedStream(sys.stdout), _MaskedStream(sys.stderr)
    sys.stdout, sys.stderr = out, err
    try:
        yield
    finally:
        out.close_line()
        err.close_line()
        sys.stdout, sys.stderr = saved


# --- text search -------------------------------------------------------------------------------

#: The connection variable (DuckDB `SET VARIABLE`) holding the search barrier of a masking
#: connection; unset (NULL) on a connection that does not mask.
SEARCH_BARRIER_VARIABLE = "tl_search_barrier"

# Every stretch of text that may hold a personal value of a built-in kind, for RE2. A superset
# of the detector's findings on the same view of the text (`analytics.reader_view`): no checksum
# or validity test, every digit script, every dash and space, full-width forms of the separators,
# colons and hex letters, invisible characters (format characters, combining marks) anywhere.
_INVISIBLE = r"\p{Cf}\p{Mn}\p{Me}"
_FULL_WIDTH_SEP = r"\x{FF08}\x{FF09}\x{FF0B}\x{FF0D}\x{FF0E}\x{FF0F}"  # （ ） ＋ － ． ／
_MIDDLE_DOTS = r"\x{B7}\x{2022}\x{2027}\x{2219}\x{22C5}\x{30FB}\x{FF65}"
# One separator between digits: a character, or an escape of one (`&nbsp;`, `&#160;`, `%20`, `\u00a0`).
_SEP = (rf"(?:[\p{{Zs}}\p{{Pd}}\s().+/_:|\-\x{{2212}}{_FULL_WIDTH_SEP}{_MIDDLE_DOTS}{_INVISIBLE}]"
        r"|&(?:amp;)?#?[0-9A-Za-z]{1,31};?|%(?:25)*[0-9A-Fa-f]{2}|\\+[uUxX]\{?[0-9A-Fa-f]{2,8}\}?)")
_AT = r"@\x{FF20}\x{FE6B}"
_DOT = r".\x{3002}\x{FF0E}\x{FF61}\x{FE52}"
_HEX = rf"\p{{Nd}}A-Fa-f\x{{FF21}}-\x{{FF26}}\x{{FF41}}-\x{{FF46}}{_INVISIBLE}"
_COLON = r":\x{FF1A}"
_NOT_IN_ADDRESS = r'(){}",;<>'  # (a quoted local part, `"john doe"@…`, is the next rule's)
_BUILTIN_BARRIER = "|".join([
    # any run holding an @ between characters no address holds (an email, glued to anything but
    # white space and the punctuation that code and JSON put round a value: `f({"to":"a@b.c"})`
    # keeps `f`, `to` and the other arguments searchable); `[`, `]` and `:` only before the `@`
    # (a domain literal, `bob@[IPv6:2001:db8::1]`, holds them)
    rf"[^\s{_AT}{_NOT_IN_ADDRESS}\[\]:]*[{_AT}][^\s{_AT}{_NOT_IN_ADDRESS}]*",
    rf'"[^"\n]{{0,64}}"[{_AT}][^\s{_AT}]*',  # a quoted local part with its spaces (`"john doe"@example.com`)
    # an @ written escaped: `%40`, `%2540`, `&#64;`, `&#64`, `&#x40`, `&commat;`, `\u0040`, `\x40`, and a
    # full-width `＠` so (`%EF%BC%A0`, `&#65312;`, `&#xFF20;`, `\uFF20`)
    r"\S*(?i:%(?:25)*(?:40|EF%(?:25)*BC%(?:25)*A0|EF%(?:25)*B9%(?:25)*AB)|&(?:amp;)?#0*(?:64|65312|65131)"
    r"|&(?:amp;)?#x0*(?:40|FF20|FE6B)|&(?:amp;)?commat;?|\\+u0*(?:40|FF20|FE6B)|\\+u\{0*40\}|\\+x40)\S*",
    rf"{DIGIT}(?:{_SEP}{{0,3}}{DIGIT}){{6,}}",  # 7 digits or more (superscripts too): cards, phones, SSNs, long ids
    # groups of a card's sizes joined by a comma, semicolon, apostrophe, tilde or hash alone
    # (`4111,1111,1111,1111`; not `1,234,567`)
    rf"{DIGIT}{{4,6}}(?:[,;'~#\x{{FF0C}}\x{{FF1B}}]{DIGIT}{{3,6}})+",
    rf"[A-Za-z\x{{FF21}}-\x{{FF3A}}\x{{FF41}}-\x{{FF5A}}]{{2}}[{_INVISIBLE}]*\p{{Nd}}[{_INVISIBLE}]*\p{{Nd}}"
    rf"(?:[\p{{Zs}}\p{{Pd}}\s./_\-{_FULL_WIDTH_SEP}{_MIDDLE_DOTS}{_INVISIBLE}]*[\p{{Nd}}A-Za-z\x{{FF10}}-\x{{FF5A}}]){{11,30}}",  # IBAN-shaped
    rf"\p{{Nd}}(?:[{_INVISIBLE}]*\p{{Nd}}){{0,2}}(?:[{_INVISIBLE}]*[{_DOT}][{_INVISIBLE}]*\p{{Nd}}(?:[{_INVISIBLE}]*\p{{Nd}}){{0,2}}){{3}}",  # IPv4-shaped
    rf"[{_HEX}]*[{_COLON}][{_HEX}{_DOT}]*[{_COLON}][{_HEX}{_COLON}{_DOT}%]*",  # IPv6-shaped (two colons or more)
    r"(?:0[xX][0-9A-Fa-f]{1,2}|\p{Nd}{1,3})(?:[.](?:0[xX][0-9A-Fa-f]{1,2}|\p{Nd}{1,3})){3}",  # IPv4 with octets in hex
    # a URL's host of numbers, which a browser reads as an IPv4 address in one to four parts (`http://10.1.258/`)
    r"://(?:[^\s/?#@]*@)?(?:0[xX][0-9A-Fa-f]*|\p{Nd}+)(?:[.](?:0[xX][0-9A-Fa-f]*|\p{Nd}+)){0,3}",
])
#: The barrier when a configured pattern cannot be read by RE2: every text is blind (fail closed).
_BLIND = r"(?s).+"


def search_barrier(config: RedactConfig | None = None) -> str:
    """The RE2 expression of every stretch a masking search cannot see into: the built-in kinds and
    the configured patterns, matched in a text as stored and in the detector's view of it (`blinded`).
    (The configured terms are found by the detector itself, in `blinded`: one expression of thousands
    of terms, each character in every spelling the view folds, would be too large for RE2 and take
    seconds to compile.)

    >>> text = "mail alice.pii@acme-mail.com or 4111.1111.1111.1111, order A-1043"
    >>> duckdb.connect().execute("SELECT regexp_replace(?, ?, '#', 'g')", [text, search_barrier()]).fetchall()[0][0]
    'mail # or #, order A-1043'
    """
    config = config or redactor().config
    parts = [_BUILTIN_BARRIER, *(p for _kind, p in config.patterns)]
    return "|".join(f"(?:{p})" for p in parts)


@functools.lru_cache(maxsize=8)
def _barrier(config: RedactConfig):
    """`search_barrier(config)` compiled by RE2 for Python, or None when RE2 cannot read it (a
    configured pattern it refuses: every text is blind)."""
    import re2

    options = re2.Options()
    options.log_errors = False
    options.max_mem = 64 << 20
    try:
        return re2.compile(search_barrier(config), options)
    except re2.error:
        return None


def blinded(text: str, config: RedactConfig | None = None) -> str:
    """`text` with every stretch a masking search cannot see into made one NUL character, read as
    the masking detector reads it: each stretch of `search_barrier` and each configured term in the
    view of the text (`analytics.reader_view.view`: escapes read, digits of every script ASCII,
    invisible characters dropped), mapped back to the text it was read from. One mechanism for
    every spelling the detector reads: `alice=40example.com` (quoted-printable), `&#52;&#49;…` (a
    card's digits as character references), `④①①①…`; and each address the detector finds with its
    `@` spelled out (`peggy (at) example (dot) com`). (The SQL barrier then runs on the stored text
    too: `searchable_sql`.)

    >>> blinded("ask alice=40example.com or &#52;&#49;&#49;&#49; &#49;&#49;&#49;&#49; today")
    'ask \\x00 or \\x00 today'
    >>> blinded("ask peggy (at) example (dot) com or olivia at example dot com today")
    'ask \\x00 or \\x00 today'
    """
    return blinder(config)(text)


def blinder(config: RedactConfig | None = None) -> Callable[[str], str]:
    """`blinded` for `config` (the process's redactor's by default), its barrier compiled once: what
    the search's SQL function runs over each batch of texts.

    >>> blinder()("ring &#48;800 123 4567 or ask")
    'ring \\x00 or ask'
    """
    config = config or redactor().config
    barrier = _barrier(config)
    if barrier is None:
        return lambda text: "\0"
    return functools.partial(_blinded, config=config, barrier=barrier)


def _blinded(text: str, config: RedactConfig, barrier) -> str:
    seen, where = view(text)
    spans = find_terms(text, config) if config.terms else []
    # An address with its `@` spelled out (`peggy (at) example (dot) com`), which no expression of
    # the barrier holds: where the detector finds one (`analytics.redact_spelled.obfuscated_emails`).
    for start, end, _value in obfuscated_emails(seen):
        spans.append((start, end) if where is None else (where[start], where[end] if end < len(where) else len(text)))
    if seen != text:
        try:
            found_all = list(barrier.finditer(seen))
        except UnicodeEncodeError:  # (a lone surrogate, which RE2 cannot read: blind, fail closed)
            return "\0"
        for found in found_all:
            start, end = found.span()
            if end > start:
                spans.append((start, end) if where is None else (where[start], where[end] if end < len(where) else len(text)))
    if not spans:
        return text
    out, at = [], 0
    for start, end in sorted(spans):
        if end <= at:
            continue
        out.append(text[at:max(at, start)])
        out.append("\0")
        at = end
    return "".join(out) + text[at:]


def blind_search(con: duckdb.DuckDBPyConnection) -> None:
    """Make `con`'s text searches (`searchable_sql`) blind inside personal values: what a masking
    connection does when it is opened (`analytics.db`)."""
    register_search_functions(con)
    barrier = search_barrier()
    try:
        con.execute("SELECT regexp_matches('', ?)", [barrier]).fetchall()
    except duckdb.Error:
        barrier = _BLIND  # a configured pattern RE2 cannot read: no search sees anything
    con.execute(f"SET VARIABLE {SEARCH_BARRIER_VARIABLE} = ?", [barrier])


#: SQL: true on a connection whose searches are blind inside personal values (`blind_search`).
BLIND_SQL = f"getvariable('{SEARCH_BARRIER_VARIABLE}') IS NOT NULL"


def shown_whole_sql(expression: str) -> str:
    """SQL: true when `expression` holds no stretch of `search_barrier` and no configured term (always,
    on a connection that does not mask). A masking connection compares or lists a value verbatim only
    where this holds (a metadata filter, the metadata a cohort is chosen by): a value with a personal
    value in it neither matches a guess nor is offered, so neither confirms what masking hides.

    >>> shown_whole_sql("k")
    "(NOT getvariable('tl_search_barrier') IS NOT NULL OR strpos(regexp_replace(tl_blind(k), getvariable('tl_search_barrier'), chr(0), 'g'), chr(0)) = 0)"
    """
    return f"(NOT {BLIND_SQL} OR strpos({searchable_sql(expression)}, chr(0)) = 0)"


def shown_whole(values: Iterable[str]) -> list[str]:
    """The `values` holding no stretch of `search_barrier` (`shown_whole_sql` in Python, on an
    in-memory connection: RE2, as the database reads it), in order: the values a masking reader's
    option may compare verbatim (`--thread`, `--tenant`, `--sub-tenant`). A configured pattern RE2
    cannot read keeps none (fail closed).

    >>> shown_whole(["acme:web:sess-1", "acme:web:ann.pii@example.com"])
    ['acme:web:sess-1']
    """
    values = list(values)
    if not values:
        return []
    con = duckdb.connect()
    try:
        try:
            hidden = {v for (v,) in con.execute("SELECT v FROM unnest(?::VARCHAR[]) AS u(v) WHERE regexp_matches(v, ?)",
                                                [values, search_barrier()]).fetchall()}
        except duckdb.Error:
            return []
    finally:
        con.close()
    return [v for v in values if v not in hidden and "\0" not in blinded(v)]


def searchable_sql(column: str) -> str:
    """SQL: the text of `column` as a masking connection's search sees it, each stretch of
    `search_barrier` — in the text as stored and in the detector's view of it (`blinded`) — and each
    configured term replaced by a NUL character (on a connection that does not mask: NULL,
    and `BLIND_SQL` is false).

    >>> searchable_sql("m.content")
    "regexp_replace(tl_blind(m.content), getvariable('tl_search_barrier'), chr(0), 'g')"
    """
    return f"regexp_replace({BLIND_FUNCTION}({column}), getvariable('{SEARCH_BARRIER_VARIABLE}'), chr(0), 'g')"


# --- keys a masking reader holds ---------------------------------------------------------------

_PLACEHOLDER = re.compile(r"<[A-Z][A-Z0-9_]*_\d+>")


def stored_keys(con: duckdb.DuckDBPyConnection, shown: str, column: str = "thread_id", table: str = "threads") -> list[str]:
    """The stored values of `table.column` that mask to `shown`, in order: how an app that shows a
    masked key (`acme:web:<EMAIL_1>` in a table, a picker, a link) finds the row it stands for.
    The masked key is the token: the stored one never reaches the page or the address bar.
    Candidates are the values `shown`'s literal parts match (a placeholder matches anything), each
    masked by this process's redactor and kept when it reads as `shown`; the connection's tenant
    scope holds. Two stored values masked alike (an email in two cases) both come back.

    >>> stored_keys(con, "acme:web:<EMAIL_1>")  # doctest: +SKIP
    ['acme:web:bob@example.com']
    """
    if not shown:
        return []
    parts = _PLACEHOLDER.split(shown)
    pattern = "%".join(p.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") for p in parts)
    rows = con.execute(
        f'SELECT DISTINCT "{column}" FROM "{table}" WHERE "{column}" LIKE ? ESCAPE \'\\\' ORDER BY 1', [pattern]
    ).fetchall()
    r = redactor()
    return [v for (v,) in rows if _mask_value(v, r) == shown]


def holds_placeholder(text: str) -> bool:
    """Whether `text` holds a placeholder (`<EMAIL_1>`): a value a masking reader was shown.

    >>> holds_placeholder("acme:web:<EMAIL_1>"), holds_placeholder("acme:web:s1")
    (True, False)
    """
    return bool(_PLACEHOLDER.search(text))
