"""pandas, imported when an answer first becomes a DataFrame.

`import analytics` stays cheap because a load imports it for the SQL of the
derived tables (`transcript_lens.LoadTimeTables`, while the workers decode) and
never builds a DataFrame: importing pandas costs a loading process 0.4-0.6
CPU-seconds while its decode workers need both cores (docs/performance.md). Modules write
`from analytics import _pandas as pd` and use `pd` as they would pandas: a name this
module does not define is pandas' (a module `__getattr__`, PEP 562, the one way imports
are kept cheap here: CONTRIBUTING.md); tests/analytics/test_lazy_pandas.py holds
`import analytics` free of it.

>>> from analytics import _pandas as pd
>>> pd.DataFrame({"a": [1]}).shape  # the first pandas name imports pandas
(1, 1)
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import Any


def __getattr__(name: str) -> Any:
    if name.startswith("__"):  # (the import system asks for `__path__` & co.: not pandas')
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module("pandas"), name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value


def types_mapper(build: Callable[[], dict]) -> Callable[[Any], Any]:
    """A `to_pandas(types_mapper=...)` over the dict `build()` makes on first use (its dtypes need pandas).

    >>> mapper = types_mapper(lambda: {pa.int64(): pd.Int64Dtype()})  # doctest: +SKIP
    """
    table = functools.cache(build)
    return lambda arrow_type: table().get(arrow_type)


@functools.cache
def pandas_dtype(name: str) -> Any:
    """`pandas.api.types.pandas_dtype(name)`, made once."""
    return importlib.import_module("pandas").api.types.pandas_dtype(name)
