"""A per-model price table the user supplies: TOML or CSV, prices per million tokens.

No prices are bundled: what a model costs is the user's contract, and it changes.
docs/cost.md has an example file (its figures are placeholders, not prices).

TOML (`currency` optional; `cached_input` optional, else cached tokens cost `input`)::

    currency = "USD"
    [models."model-a"]
    input = 2.5
    output = 10.0
    cached_input = 1.25

CSV (a header, then one row per model; `cached_input` may be empty or absent)::

    model,input,output,cached_input
    model-a,2.5,10.0,1.25

>>> table = parse_prices("model,input,output\\nm,1,2\\n", "csv")
>>> table.models["m"].cost(1_000_000, 500_000)
2.0
"""

from __future__ import annotations

import csv
import io
import math
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from analytics import tomltable
from analytics.errors import BadRequest
from analytics.user_files import read_user_text

#: Column names a CSV price table may use for each price (per million tokens).
_CSV_NAMES = {
    "input": ("input", "input_per_1m", "input_per_million"),
    "output": ("output", "output_per_1m", "output_per_million"),
    "cached_input": ("cached_input", "cached_input_per_1m", "cached_input_per_million"),
}


@dataclass(frozen=True)
class ModelPrice:
    """One model's prices per million tokens; `cached_input` None: cached input tokens cost `input`.

    >>> ModelPrice(2.0, 8.0, 0.5).cost(1_000_000, 1_000_000, cached_tokens=500_000)
    9.25
    """

    input: float
    output: float
    cached_input: float | None = None

    def cost(self, input_tokens: float, output_tokens: float, cached_tokens: float = 0) -> float:
        """The cost of these tokens; `cached_tokens` is the part of `input_tokens` read from a cache."""
        cached = min(cached_tokens or 0, input_tokens or 0)
        cached_price = self.input if self.cached_input is None else self.cached_input
        return ((input_tokens or 0) - cached) * self.input / 1e6 + cached * cached_price / 1e6 \
            + (output_tokens or 0) * self.output / 1e6


@dataclass(frozen=True)
class PriceTable:
    """Prices by model name (exact `messages.model` values) and the currency they are in."""

    models: Mapping[str, ModelPrice] = field(default_factory=dict)
    currency: str = ""

    @property
    def has_cached_prices(self) -> bool:
        return any(p.cached_input is not None for p in self.models.values())


def _price(value, where: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise BadRequest(f"{where}: {value!r} is not a number") from None
    if isinstance(value, bool) or not math.isfinite(number) or number < 0:
        raise BadRequest(f"{where}: a price must be a number >= 0, got {value!r}")
    return number


def _from_toml(text: str, name: str) -> PriceTable:
    try:
        data = tomltable.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BadRequest(f"{name}: not a TOML file ({exc})") from None
    unknown = set(data) - {"currency", "models"}
    if unknown:
        raise BadRequest(f"{name}: unknown key(s) {', '.join(sorted(unknown))}; known: currency, models")
    models = data.get("models", {})
    if not isinstance(models, dict):
        raise BadRequest(f"{name}: [models] must be a table of tables")
    return PriceTable(_models_from(models, name), str(data.get("currency", "")))


def _column(header: list[str], key: str) -> int | None:
    for candidate in _CSV_NAMES[key]:
        if candidate in header:
            return header.index(candidate)
    return None


def _from_csv(text: str, name: str) -> PriceTable:
    rows = [r for r in csv.reader(io.StringIO(text)) if any(cell.strip() for cell in r)]
    if not rows:
        raise BadRequest(f"{name}: an empty price table")
    header = [h.strip().lower() for h in rows[0]]
    where = {key: _column(header, key) for key in _CSV_NAMES}
    if "model" not in header or where["input"] is None or where["output"] is None:
        raise BadRequest(f"{name}: the header needs model, input and output (per million tokens), got {rows[0]}")
    model_at = header.index("model")
    table: dict[str, ModelPrice] = {}
    for line, row in enumerate(rows[1:], start=2):
        cells = [c.strip() for c in row] + [""] * len(header)
        model = cells[model_at]
        if not model:
            raise BadRequest(f"{name}, line {line}: no model")
        if model in table:
            raise BadRequest(f"{name}, line {line}: {model!r} twice")
        cached = cells[where["cached_input"]] if where["cached_input"] is not None else ""
        table[model] = ModelPrice(_price(cells[where["input"]], f"{name}, line {line}, input"),
                                  _price(cells[where["output"]], f"{name}, line {line}, output"),
                                  _price(cached, f"{name}, line {line}, cached_input") if cached else None)
    return PriceTable(table)


def parse_prices(text: str, kind: str, name: str = "price table") -> PriceTable:
    """A `PriceTable` from the text of a `kind` ("toml" or "csv") file named `name` in errors."""
    if kind == "toml":
        return _from_toml(text, name)
    if kind == "csv":
        return _from_csv(text, name)
    raise BadRequest(f"{name}: a price table is a .toml or .csv file")


def load_prices(source: str | os.PathLike | PriceTable | Mapping) -> PriceTable:
    """A `PriceTable` from one, a `.toml` / `.csv` path, or a mapping model → {input, output[, cached_input]}.

    >>> load_prices({"m": {"input": 1, "output": 2}}).models["m"].output
    2.0
    """
    if isinstance(source, PriceTable):
        return source
    if isinstance(source, Mapping):
        return PriceTable(_models_from(source, "prices"))
    path = Path(source)
    kind = path.suffix.lower().lstrip(".")
    if kind not in ("toml", "csv"):
        raise BadRequest(f"{path}: a price table is a .toml or .csv file")
    try:
        text = read_user_text(path, "price table")
    except FileNotFoundError:
        raise BadRequest(f"{path}: no such price table") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BadRequest(f"{path}: cannot read the price table ({exc})") from None
    return parse_prices(text, kind, str(path))


def _models_from(models: Mapping, name: str) -> dict[str, ModelPrice]:
    """Model → `ModelPrice` from a mapping model → {input, output[, cached_input]} (a TOML `[models]` table)."""
    table = {}
    for model, prices in models.items():
        if not isinstance(prices, Mapping) or not {"input", "output"} <= set(prices) \
                or set(prices) - {"input", "output", "cached_input"}:
            raise BadRequest(f"{name}: [models.{model!r}] needs input and output (and may have cached_input)")
        table[str(model)] = ModelPrice(
            _price(prices["input"], f"{name}: {model} input"), _price(prices["output"], f"{name}: {model} output"),
            None if prices.get("cached_input") is None else _price(prices["cached_input"], f"{name}: {model} cached_input"))
    return table
