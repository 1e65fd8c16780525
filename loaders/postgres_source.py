"""Source: a live Postgres database written by `PostgresSaver` (a `postgresql://` DSN).

The whole load reads one snapshot: a REPEATABLE READ, READ ONLY transaction,
so `checkpoint_keys()` (incremental loads) and `threads()` agree even while
agents keep writing. Three server-side cursors stream checkpoints, `messages`
blobs and special-channel writes in chunks, each ordered by
`thread_id COLLATE "C"` so the server's order is Python's string order and
`pg_rows.assemble()` can merge-join them holding one thread at a time.

>>> reader = PostgresSource().open("postgresql://app@db/agents", {"schema": "public"})  # doctest: +SKIP
>>> next(reader.threads()).thread_id  # doctest: +SKIP
'acme:web:sess-001'
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from loaders.pg_rows import PostgresOptions
from loaders.source import Source

if TYPE_CHECKING:
    from loaders.postgres_reader import PostgresReader

DSN_PREFIXES = ("postgresql://", "postgres://")


def mask_dsn(dsn: str) -> str:
    """The DSN with its password (in the authority or a `password=` parameter) replaced by `***`.

    >>> mask_dsn("postgresql://app:s3cret@db:5432/agents?sslmode=require&password=x")
    'postgresql://app:***@db:5432/agents?sslmode=require&password=%2A%2A%2A'
    >>> mask_dsn("host=db dbname=agents password='a b'")
    'host=db dbname=agents password=***'
    """
    if "://" not in dsn:  # keyword/value form, usable with --kind postgres
        return _KEYWORD_PASSWORD.sub("password=***", dsn)
    try:
        parts = urlsplit(dsn)
    except ValueError:
        return f"{dsn.split('://', 1)[0]}://***"
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        if ":" in userinfo:
            netloc = f"{userinfo.split(':', 1)[0]}:***@{host}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(k == "password" for k, _ in pairs):
            query = urlencode([(k, "***" if k == "password" else v) for k, v in pairs])
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


_KEYWORD_PASSWORD = re.compile(r"password\s*=\s*(?:'(?:[^'\\]|\\.)*'|\S+)")


def dsn_secrets(dsn: str) -> list[str]:
    """The password of a DSN as written and as decoded (longest first), to scrub from messages."""
    found: list[str] = []
    if "://" not in dsn:
        return [m.group(0).split("=", 1)[1].strip().strip("'") for m in _KEYWORD_PASSWORD.finditer(dsn)]
    try:
        parts = urlsplit(dsn)
        userinfo = parts.netloc.rsplit("@", 1)[0] if "@" in parts.netloc else ""
        if ":" in userinfo:
            found.append(userinfo.split(":", 1)[1])
        for pair in parts.query.split("&"):
            key, _, value = pair.partition("=")
            if unquote(key) == "password":
                found.append(value)
    except ValueError:
        pass
    found += [unquote(s) for s in found]  # as written and as libpq decodes it
    return sorted({s for s in found if s}, key=len, reverse=True)


def first_line(exc: BaseException, dsn: str = "") -> str:
    """The first line of an error, with the password of `dsn` scrubbed."""
    # libpq quotes the offending token of a malformed DSN, which may be the password.
    text = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    for secret in dsn_secrets(dsn):
        text = text.replace(secret, "***")
    return text


class PostgresSource(Source):
    """A live database written by `PostgresSaver`; detected by a `postgresql://` or `postgres://` DSN
    (a keyword DSN, `host=… dbname=…`, is read with kind `postgres` named)."""

    kind = "postgres"
    label = "Postgres database written by PostgresSaver (a DSN)"
    options_class = PostgresOptions

    def detect(self, spec: str) -> bool:
        return spec.startswith(DSN_PREFIXES)

    def describe(self, spec: str) -> str:
        return mask_dsn(spec)

    def secrets(self, spec: str) -> list[str]:
        return dsn_secrets(spec)

    def short_name(self, spec: str) -> str:
        return self.kind  # a DSN's parts are no file name (a keyword DSN's are its password)

    def open_reader(self, spec: str, options: PostgresOptions) -> PostgresReader:
        # psycopg (~70 ms to import) only when a database is opened: a SQLite load,
        # and each of its workers, never pays for it.
        from loaders.postgres_reader import PostgresReader

        return PostgresReader(spec, options)
