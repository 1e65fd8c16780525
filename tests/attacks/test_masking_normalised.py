"""Search under masking reads the text as the detector does (analytics/reader_view.py): a value
the detector masks because it reads full-width digits, a full-width hyphen, a non-breaking space
or a decomposed accent as what a reader sees cannot be found in parts by a search either.
Unmasked, the same probes find each message (so each probe does reach its value)."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from tests.attacks.harness import run_cli
from tests.attacks.stores import store_with_messages

THREAD = "normalised"
VALUES = {
    "full-width hyphens": "4111\uff0d1111\uff0d1111\uff0d1111",
    "full-width digits": "\uff12\uff10\uff10\uff11:\uff14\uff18\uff16\uff10:\uff14\uff18\uff16\uff10::\uff18\uff18\uff18\uff18",
    "non-breaking space": "Carol\u00a0Danvers",
    "decomposed accents": "Jose\u0301 A\u0301lvarez",
    "one accent of two decomposed": "Jos\u00e9 A\u0301lvarez",
}
TERMS = ["Carol Danvers", "José Álvarez"]
PROBES = ["4111\uff0d1111", "\uff14\uff18\uff16\uff10:\uff14\uff18", "Danvers", "lvarez"]


@pytest.fixture(scope="module")
def lens(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("normalised")
    store, db, config = folder / "store.sqlite", folder / "lens.duckdb", folder / "redact.toml"
    said = [HumanMessage(f"my {what} is {value} thanks") for what, value in VALUES.items()]
    store_with_messages(store, [*said, AIMessage("noted")], THREAD)
    run_cli(["load", str(store), "--db", str(db)], folder).succeeded()
    config.write_text("[redact]\nterms = [" + ", ".join(f'"{t}"' for t in TERMS) + "]\n", encoding="utf-8")
    return db, config


def test_each_value_is_masked_whole(lens, tmp_path):
    db, config = lens
    out = run_cli(["transcript", "--thread", THREAD, "--format", "csv", "--db", str(db), "--redact",
                  "--redact-config", str(config)], tmp_path)
    out.succeeded().never_prints(*VALUES.values(), "Danvers", "lvarez", "\uff14\uff18\uff16\uff10")
    for placeholder in ("<CARD_1>", "<IP_1>", "<NAME_1>", "<NAME_2>"):
        assert placeholder in out.stdout, out.stdout


@pytest.mark.parametrize("probe", PROBES)
def test_a_part_of_a_value_never_matches_a_search(probe, lens, tmp_path):
    db, config = lens
    plain = run_cli(["search", probe, "--db", str(db), "--format", "csv"], tmp_path).succeeded()
    assert len(plain.stdout.splitlines()) > 1  # unmasked, the probe finds its message
    out = run_cli(["search", probe, "--db", str(db), "--format", "csv", "--redact", "--redact-config", str(config)],
                 tmp_path)
    out.succeeded()
    assert len(out.stdout.splitlines()) <= 1, out.stdout  # a header, no hit
