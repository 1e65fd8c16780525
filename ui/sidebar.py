"""The shared sidebar: which database is open, and loading a source into a new one."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import streamlit as st

from ui import access, cache, database, flow, formats, markup, review_dialogs, session, state

AUTO = "auto-detect"
_FLASH = "tl.flash"
# How often an open page looks whether a load (`transcript-lens load --watch`, say) changed its database.
NEWER_CHECK_SECONDS = 10
# Besides every registered kind's own (`Source.upload_suffixes`): a loaded database, opened as is.
DATABASE_SUFFIXES = ("duckdb",)


def shown(spec: str, kind: str | None = None) -> str:
    """A source as the sidebar shows it: as its kind describes it (a DSN's password masked);
    a spec of no known kind with every password any kind finds in it masked.

    >>> shown("postgresql://u@h/db?password=secret")
    'postgresql://u@h/db?password=%2A%2A%2A'
    >>> shown("host=h dbname=db password=secret", "postgres")
    'host=h dbname=db password=***'
    """
    import loaders  # the registry: each kind shows its own specs

    return loaders.describe(spec, kind)


def render() -> None:
    deployed = session.deployment()
    with st.sidebar:
        markup.no_remote_images()  # first: before any page draws text from the data
        markup.icon_buttons()
        flow.style()
        _database_panel(deployed)
        _privacy_panel(deployed)
        if not deployed.read_only:  # a read-only deployment opens no other source: no panel at all
            _load_panel(deployed)


def _privacy_panel(deployed: access.Deployment) -> None:
    """The session's masking switch (a caption when the deployment masks for everyone), and who
    the session reads as when the deployment maps users to tenants."""
    if session.mask_forced():
        st.caption(":material/shield: Personal data is masked on this server (emails, phone numbers, cards, …).")
    else:
        st.toggle("Mask personal data", key=session.MASK_KEY,
                  help="Show emails, phone numbers, card numbers, IBANs, IP addresses and SSNs as placeholders "
                       "(`<EMAIL_1>`) on every page and in every download of this session.")
    if deployed.users or deployed.identity_header:
        who = session.user(deployed)
        tenants = session.policy().tenants
        scope = "no tenant" if tenants is not None and not tenants else (
            "every tenant" if tenants is None else ", ".join(sorted(tenants)))
        st.caption(f"Signed in as **{markup.text(who)}** · sees {markup.text(scope)}" if who
                   else f"Not signed in · sees {markup.text(scope)}")


def _database_panel(deployed: access.Deployment) -> None:
    db = state.current_db()
    flash = st.session_state.pop(_FLASH, None)
    if flash:
        st.success(flash)
    st.subheader("Database")
    if db is None:
        st.error(state.db_problem() or "No database is open.")
        return
    problem = state.take_db_problem()
    if problem:
        st.warning(problem)
    cache.prewarm(db)
    info = cache.database_info(db)
    demo = Path(db.path) == database.demo_db().resolve()
    st.markdown(f"**{markup.text(database.display_name(db.name))}**" + (" (bundled demo)" if demo else ""),
                help=None if database.display_name(db.name) == db.name else f"Named {markup.code(db.name)} in links")
    st.caption(
        " · ".join(formats.plural(info[k], k[:-1]) for k in ("threads", "messages", "tenants"))
    )
    if "source" in info:
        loaded = info["loaded_at"].strftime("%Y-%m-%d %H:%M UTC") if info.get("loaded_at") else "?"
        errors = f" · {info['load_errors']} row errors" if info.get("load_errors") else ""
        source = str(info["source"])
        if deployed.local:
            source = shown(source, info["source_kind"])
        else:  # served to others: a file's name, never the server's folders or a database's address
            source = "a database server" if is_dsn(source) else Path(source).name
        st.caption(f"from {markup.text(info['source_kind'])} {markup.code(source)}, loaded {loaded}{errors}")
    if deployed.local:
        st.caption(markup.code(db.path))
    # No timed rerun while a review dialog is open: it would run beside the dialog's own
    # fragment and its Save rerun (a dialog that stayed open after Save was seen once in
    # tests/e2e/test_review.py under load, not reproduced); the page's next run looks instead.
    (_newer_database_notice if review_dialogs.is_open() else _newer_database_watch)(db)


@st.fragment(run_every=NEWER_CHECK_SECONDS)
def _newer_database_watch(db: database.DbRef) -> None:
    """`_newer_database_notice`, looked at again every NEWER_CHECK_SECONDS (a rerun of this part only)."""
    _newer_database_notice(db)


def _newer_database_notice(db: database.DbRef) -> None:
    """Offer to refresh once the database file is newer than the page."""
    if database.newer(db) is None:
        return
    st.info("The database was reloaded since this page was drawn.")
    if st.button("Refresh", key="tl.refresh_db", help="Show the newest load"):
        st.rerun()


def upload_types(kinds) -> list[str]:
    """The file endings the upload widget takes: every kind's own, then a database's.

    >>> from loaders import sources
    >>> upload_types(sources().values())
    ['sqlite', 'sqlite3', 'db', 'zip', 'sql', 'dump', 'pgdump', 'archive', 'gz', 'duckdb']
    """
    return list(dict.fromkeys([*(s for kind in kinds for s in kind.upload_suffixes), *DATABASE_SUFFIXES]))


def _load_panel(deployed: access.Deployment) -> None:
    import loaders  # the registry: whatever source kinds are installed right now
    from loaders.cipher import MAX_KEY_FILE_BYTES
    from loaders.source import option_specs

    registered = loaders.sources()
    kinds = [AUTO, *registered]
    offered = option_specs(registered)  # each kind's own options, as its options class declares them
    with st.expander("Load a source", expanded=state.current_db() is None):
        if deployed.sources:
            named = st.selectbox("Named source", ["", *sorted(deployed.sources)], key="load.named",
                                 help="A source this server's configuration names (its DSN is never shown).")
        else:
            named = ""
        spec = st.text_input(
            "Path or DSN",
            key="load.spec",
            placeholder="store.sqlite · postgresql://… · mysql://… · export.zip · dump.sql · existing .duckdb",
            help="A SqliteSaver file, a Postgres or MySQL / MariaDB DSN, a CSV export folder or .zip, a pg_dump "
            "or mysqldump file, or a Transcript Lens .duckdb to open as is. The kind is detected from what you give.",
        )
        upload = st.file_uploader("…or upload a file", type=upload_types(registered.values()), key="load.upload")
        kind = st.selectbox(
            "Source kind", kinds, key="load.kind",
            help="\n".join(f"- `{k}`: {s.label}" for k, s in registered.items()),
        )
        pattern = st.text_input(
            "Thread-key pattern",
            key="load.pattern",
            placeholder="tenant:sub:session (default)",
            help="A regular expression with named groups `tenant`, `sub` and `session` that splits "
            "thread ids, e.g. `^(?P<tenant>[^/]+)/(?P<session>.+)$`. Ids it does not match keep "
            "the whole id as the session. Matched by RE2, in linear time: no backreferences or lookaround.",
        )
        given = {
            option.name: st.text_input(
                option.label, key=f"load.{option.name}", placeholder=option.placeholder,
                help=f"For {', '.join(f'`{k}`' for k in option.kinds)}: {option.help}.",
            ).strip() or None
            for option in offered
        }
        key_file = st.text_input(
            "AES key file", key="load.aes_key_file", placeholder="(default: LANGGRAPH_AES_KEY)",
            help="For a store written with LangGraph's EncryptedSerializer: a file holding its AES key. Used only "
            "to decrypt, never shown or stored.",
        ).strip() or None
        incremental = st.checkbox(
            "Only re-read what changed",
            key="load.incremental",
            help="Reload a source loaded before, re-reading only threads with new or removed "
            "checkpoints (identical result to a full load, faster on a large store).",
        )
        if st.button("Load", key="load.go", type="primary", width="stretch"):
            choices = LoadChoices(pattern.strip() or None, given, incremental, key_file)
            refusal = key_file and deployed.path_refusal(key_file, max_bytes=MAX_KEY_FILE_BYTES)
            if refusal:
                st.error(f"AES key file: {markup.text(refusal)}. The open database is unchanged.")
                return
            if not named:
                refusal = _refusal(deployed, spec.strip(), upload)
                if refusal:
                    st.error(f"{markup.text(refusal)}. The open database is unchanged.")
                    return
            _load_pinned(deployed, spec.strip(), upload, None if kind == AUTO else kind, choices, named)


def _load_pinned(deployed: access.Deployment, spec: str, upload, kind: str | None, choices: LoadChoices,
                 named: str | None) -> None:
    """`_load`, the loader given the pins of the paths checked (the typed source, the key file):
    what it reads is what the check saw, whatever is swapped in meanwhile (`Deployment.pinned`)."""
    from analytics.source_pin import PinRefused

    pins = database.cache_dir() / "pins"
    typed = None if named or upload is not None or _typed_dsn(deployed, spec) or not spec else spec
    try:
        with contextlib.ExitStack() as held:
            key = choices.aes_key_file and held.enter_context(deployed.pinned(choices.aes_key_file, pins))
            choices = dataclasses.replace(choices, aes_key_file=key or None)
            if named:
                _load(deployed.sources[named], None, kind, choices, shown_as=named)
            else:
                read_from = held.enter_context(deployed.pinned(typed, pins)) if typed else None
                _load(spec, upload, kind, choices, read_from=read_from, local=deployed.local)
    except PinRefused as exc:
        st.error(f"{markup.text(str(exc))}. The open database is unchanged.")


def _refusal(deployed: access.Deployment, spec: str, upload) -> str | None:
    """Why this deployment will not read what was typed (None: it will). An upload is saved in
    the server's own cache folder, so only the typed spec is checked: a path against the
    source folders, anything else (a DSN) against the named sources."""
    if upload is not None or not spec:
        return None
    if _typed_dsn(deployed, spec):
        return deployed.dsn_refusal(spec)
    return deployed.path_refusal(spec)


def _typed_dsn(deployed: access.Deployment, spec: str) -> bool:
    """`is_dsn`, without looking at the disk where visitors' paths are limited: whether a path
    holding `=` exists must not change the answer (an existence test of any server path). There
    a DSN is a URL or starts with a libpq `keyword=`; anything else is a path.

    >>> d = access.Deployment(source_roots=(Path("/srv"),))
    >>> _typed_dsn(d, "host=db dbname=a"), _typed_dsn(d, "/etc/a=b"), _typed_dsn(d, "postgresql://h/db")
    (True, False, True)
    """
    return "://" in spec or bool(_LIBPQ_START.match(spec)) if deployed.restricted else is_dsn(spec)


_LIBPQ_START = re.compile(r"\s*[A-Za-z_]+\s*=")


def is_dsn(spec: str) -> bool:
    """A database address (a URL, or libpq's `key=value` words) rather than a path.

    >>> is_dsn("postgresql://u@h/db"), is_dsn("host=h dbname=db"), is_dsn("/srv/stores/a.sqlite")
    (True, True, False)
    """
    return "://" in spec or ("=" in spec and not Path(spec).expanduser().exists())


def _save_upload(upload) -> Path:
    data = upload.getvalue()
    digest = hashlib.sha256(data).hexdigest()[:12]
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(upload.name).name) or "upload"
    path = database.uploads_dir() / f"{digest}-{name}"
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        path.write_bytes(data)
    return path


@dataclass(frozen=True)
class LoadChoices:
    """The load panel's options, as `loaders.load` takes them."""

    thread_key_pattern: str | None = None
    # The source options typed in (None: not given; a kind that does not take one given says so).
    options: dict[str, str | None] = field(default_factory=dict)
    incremental: bool = False
    aes_key_file: str | None = None  # (the key itself never passes through the app)

    def source_options(self) -> dict[str, str | None]:
        """The source options chosen, as `loaders.load` takes them."""
        return dict(self.options)


def _load(spec: str, upload, kind: str | None, choices: LoadChoices = LoadChoices(), shown_as: str | None = None,
          read_from: str | None = None, local: bool = True) -> None:
    """Load (or open) a source; on any failure the open database stays as it was. `shown_as`:
    the name a configured source is shown by (its DSN never is); `read_from`: the path the loader
    reads `spec` from (its pin), named `spec` in every message; not `local` (served to others): the
    messages name files, never the server's folders (`_named`)."""
    if upload is not None:
        spec = str(_save_upload(upload))
    if not spec:
        st.error("Give a path or a DSN, or upload a file.")
        return
    read_from = read_from or spec
    if database.is_duckdb_file(read_from):  # (checked on the pin: what the check saw)
        _open_existing(spec, read_from, local)
        return
    import loaders
    import transcript_lens

    try:
        source = loaders.resolve(read_from, kind)
    except loaders.SourceError as exc:
        st.error(f"{markup.text(_reason(exc, spec).replace(read_from, spec))}\n\nThe open database is unchanged.")
        return
    target = database.load_target(spec, source)
    where = shown_as or (source.describe(spec) if local else _named(source.describe(spec), [spec, str(target)]))
    with st.status(f"Loading {where}", expanded=True) as status:
        bar = st.progress(0.0, text="opening the source…")

        def progress(done: int, total: int | None) -> None:
            fraction = min(done / total, 1.0) if total else 0.0
            bar.progress(fraction, text=f"{done:,} / {formats.plural(total, 'thread')}" if total else formats.plural(done, "thread"))

        try:
            summary = transcript_lens.load(
                read_from, target, kind=source.kind, progress=progress,
                thread_key_pattern=choices.thread_key_pattern,
                options=choices.source_options(),
                incremental=choices.incremental, aes_key_file=choices.aes_key_file,
            )
        except Exception as exc:  # noqa: BLE001 — the UI boundary: any failure is a message, never a dead app
            status.update(label=f"Could not load {where}", state="error", expanded=True)
            st.error(f"{markup.text(_reason(exc, spec).replace(read_from, spec))}\n\nThe open database is unchanged.")
            return
        line = summary.line().replace(summary.source, shown_as or spec) if shown_as or read_from != spec else summary.line()
        line = line if local else _named(line, [spec, str(target)])
        status.update(label=line, state="complete", expanded=False)
    state.open_db(target)
    st.session_state[_FLASH] = line
    st.rerun()


def _open_existing(path: str, read_from: str, local: bool = True) -> None:
    """Open the database at `path`, checked on `read_from` (its pin, or itself); the session
    then reads it as `database.ref` does (a database a visitor named: never through a link)."""
    from analytics import contents

    try:
        contents.database_info(read_from)  # refuses files that are not a Transcript Lens database
    except Exception as exc:  # noqa: BLE001 — any failure to read it means "not one of ours"
        st.error(f"{markup.code(path)} is a DuckDB file but not a Transcript Lens database "
                 f"({markup.text(_reason(exc, path).replace(read_from, path))}). "
                 "The open database is unchanged.")
        return
    try:
        state.open_db(path)
    except FileNotFoundError as exc:  # (`database.ref`: no longer the file checked, a link swapped in)
        st.error(f"{markup.text(str(exc))}. The open database is unchanged.")
        return
    st.session_state[_FLASH] = f"Opened {path if local else Path(path).name}"
    st.rerun()


def _named(text: str, paths: list[str]) -> str:
    """`text` with each of `paths` (and the folder of each) shown by its file name only: what a
    visitor of a served app is told of the server's files.

    >>> _named("loaded 2 threads from sqlite /srv/in/a.sqlite into /var/c/a.duckdb", ["/srv/in/a.sqlite", "/var/c/a.duckdb"])
    'loaded 2 threads from sqlite a.sqlite into a.duckdb'
    """
    for path in sorted(paths, key=len, reverse=True):
        if path and os.sep in path:
            text = text.replace(path, Path(path).name)
    return text


def _reason(exc: Exception, spec: str) -> str:
    """An error as the sidebar shows it: its text, with the secrets of `spec` (a password) masked."""
    import loaders
    import transcript_lens

    # A failed load is already one line (`transcript_lens.load`, the one place load errors are caught).
    text = str(exc) if isinstance(exc, (loaders.SourceError, transcript_lens.LoadFailed)) else f"{type(exc).__name__}: {exc}"
    return loaders.redact(text, spec)
