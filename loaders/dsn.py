"""Postgres DSNs as they may be shown: the password masked, or scrubbed from an error.

Its own module so that the live reader (`loaders.postgres_reader`, which imports
psycopg) and the source kind (`loaders.postgres_source`, which opens the reader
only when asked) both use it without importing each other.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

DSN_PREFIXES = ("postgresql://", "postgres://")
# A keyword/value DSN starts with one of libpq's connection keywords (`host=db dbname=agents`).
_KEYWORD_DSN = re.compile(
    r"\s*(?:host|hostaddr|port|dbname|user|password|passfile|service|sslmode|options|application_name|connect_timeout)\s*="
)


def looks_like_dsn(spec: str) -> bool:
    """A `postgresql://` URL, or a keyword/value DSN.

    >>> looks_like_dsn("host=db dbname=agents"), looks_like_dsn("postgres://db/x"), looks_like_dsn("store.sqlite")
    (True, True, False)
    """
    return spec.startswith(DSN_PREFIXES) or _KEYWORD_DSN.match(spec) is not None


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


class DsnSpec:
    """The `Source` methods of a kind whose spec is a connection URL or DSN: shown with
    its password masked, the password scrubbed from messages, named by the kind (a
    DSN's parts are no file name). Mixed in before `Source`.

    >>> from loaders import sources
    >>> sources()["mysql"].describe("mysql://app:s3cret@db/agents")
    'mysql://app:***@db/agents'
    """

    kind: str

    def describe(self, spec: str) -> str:
        return mask_dsn(spec)

    def secrets(self, spec: str) -> list[str]:
        return dsn_secrets(spec)

    def short_name(self, spec: str) -> str:
        return self.kind
