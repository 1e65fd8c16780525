"""A card number grouped by several kinds of separator — spaces, dashes, dots, underscores,
slashes, non-breaking spaces in one number, as a writer dodging a masker would — is masked whole
under `--redact`, and a search cannot find a part of it, while the same search unmasked does
(docs/privacy.md, "What masking covers"). Digits that mix separators without a card's grouping
(a date beside a number whose digits together pass the Luhn check) are left as they are.
"""

from __future__ import annotations

import re

from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from tests.attacks.harness import run_cli
from tests.attacks.stores import store_with_messages

THREAD = "mixed"
CARDS = [
    "4111 1111-1111_1111",
    "5500\u00a00000.0000/0004",
    "4012-8888 8888.1881",
    "3782/822463 10005",  # American Express grouping, 4-6-5
]
DECOY = "2025-03-05 1741203902"  # a date and an epoch; its 18 digits pass the Luhn check
# A visible piece of each card, never printed under masking; the probes are searched.
SECRETS = ["1111-1111", "0000.0000", "8888 8888", "822463"]
PROBES = ["1111-1111", "8888 8888"]


@pytest.fixture(scope="module")
def lens(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("mixed")
    store, db = folder / "store.sqlite", folder / "lens.duckdb"
    said = [HumanMessage(f"my card is {card} thanks") for card in CARDS]
    store_with_messages(store, [*said, HumanMessage(f"logged {DECOY} ok"), AIMessage("noted")], THREAD)
    run_cli(["load", str(store), "--db", str(db)], folder).succeeded()
    return db


def test_a_card_grouped_by_mixed_separators_is_masked_whole(lens, tmp_path):
    out = run_cli(["transcript", "--thread", THREAD, "--format", "csv", "--db", str(lens), "--redact"], tmp_path)
    out.succeeded().never_prints(*SECRETS)
    # (a placeholder's number counts on within the process: another test's cards may come first)
    assert len(set(re.findall(r"<CARD_\d+>", out.stdout))) == len(CARDS), out.stdout
    assert DECOY in out.stdout and out.stdout.count("thanks") == len(CARDS)


@pytest.mark.parametrize("probe", PROBES)
def test_a_part_of_such_a_card_never_matches_a_search(probe, lens, tmp_path):
    plain = run_cli(["search", probe, "--db", str(lens), "--format", "csv"], tmp_path).succeeded()
    assert len(plain.stdout.splitlines()) > 1  # unmasked, the probe finds the message
    out = run_cli(["search", probe, "--db", str(lens), "--format", "csv", "--redact"], tmp_path)
    out.succeeded().never_prints(*(s for s in SECRETS if s != probe))  # (the summary line names the query)
    assert len(out.stdout.splitlines()) <= 1, out.stdout  # a header, no hit


@pytest.mark.parametrize("card", ["4111  1111  1111  1111", "4111 \t1111 1111 1111", "5500  0000  0000  0004",
                                  "4111*1111*1111*1111"])
def test_a_card_grouped_by_wider_spaces_or_stars_is_masked(card):
    from analytics.masking import mask_text
    from analytics.policy import Policy

    shown = mask_text(f"card {card} ok", Policy(redact=True))
    assert re.fullmatch(r"card <CARD_\d+> ok", shown), shown


@pytest.mark.parametrize("decoy", ["1,2,3,4,5", "2024, 1111, 2222, 3333", "sizes 10  12  14  16"])
def test_lists_of_numbers_that_are_no_card_stay_as_written(decoy):
    from analytics.masking import mask_text
    from analytics.policy import Policy

    assert mask_text(decoy, Policy(redact=True)) == decoy
