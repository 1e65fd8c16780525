"""Write ui/emoji_shortcodes.txt: the emoji shortcodes (`:smile:`) Streamlit's Markdown draws as
emoji, read from the installed Streamlit's front-end bundle (its shortcode table). `ui.markup`
leaves these as typed in message text; tests/ui/test_markup_directives.py checks the file matches
the installed Streamlit.

    .venv/bin/python scripts/emoji_shortcodes.py
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "ui" / "emoji_shortcodes.txt"


def shortcodes() -> list[str]:
    """The names of Streamlit's shortcode table ('+1', 'smile', 'x', …), sorted."""
    import streamlit

    bundle = Path(streamlit.__file__).parent / "static" / "static" / "js"
    for path in sorted(bundle.glob("*.js")):
        src = path.read_text(encoding="utf-8", errors="replace")
        at = src.find('"grinning","')  # (the table's ordered list of names: ["grinning","smiley",…,"+1",…])
        if at < 0:
            continue
        return sorted(set(re.findall(r'"([^"]+)"', src[src.rfind("[", 0, at):src.find("]", at)])))
    raise SystemExit(f"no emoji shortcode table in {bundle}")


if __name__ == "__main__":
    OUT.write_text("\n".join(shortcodes()) + "\n", encoding="utf-8")
    print(f"{OUT}: {len(shortcodes())} shortcodes", file=sys.stderr)
