"""JSON text from users (uploads, imports) and from the data, read with its nesting bounded.

Python's `json` recurses once per nesting level, so a line of 100,000 `[` raises
`RecursionError` (or worse, deep inside a caller). `loads` measures the nesting first,
without recursion, and refuses a text nested deeper than `MAX_DEPTH` with a `ValueError`
whose message says so — what every reader of JSON lines already reports per line.

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


def loads(text: str | bytes, max_depth: int = MAX_DEPTH) -> Any:
    """`json.loads(text)`, refusing with `ValueError` a text nested deeper than `max_depth`."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8")
    if text.count("[") + text.count("{") > max_depth and depth(text) > max_depth:
        raise ValueError(f"nested deeper than {max_depth} levels")
    return json.loads(text)
