r"""Pasted machine output inside a message: the stretches of a log, a stack trace or a listing,
drawn as written (preformatted) while the message's own words stay Markdown.

Drawn as Markdown, a log's `#` lines become headings, its `*` and `_` runs emphasis, `__init__`
bold, its `|` rows run together and its indentation is lost. A line is machine output when it
holds a time of day, a log level, a stack frame, a shell prompt, `key=value` pairs, or is
indented (not a list item), a banner (`#### FAILED ####`) or dense with symbols; a `#` line, a `|`
row or a line of symbols may be either, so it joins the stretch around it. A stretch of at least
`LOG_LINES` lines, `LOG_MACHINE` of them machine output, is a log. A message with a Markdown
table (its separator row) or a fenced block is Markdown its writer meant, all of it.

>>> [log for log, _ in parts("Here is the build:\n#### FAILED ####\n  __init__.py | line 12\n  __main__.py | line 0")]
[False, True]
>>> parts("## Your refund\n\nI have **issued** it.\n\n- amount: 89.00 EUR\n  - by card")
[(False, '## Your refund\n\nI have **issued** it.\n\n- amount: 89.00 EUR\n  - by card')]
"""

from __future__ import annotations

import re

#: A line that is machine output whatever surrounds it.
_MACHINE = re.compile(
    r"\d{1,2}:\d{2}:\d{2}"  # a time of day
    r"|\b(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|FATAL|CRITICAL|SEVERE)\b"  # a log level
    r"|^Traceback \(|^\s*File \".*\", line \d+|^\s+at [\w.$<>]+\(|^\s*[\w.]*(?:Error|Exception):"  # a trace
    r"|^\s*[$>] \S|(?:\b\w+=\S+.*){2}"  # a shell prompt, key=value pairs
    r"|^(?:\t| {2,})(?!\s*(?:[-*+]|\d+[.)])\s)\S"  # indented, not a list item
    r"|^\s*([#*=_~+-])\1{2,}.*\1{2,}\s*$"  # a banner: #### FAILED ####, *** step 3 ***
)
#: A line that may be either: a heading or a shell comment, a table row or a listing's, a rule.
_EITHER = re.compile(r"^\s*(?:#|\||\*{2,}|_{2,}|={2,}|-{3,})|^\s*$")
_SYMBOLS = re.compile(r"[#*_|=<>{}\[\]\\/~^$@]")
#: A Markdown table's separator row, a fenced block: Markdown its writer meant.
_MEANT = re.compile(r"(?m)^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)+\|?\s*$|^\s*(?:```|~~~)")
#: A log is a stretch of at least this many lines, this many of them machine output.
LOG_LINES, LOG_MACHINE = 3, 2


def _machine(line: str) -> bool:
    stripped = line.strip()
    dense = len(stripped) >= 4 and len(_SYMBOLS.findall(stripped)) > 0.3 * len(stripped)
    return bool(dense or _MACHINE.search(line))


def parts(text: str) -> list[tuple[bool, str]]:
    """`text` cut into its stretches, in order: (True, a log's lines as written) or (False, Markdown)."""
    lines = text.replace("\r\n", "\n").split("\n")
    if len(lines) < LOG_LINES or _MEANT.search(text):
        return [(False, text)]
    kinds = ["machine" if _machine(line) else "either" if _EITHER.search(line) else "prose" for line in lines]
    logs = [False] * len(lines)
    i = 0
    while i < len(lines):
        if kinds[i] == "prose":
            i += 1
            continue
        j = i
        while j < len(lines) and kinds[j] != "prose":
            j += 1
        while i < j and not lines[i].strip():  # (blank lines at a stretch's ends are the prose's)
            i += 1
        end = j
        while end > i and not lines[end - 1].strip():
            end -= 1
        filled = [k for k in range(i, end) if lines[k].strip()]
        if len(filled) >= LOG_LINES and sum(kinds[k] == "machine" for k in filled) >= LOG_MACHINE:
            logs[i:end] = [True] * (end - i)
        i = j
    out: list[tuple[bool, str]] = []
    for log, line in zip(logs, lines):
        if out and out[-1][0] == log:
            out[-1] = (log, out[-1][1] + "\n" + line)
        else:
            out.append((log, line))
    return out


def has_log(text: str) -> bool:
    """Whether `text` holds a stretch of machine output (`parts`)."""
    return any(log for log, _ in parts(text))
