"""pandas, imported when an answer first becomes a DataFrame.

`import analytics` stays cheap because a load imports it for the SQL of the
derived tables (`transcript_lens.LoadTimeTables`, while the workers decode) and
never builds a DataFrame: importing pandas costs a loading process 0.4-0.6
CPU-seconds while its decode workers need both cores (docs/performance.md). Modules write
`from analytics._pandas import pd` and use `pd` as they would pandas;
tests/analytics/test_lazy_pandas.py holds `import analytics` free of it.

>>> from analytics._pandas import pd
>>> pd.DataFrame({"a": [1]}).shape  # the first attribute imports pandas
(1, 1)
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import Any


class _LazyPandas:
    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        return getattr(importlib.import_module("pandas"), name)

    def __repr__(self) -> str:
        return "<pandas, imported on first use>"


pd: Any = _LazyPandas()


def types_mapper(build: Callable[[], dict]) -> Callable[[Any], Any]:
    """A `to_pandas(types_mapper=...)` over the dict `build()` makes on first use (its dtypes need pandas).

    >>> mapper = types_mapper(lambda: {pa.int64(): pd.Int64Dtype()})  # doctest: +SKIP
    """
    table = functools.cache(build)
    return lambda arrow_type: table().get(arrow_type)


@functools.cache
def pandas_dtype(name: str) -> Any:
    """`pandas.api.types.pandas_dtype(name)`, made once."""
    return pd.api.types.pandas_dtype(name)
