"""JSON Lines from users (a Resume QA observed log, an annotations import), read a line at a time
and at most `MAX_LINES` lines per file.

Each line read is kept as an object (an entry, a line error, an annotation to write): about
2 kB apiece once compared or resolved, so a 5 MB file of `1` lines (2.6 million bad lines)
asked for 3 GB. A file of more lines is refused with one `BadRequest` naming the limit,
having read no more than `MAX_LINES` + 1 lines of it.

>>> list(bounded(["a", "b"], "log.jsonl", max_lines=2))
['a', 'b']
>>> list(bounded(["a", "b", "c"], "log.jsonl", max_lines=2))
Traceback (most recent call last):
...
analytics.errors.BadRequest: log.jsonl has more than 2 lines, the most read from one JSON Lines file: split it
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from analytics.errors import BadRequest

#: The most lines (blank ones included) read from one uploaded or imported JSON Lines file.
MAX_LINES = 100_000


def bounded(lines: Iterable[str], what: str, max_lines: int = MAX_LINES) -> Iterator[str]:
    """`lines` as they come; `BadRequest` naming `what` and the limit at line `max_lines` + 1."""
    for number, line in enumerate(lines, 1):
        if number > max_lines:
            raise BadRequest(f"{what} has more than {max_lines:,} lines, the most read from one JSON Lines file: "
                             "split it")
        yield line
