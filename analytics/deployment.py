"""Who may do what in an app served to others (contract §11; docs/privacy.md, "The app as a
shared service").

On your own machine the app opens whatever you give it. Served to others it must not:
anyone who can reach the port could make the server open any file it can read or any
database its network reaches. A `Deployment` says what is allowed, from the
environment `transcript-lens app` sets (its flags and `--config` file):

- `read_only`: no "Load a source" at all; only the database the server was started on;
- `source_roots`: paths (a store, an export, a database to open) only inside these
  folders, symlinks and `..` resolved first;
- `sources`: named sources (`prod = "postgresql://…"`): users pick a name and never see
  or type a DSN; with roots or names configured, a typed DSN is refused;
- `users`: the tenants each signed-in user may see (the identity Streamlit's OIDC
  `st.user` gives, or a trusted proxy's header), on top of the deployment's scope.

>>> d = Deployment(source_roots=(Path("/data"),))
>>> d.path_refusal("/data/stores/a.sqlite") is None, d.path_refusal("/etc/passwd")
(True, '/etc/passwd is outside the folders this app may read (/data)')
"""

from __future__ import annotations

import fnmatch
import os
import stat
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from analytics import source_pin

from analytics.policy import TENANTS_ENV, Policy, deployment_policy
from analytics.redact import ENV as REDACT_ENV
from analytics.tomltable import read_table

CONFIG_ENV = "TRANSCRIPT_LENS_CONFIG"
READ_ONLY_ENV = "TRANSCRIPT_LENS_READ_ONLY"
#: Folders sources may be read from, separated by `os.pathsep`.
SOURCE_ROOTS_ENV = "TRANSCRIPT_LENS_SOURCE_ROOTS"
#: The largest observed JSONL (Resume QA) taken, and so the largest upload a read-only server accepts
#: (`transcript-lens app` sets Streamlit's `server.maxUploadSize` to it: a read-only app loads no store).
OBSERVED_UPLOAD_MB = 20


class ConfigError(ValueError):
    """A deployment config that cannot be used (names the file and the key)."""


@dataclass(frozen=True)
class Deployment:
    read_only: bool = False
    source_roots: tuple[Path, ...] = ()
    #: name → source spec (a DSN, or a path): what users may load by name.
    sources: Mapping[str, str] = field(default_factory=dict)
    #: (user pattern, tenants): the first pattern (fnmatch, case-insensitive) matching a user applies.
    users: tuple[tuple[str, frozenset[str]], ...] = ()
    #: A request header a trusted reverse proxy sets to the signed-in user (else `st.user.email`).
    identity_header: str | None = None

    @property
    def restricted(self) -> bool:
        """Whether sources are limited to roots and names (else: anything, as on your own machine)."""
        return self.read_only or bool(self.source_roots) or bool(self.sources)

    @property
    def local(self) -> bool:
        """Run as on your own machine (no setting for serving others: no limit on loading, no users,
        no server-wide masking or tenant scope): only then does the app show server paths (the open
        database's file, a source's path or DSN); served, names only."""
        served = deployment_policy()
        return not (self.restricted or self.users or self.identity_header or served.redact
                    or served.tenants is not None)

    def path_refusal(self, path: str | os.PathLike, max_bytes: int | None = None) -> str | None:
        """Why the server may not read `path`, a path a visitor gave (None: it may).

        The one check for every such path (a source, a database to open, an AES key file): with
        source folders it must resolve (symlinks and `..` first) inside one, be a regular file
        or a folder, every entry of a folder likewise (a symlink in a folder export is followed
        by the loader), and at most `max_bytes` when given. A path outside the folders gets the
        same answer whether or not it exists (the check tells nothing about the rest of the disk).
        """
        if self.read_only:
            return "this app is read-only: it opens no other source"
        if not self.source_roots:
            return None
        real = Path(os.path.realpath(Path(path).expanduser()))
        if not self._inside(real):
            roots = ", ".join(str(r) for r in self.source_roots)
            return f"{path} is outside the folders this app may read ({roots})"
        return _entry_refusal(path, real, max_bytes, self._inside)

    @contextmanager
    def pinned(self, path: str, into: Path) -> Iterator[str]:
        """What the loader is given for `path`, a path `path_refusal` let through: with source
        folders, its private pin under `into` (`analytics.source_pin`: a link swapped in after the
        check is never followed; `source_pin.PinRefused` if one already was), else `path` itself."""
        if not self.source_roots:
            yield path
            return
        with source_pin.pinned(path, self.source_roots, into) as pin:
            yield str(pin)

    def read_file(self, path: str, max_bytes: int) -> bytes:
        """The bytes of `path`, a file `path_refusal` let through (at most `max_bytes`, else
        `source_pin.PinRefused`): with source folders, read from the file the check saw, reached
        from its folder down without following a link (`source_pin.read_beneath`); else by name."""
        if self.source_roots:
            return source_pin.read_beneath(path, self.source_roots, max_bytes)
        with open(Path(path).expanduser(), "rb") as fh:
            data = fh.read(max_bytes + 1)
        if len(data) > max_bytes:
            raise source_pin.PinRefused(f"{path} is over {max_bytes:,} bytes")
        return data

    def _inside(self, real: Path) -> bool:
        return any(real == root or root in real.parents for root in self.source_roots)

    def dsn_refusal(self, spec: str) -> str | None:
        """Why a typed DSN may not be used (None: it may)."""
        if self.read_only:
            return "this app is read-only: it opens no other source"
        if self.restricted:
            names = ", ".join(sorted(self.sources)) or "none"
            return f"this app loads databases by name only (configured: {names})"
        return None

    def user_tenants(self, user: str | None) -> frozenset[str] | None:
        """The tenants `user` may see by the `users` table (None: no limit from it)."""
        if not self.users:
            return None
        who = (user or "").casefold()
        for pattern, tenants in self.users:
            if fnmatch.fnmatchcase(who, pattern.casefold()):
                return tenants
        return frozenset()  # a configured table and no line for this user: nothing

    def policy_for(self, user: str | None, redact: bool = False) -> Policy:
        """What `user`'s session reads under: the deployment's policy, the user's tenants, and
        the user's own choice to mask (`redact`)."""
        return deployment_policy().stricter(Policy(redact=redact, tenants=self.user_tenants(user)))


def _entry_refusal(shown: str | os.PathLike, real: Path, max_bytes: int | None, inside) -> str | None:
    """Why the resolved path `real` (inside a source folder) may not be read: not there, not a
    regular file or folder, too big, or a folder holding such an entry or a link out of the folders."""
    try:
        info = real.stat()
    except OSError:
        return None  # not there (yet): the loader says so, and it is inside the folders
    if stat.S_ISDIR(info.st_mode):
        for folder, dirs, files in os.walk(real):
            for name in (*dirs, *files):
                entry = Path(folder) / name
                target = Path(os.path.realpath(entry))
                if not inside(target):
                    return f"{shown} holds {entry.relative_to(real)}, a link out of the folders this app may read"
                try:
                    mode = target.stat().st_mode
                except OSError:
                    return f"{shown} holds {entry.relative_to(real)}, which cannot be read"
                if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) and not entry.is_symlink()):
                    return f"{shown} holds {entry.relative_to(real)}, which is not a regular file or folder"
        return None
    if not stat.S_ISREG(info.st_mode):
        return f"{shown} is not a regular file or folder"
    if max_bytes is not None and info.st_size > max_bytes:
        return f"{shown} is over {max_bytes} bytes"
    return None


def from_environment(environ: Mapping[str, str] | None = None) -> Deployment:
    """The deployment `transcript-lens app` set up (defaults: nothing restricted)."""
    env = os.environ if environ is None else environ
    config = load_config(env[CONFIG_ENV]) if env.get(CONFIG_ENV) else {}
    roots = [*config.get("source_roots", ()), *filter(None, env.get(SOURCE_ROOTS_ENV, "").split(os.pathsep))]
    return Deployment(
        read_only=env.get(READ_ONLY_ENV, "") not in ("", "0") or bool(config.get("read_only")),
        source_roots=tuple(dict.fromkeys(Path(os.path.realpath(Path(r).expanduser())) for r in roots)),
        sources=dict(config.get("sources", {})),
        users=tuple((pattern, frozenset(tenants)) for pattern, tenants in config.get("users", {}).items()),
        identity_header=config.get("identity_header"),
    )


_KEYS = {"read_only", "redact", "tenants", "source_roots", "sources", "users", "identity_header"}


def load_config(path: str | os.PathLike) -> dict:
    """The `[app]` table of a deployment's TOML file, checked:

        [app]
        read_only = false
        redact = true                      # TRANSCRIPT_LENS_REDACT=1 for the server
        tenants = ["acme", "globex"]       # TRANSCRIPT_LENS_TENANTS for the server
        source_roots = ["/srv/stores"]
        identity_header = "X-Forwarded-Email"
        [app.sources]
        prod = "postgresql://reader@db.internal/agents"
        [app.users]
        "*@acme.com" = ["acme"]
        "ops@example.com" = ["acme", "globex"]
    """
    p = Path(path)
    app = read_table(p, "app", _KEYS, ConfigError)
    for key, kind in (("read_only", bool), ("redact", bool), ("identity_header", str)):
        if key in app and not isinstance(app[key], kind):
            raise ConfigError(f"{p}: [app] {key} must be {kind.__name__}")
    for key in ("tenants", "source_roots"):
        if key in app and not (isinstance(app[key], list) and all(isinstance(v, str) for v in app[key])):
            raise ConfigError(f"{p}: [app] {key} must be a list of strings")
    for key in ("sources", "users"):
        if not isinstance(app.get(key, {}), dict):
            raise ConfigError(f"{p}: [app] {key} must be a table ([app.{key}])")
    if not all(isinstance(v, str) for v in app.get("sources", {}).values()):
        raise ConfigError(f"{p}: [app.sources] values must be source specs (strings)")
    for user, tenants in app.get("users", {}).items():
        if not (isinstance(tenants, list) and all(isinstance(v, str) for v in tenants)):
            raise ConfigError(f"{p}: [app.users] {user!r} must be a list of tenant ids")
    return app


def server_environment(config: Mapping, *, redact: bool = False, tenants: str | None = None,
                       read_only: bool = False, source_roots: tuple[str, ...] = ()) -> dict[str, str]:
    """The environment variables `transcript-lens app` gives the server for its flags and
    config (flags add to the config: a flag can restrict more, never less).

    >>> server_environment({"tenants": ["acme"]}, redact=True)
    {'TRANSCRIPT_LENS_REDACT': '1', 'TRANSCRIPT_LENS_TENANTS': 'acme'}
    """
    env: dict[str, str] = {}
    if redact or config.get("redact"):
        env[REDACT_ENV] = "1"
    scopes = [set(config["tenants"])] if "tenants" in config else []
    if tenants is not None:
        scopes.append({t.strip() for t in tenants.split(",") if t.strip()})
    if scopes:
        env[TENANTS_ENV] = ",".join(sorted(set.intersection(*scopes)))
    if read_only:
        env[READ_ONLY_ENV] = "1"
    if source_roots:
        env[SOURCE_ROOTS_ENV] = os.pathsep.join(str(Path(r).expanduser().resolve()) for r in source_roots)
    return env
