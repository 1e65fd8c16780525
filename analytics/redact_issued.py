"""A redactor's own placeholders in a text it masks (`analytics.redact.Redactor`): no personal value.

Text masked once may be masked again on its way out (a frame an answer masked, written as a CSV
that masks every text column); a placeholder it holds is then text, and a configured pattern may
match part of it (`[A-Z]+_[0-9]+` made `<EMAIL_1>` `<<TICKET_2>>`: its kind and number lost). A
finding that overlaps a placeholder the same redactor issued is dropped, so masking twice is
masking once. A placeholder it never issued (`<EMAIL_9>` typed by a user before nine addresses
were masked) is text like any other.

>>> from analytics.redact import Finding
>>> text = "<EMAIL_1> and TICKET_7 and <CARD_3>"
>>> [f.value for f in outside([Finding(1, 8, "T", "EMAIL_1"), Finding(14, 22, "T", "TICKET_7"),
...                            Finding(28, 34, "T", "CARD_3")], text, {"EMAIL": 1, "CARD": 2})]
['TICKET_7', 'CARD_3']
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

# `<KIND_n>` as `Redactor.placeholder` writes it (a kind's name: capitals, digits, underscores).
_PLACEHOLDER = re.compile(r"<([A-Z0-9_]{1,64})_([1-9][0-9]{0,8})>")


def outside(findings: list[Any], text: str, issued: Mapping[str, int]) -> list[Any]:
    """`findings` (sorted, none overlapping) less those overlapping a placeholder in `text` that was
    issued (`issued`: how many values of each kind have a placeholder), in one pass over both."""
    if "<" not in text or not issued:
        return findings
    spans = [m.span() for m in _PLACEHOLDER.finditer(text) if int(m.group(2)) <= issued.get(m.group(1), 0)]
    if not spans:
        return findings
    kept, k = [], 0
    for f in findings:
        while k < len(spans) and spans[k][1] <= f.start:
            k += 1
        if k < len(spans) and spans[k][0] < f.end:
            continue  # (overlaps the placeholder spans[k])
        kept.append(f)
    return kept
