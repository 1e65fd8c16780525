"""The price table the Compare page prices tokens with: a file uploaded, or a path on the server.

A path is read only where the deployment lets a visitor's path be read (`ui.access`: not on a
read-only server; inside `--source-root` folders when given, and then from the file the check
saw, `Deployment.read_file`), and only a small file; an upload
is the visitor's own bytes, read in memory. Either way: (kind, text) for the page model.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from ui import session

#: The largest price table read (a few hundred models fit in a few kilobytes).
MAX_BYTES = 1_000_000


def price_source(where=st) -> tuple[str, str] | None:
    """Draw the price-table inputs; (kind, text) of the table given, None without one (or a refused one, said so)."""
    upload = where.file_uploader("Price table (.toml or .csv)", type=["toml", "csv"], key="compare.prices_upload",
                                 help="Per model, per million tokens: input, output, optional cached_input "
                                      "No prices come with the app.")
    if upload is not None:
        if upload.size > MAX_BYTES:
            where.error(f"The price table is over {MAX_BYTES:,} bytes.")
            return None
        return Path(upload.name).suffix.lower().lstrip("."), upload.getvalue().decode("utf-8", errors="replace")
    path = where.text_input("…or its path on the server", key="compare.prices_path", placeholder="prices.toml")
    if not path.strip():
        return None
    refusal = session.deployment().path_refusal(path.strip(), max_bytes=MAX_BYTES)
    kind = Path(path.strip()).suffix.lower().lstrip(".")
    if refusal is None and kind not in ("toml", "csv"):
        refusal = "a price table is a .toml or .csv file"
    if refusal is None:
        try:  # (the file the check saw: a link swapped in since is refused, never followed)
            return kind, session.deployment().read_file(path.strip(), MAX_BYTES).decode("utf-8")
        except ValueError as exc:  # (`source_pin.PinRefused`, UnicodeDecodeError)
            refusal = str(exc) if not isinstance(exc, UnicodeDecodeError) else f"cannot read {path.strip()}: {exc}"
        except OSError as exc:
            refusal = f"cannot read {path.strip()}: {exc.strerror}"
    where.error(refusal[:1].upper() + refusal[1:] + ".")
    return None
