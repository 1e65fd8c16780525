"""`transcript-lens erase`: a thin shell over `analytics.erasure.erasing`.

    transcript-lens erase --db lens.duckdb --thread acme:web:sess-001 --reason "GDPR request DSR-12" [--by dpo]
    transcript-lens erase --db lens.duckdb --tenant globex --reason "contract ended"
    transcript-lens erase --db lens/ --thread acme:web:sess-001 --reason "…"   a Parquet dataset (--format parquet)
    transcript-lens erase --db lens.duckdb --thread acme:web:sess-001 --lift --reason "erased by mistake"
    transcript-lens erase --db lens.duckdb --list          standing and lifted tombstones
    transcript-lens erase --db lens.duckdb --log           the erasure log
"""

from __future__ import annotations

import argparse
import os
import sys

from analytics.erasure import erasing
from analytics.cli import command
from analytics.errors import BadRequest
from analytics.workspace.store import ENV, Workspace


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Remove a thread, a tenant or a session from the database and keep it out of every later load "
        "(full or --incremental) until the tombstone is lifted. Tombstones and the append-only erasure log "
        f"live in the review workspace beside the database (or ${ENV}: every load reads the same one). "
        "The threads' annotations, queue items and saved views go too, from every workspace written for the "
        "database (--workspace FILE ones are recorded in its own), and the app's cached versions of the "
        "database; the exports the export log says held the threads are named (`held by export N`); the command "
        "ends by scanning every file it knows of for the erased text (`scan: N of M files hold erased text`) and "
        "exits 1 unless none does and the replaced database file has no other name left (a hard link it "
        "cannot find: `…, and N other names of the replaced database file … still hold it`). "
        "The checkpoint store itself is never written: "
        "`report retention` lists what to delete there.")
    parser.add_argument("--db", required=True, help="the Transcript Lens DuckDB database, or a Parquet dataset's folder")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--thread", metavar="ID", help="erase this thread")
    which.add_argument("--tenant", metavar="T", help="erase every thread of this tenant")
    which.add_argument("--session", metavar="S", help="erase every thread of this session")
    parser.add_argument("--reason", help="why (the request, a ticket): required to erase or lift. Stored in the "
                        "tombstone and the erasure log without the erased text it quotes: each stretch of 8 characters "
                        "or more that an erased thread says (in any case) and no kept thread says is stored as <erased>")
    parser.add_argument("--by", metavar="NAME", help="who asks (default: $TRANSCRIPT_LENS_AUTHOR or your login)")
    parser.add_argument("--remove-exports", action="store_true",
                        help="also delete the files the export log says were written from --db and that hold the "
                             "erased text (without it they are listed, and the command fails)")
    parser.add_argument("--app-cache", metavar="DIR", default=os.environ.get("TRANSCRIPT_LENS_CACHE"),
                        help="the app's cache folder, whose version links of --db are removed and scanned "
                             "(transcript-lens: the app's own; else $TRANSCRIPT_LENS_CACHE)")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--lift", action="store_true", help="lift the tombstone: the next load brings the rows back")
    action.add_argument("--list", action="store_true", help="print the tombstones")
    action.add_argument("--log", action="store_true", help="print the erasure log")


@command("erase", _configure, help="erase a thread, tenant or session from the database, and keep it out of reloads")
def run(args: argparse.Namespace) -> int:
    ws = Workspace.beside(args.db)  # the one every load of --db reads its tombstones from
    if args.list:
        for t in erasing.tombstones(args.db, workspace=ws):
            state = "standing" if t.standing else f"lifted {t.lifted_at} by {t.lifted_by}"
            covers = f"covers {t.threads} thread{'s' if t.threads != 1 else ''}"
            print(f"{t.tombstone_id}\t{t.kind}\t{t.value}\t{t.at}\t{t.by}\t{state}\t{covers}\t{t.reason}")
        return 0
    if args.log:
        frame = erasing.erasure_log(args.db, workspace=ws)
        if frame.empty:
            print(f"the erasure log of {ws.path} is empty", file=sys.stderr)
        else:
            # A held-back entry has no reason: a "-", not pandas' NaN or None.
            print(frame.astype(object).where(frame.notna(), "-").to_string(index=False))
        return 0
    mark = {"thread": args.thread, "tenant": args.tenant, "session": args.session}
    if not any(mark.values()):
        raise BadRequest("name what to erase: --thread ID, --tenant T or --session S (or --list, --log)")
    if args.lift:
        t = erasing.lift(args.db, **mark, reason=args.reason, by=args.by)
        print(f"lifted the tombstone of {t.kind} {t.value}: the next load brings it back if the source has it")
        return 0
    done = erasing.erase(args.db, **mark, reason=args.reason, by=args.by, app_cache=args.app_cache,
                         remove_exports=args.remove_exports)
    print(done.line())
    for place, n in sorted(done.elsewhere.items()):
        print(f"  also removed: {place} {n}")
    for export_id, at, what, target, _last in done.exports:  # the export log's record (files, prints, downloads)
        print(f"  held by export {export_id} ({what}, {at}): {target or 'printed, no file'}")
    lines = done.scan.lines()
    print(lines[0])
    for line in lines[1:]:
        print(line, file=sys.stderr)
    return 0 if done.proven else 1
