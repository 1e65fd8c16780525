"""Anyone who can write into a conversation can fill one message with values of one kind: a megabyte
of IPv4 addresses, of dash-joined digit groups (`237-2033`: a phone number's shape, none a number),
of phone numbers or of grouped IBANs, then a phone number. Each value is masked as its own, and the
number after them too: `phonenumbers` gives up on a text after 65,535 pieces that are no number, so
it is asked only about pieces that may be one, with no such limit (`analytics/redact_phone_matcher.py`);
no phone number is looked for in an address's or an IBAN's digits (`analytics.redact._Finder`); a
number found is not read again (`analytics/redact_phones.py`). The subprocess's timeout is no timing
assertion (the run takes seconds): only a run super-linear in the flood, or taking minutes a
megabyte, reaches it."""

from __future__ import annotations

import json
import random
import re

import pytest
from stdnum import iban as stdnum_iban

from tests.attacks.harness import attack, run_cli
from tests.attacks.test_masking_floods import THREAD, _store

SIZE = 1 << 20
TIMEOUT_S = 180


def _masked(tmp_path, text: str) -> str:
    store, db = tmp_path / "flood.sqlite", tmp_path / "flood.duckdb"
    _store(store, text)
    run_cli(["load", str(store), "--db", str(db), "--quiet"], tmp_path).succeeded()
    out = attack(["transcript", "--db", str(db), "--thread", THREAD, "--redact", "--format", "json"], tmp_path,
                 timeout=TIMEOUT_S)
    out.succeeded().within_budget()
    [first] = [m for m in json.loads(out.stdout) if m["role"] == "user"]
    return first["content"]


def _filled(value) -> list[str]:
    """Distinct values `value(i)`, as many as fill `SIZE` characters joined by spaces."""
    values, size = [], 0
    while size < SIZE:
        values.append(value(len(values)))
        size += len(values[-1]) + 1
    return values


def _iban(i: int) -> str:
    bban = f"37040044{i:010d}"
    whole = "DE" + stdnum_iban.calc_check_digits("DE00" + bban) + bban
    return " ".join(whole[k:k + 4] for k in range(0, len(whole), 4))


FLOODS = {
    "ipv4": ("IP", lambda i: f"{10 + i % 200}.{i // 65536 % 256}.{i // 256 % 256}.{i % 256}"),
    "phones": ("PHONE", lambda i: f"+1 415 {200 + i // 10000} {i % 10000:04d}"),
    "ibans": ("IBAN", _iban),
}


@pytest.mark.parametrize("flood", sorted(FLOODS))
def test_a_megabyte_of_one_kind_is_masked_value_by_value(tmp_path, flood):
    """Each value its own placeholder, and a phone number after them masked too."""
    kind, value = FLOODS[flood]
    values = _filled(value)
    assert len(set(values)) == len(values)
    content = _masked(tmp_path, " ".join(values) + " call 212 664 7665 today")
    after = len(values) + 1 if kind == "PHONE" else 1
    assert content == " ".join(f"<{kind}_{i + 1}>" for i in range(len(values))) + f" call <PHONE_{after}> today"


def test_a_megabyte_of_digit_groups_is_read_and_a_number_after_it_masked(tmp_path):
    """More than 65,535 groups, none a phone number, then one: the number is masked, the groups stay."""
    rng = random.Random(11)
    groups = _filled(lambda i: f"{rng.randrange(200, 999)}-{rng.randrange(1000, 9999)}")
    assert len(groups) > 65_535
    content = _masked(tmp_path, " ".join(groups) + " call 212 664 7665 today")
    assert re.search(r" call <PHONE_[0-9]+> today$", content), content[-80:]
    kept = set(content.split())
    assert sum(g in kept for g in groups) > 0.99 * len(groups)
