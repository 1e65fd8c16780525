"""Regenerate the column tables of docs/schema.md from the catalogues (`loaders/catalog.py`,
`analytics/catalog.py`); prose outside the `<!-- catalog: TABLE -->` blocks is kept.

    .venv/bin/python scripts/schema_doc.py          # rewrite docs/schema.md
    .venv/bin/python scripts/schema_doc.py --check  # exit 1 when it is stale
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analytics.catalog import schema_doc  # noqa: E402

SCHEMA_DOC = Path(__file__).resolve().parents[1] / "docs" / "schema.md"


def main(argv: list[str]) -> int:
    text = SCHEMA_DOC.read_text()
    new = schema_doc(text)
    if new == text:
        return 0
    if "--check" in argv:
        print(f"{SCHEMA_DOC} is stale: run python scripts/schema_doc.py", file=sys.stderr)
        return 1
    SCHEMA_DOC.write_text(new)
    print(f"rewrote {SCHEMA_DOC}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
