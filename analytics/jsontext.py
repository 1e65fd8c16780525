"""JSON text from users (uploads, imports) and from the data, read with its nesting bounded.

Python's `json` recurses once per nesting level, so a line of 100,000 `[` raises
`RecursionError` (or worse, deep inside a caller). `loads` measures the nesting first,
without recursion, and refuses a text nested deeper than `MAX_DEPTH` with a `ValueError`
whose message says so — what every reader of JSON lines already reports per line.

Python's `json` also makes one object per element, 56 bytes or more apiece: one 93 MB line of
31 million `[]` asked for 2.3 GB and two minutes before any key was checked. `loads` counts the
elements first (commas, `[` and `{` outside strings: counts at C speed, no object made) and
refuses a text of more than `MAX_ELEMENTS` the same way.

>>> loads('{"a": [1, {"b": 2}]}')
{'a': [1, {'b': 2}]}
>>> loads("[" * 1000 + "]" * 1000)
Traceback (most recent call last):
...
ValueError: nested deeper than 200 levels
"""

from __future__ import annotations

import json
import re
from typing import Any

#: The deepest nesting of arrays and objects read (the loader's own limit, loaders/decode.py).
MAX_DEPTH = 200
#: The most arrays, objects and array or object members read from one text (about 60 MB of objects).
MAX_ELEMENTS = 1_000_000

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")


def depth(text: str) -> int:
    """The deepest nesting of `[` / `{` outside strings (a linear scan, no recursion).

    >>> depth('{"x": "[[[[", "y": [[1]]}')
    3
    """
    deepest = level = 0
    for m in _BRACKET.finditer(_STRING.sub('""', text)):
        if m.group() in "[{":
            level += 1
            deepest = max(deepest, level)
        else:
            level -= 1
    return deepest


def elements(text: str) -> int:
    """A bound on how many arrays, objects and members `text` holds: its `[`, `{` and `,` outside strings.

    >>> elements('{"a": [1, 2], "b": "x,y"}')
    4
    """
    return sum(map(_STRING.sub('""', text).count, "[{,"))


def loads(text: str | bytes, max_depth: int = MAX_DEPTH, max_elements: int = MAX_ELEMENTS) -> Any:
    """`json.loads(text)`, refusing with `ValueError` a text nested deeper than `max_depth` or
    of more than `max_elements` elements (`elements`).

    >>> loads("[" + "0," * 10 + "0]", max_elements=5)
    Traceback (most recent call last):
    ...
    ValueError: more than 5 JSON elements (arrays, objects and their members) in one text
    """
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8")
    if sum(map(text.count, "[{,")) > max_elements and elements(text) > max_elements:
        raise ValueError(f"more than {max_elements:,} JSON elements (arrays, objects and their members) in one text")
    if text.count("[") + text.count("{") > max_depth and depth(text) > max_depth:
        raise ValueError(f"nested deeper than {max_depth} levels")
    return json.loads(text)
