"""Every TOML file a user hands the tool is read with its nesting bounded (`analytics.tomltable.loads`).

Python's `tomllib` recurses once per level of arrays and inline tables: a 4 KB value nested
2,000 deep raised `RecursionError` with a traceback of some 3,000 lines from each option reading
TOML. Each now refuses it in one line naming the file and the line, exit 2, as a JSON file
nested too deep is refused (tests/attacks/test_app_paths.py).
"""

from __future__ import annotations

import pytest

from analytics import tomltable
from tests.attacks.harness import attack, run_cli

DEEP = "[" * 2000 + "]" * 2000


@pytest.fixture(scope="module")
def db(sqlite_store, tmp_path_factory):
    folder = tmp_path_factory.mktemp("deep-toml")
    run_cli(["load", str(sqlite_store.path), "--db", str(folder / "lens.duckdb")], folder).succeeded()
    return folder / "lens.duckdb"


@pytest.mark.parametrize("option, table", [
    (["report", "costs", "--prices"], "[models.m]\ninput = "),
    (["report", "topics", "--topic-concepts"], "[concepts]\nx = "),
    (["report", "outcomes", "--lexicon"], "[signals]\nx = "),
    (["report", "conversations", "--redact", "--redact-config"], "[redact]\nterms = "),
])
def test_a_toml_option_nested_2000_deep_is_refused_in_one_line(db, tmp_path, option, table):
    deep = tmp_path / "deep.toml"
    deep.write_text(table + DEEP + "\n", encoding="utf-8")
    out = run_cli([*option[:2], "--db", str(db), *option[2:], str(deep)], tmp_path)
    out.no_traceback()
    assert out.returncode == 2 and "RecursionError" not in out.stderr
    (line,) = out.stderr.splitlines()
    assert line.startswith("error: ") and f"{deep}" in line and "nested deeper than 200 levels" in line


def test_an_app_config_nested_2000_deep_is_refused_in_one_line(tmp_path):
    deep = tmp_path / "app.toml"
    deep.write_text("[app]\nsource_roots = " + DEEP + "\n", encoding="utf-8")
    out = attack(["app", "--config", str(deep), "--port", "18999", "--headless"], tmp_path)
    out.no_traceback()
    assert out.returncode == 2
    assert out.stderr.splitlines() == [
        f"error: {deep}: not a TOML file (nested deeper than 200 levels (at line 2, column 216))"]


def test_nesting_is_measured_outside_strings_and_comments():
    text = 'a = "' + "[" * 500 + '"  # ' + "{" * 500 + "\nb = '''" + "[" * 500 + "'''\nc = [[1], {d = [2]}]\n"
    assert tomltable.loads(text)["c"] == [[1], {"d": [2]}]
    with pytest.raises(tomltable.TooDeep, match=r"nested deeper than 2 levels \(at line 1, column 7\)"):
        tomltable.loads("x = [[[1]]]", max_depth=2)
