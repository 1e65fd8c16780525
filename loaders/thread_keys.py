"""Thread ids → tenant, sub-tenant and session (`--thread-key-pattern`; contract §3).

The default pattern reads `tenant:sub:session`; a pattern given is compiled once per
load (`compile_thread_key`, run by RE2: linear time, whatever is typed) and checked
before anything is read.
"""

from __future__ import annotations

from dataclasses import dataclass

from loaders.linear_regex import BuiltinRegex, LinearRegex, compile_linear

DEFAULT_THREAD_KEY_PATTERN = r"^(?P<tenant>[^:]*):(?P<sub>[^:]*):(?P<session>.*)$"


@dataclass(frozen=True, slots=True)
class ThreadKey:
    tenant_id: str | None
    sub_tenant_id: str | None
    session_id: str


def compile_thread_key(pattern: str | None) -> BuiltinRegex | LinearRegex:
    """Compile a thread-key pattern; it must have a `session` group (and may have `tenant`, `sub`).
    A pattern given is run by RE2 (`linear_regex`: linear time, whatever is typed).

    >>> compile_thread_key(None).groups("acme:web:s1")["session"]
    's1'
    """
    regex = BuiltinRegex(DEFAULT_THREAD_KEY_PATTERN) if not pattern else compile_linear(pattern, "thread-key pattern")
    if "session" not in regex.groupindex:
        raise ValueError("a thread-key pattern needs a named group 'session'")
    return regex


def parse_thread_key(thread_id: str, regex: BuiltinRegex | LinearRegex) -> ThreadKey:
    """Split `tenant:sub:session`; an empty sub-tenant is NULL; no match → session = thread id.

    >>> parse_thread_key("acme::a:b", compile_thread_key(None))
    ThreadKey(tenant_id='acme', sub_tenant_id=None, session_id='a:b')
    """
    groups = regex.groups(thread_id)
    if groups is None:
        return ThreadKey(None, None, thread_id)
    return ThreadKey(groups.get("tenant"), groups.get("sub") or None, groups["session"])
