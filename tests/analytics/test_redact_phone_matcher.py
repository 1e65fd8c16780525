"""The phone matcher masking uses (`analytics/redact_phone_matcher.py`) refuses a piece before parsing
it only when `phonenumbers` would not keep it: every number `phonenumbers`' own matcher keeps — valid,
or written as one (`+…`, a trunk `0`, ten digits or more) and possible — it keeps too, for example
numbers of every type of every region, written nationally and internationally, read in regions with
and without a national prefix rewritten (Argentina's)."""

from __future__ import annotations

import phonenumbers
import pytest
from phonenumbers import Leniency, PhoneMetadata, PhoneNumberFormat, PhoneNumberMatcher

from analytics.redact_phone_matcher import FEWEST_DIGITS, Matcher, written_as_phone

_TYPES = [t for t in vars(phonenumbers.PhoneNumberType).values() if isinstance(t, int)]


def _examples() -> list[str]:
    texts = set()
    for region in sorted(phonenumbers.SUPPORTED_REGIONS):
        for kind in _TYPES:
            number = phonenumbers.example_number_for_type(region, kind)
            if number is not None:
                for form in (PhoneNumberFormat.NATIONAL, PhoneNumberFormat.INTERNATIONAL):
                    texts.add(phonenumbers.format_number(number, form))
    return sorted(texts)


def _kept_by_phonenumbers(text: str, region: str) -> set[tuple[int, int]]:
    kept = {(m.start, m.end) for m in PhoneNumberMatcher(text, region, leniency=Leniency.VALID, max_tries=10**9)}
    kept |= {(m.start, m.end) for m in PhoneNumberMatcher(text, region, leniency=Leniency.POSSIBLE, max_tries=10**9)
             if written_as_phone(m.raw_string)}
    return kept


@pytest.mark.parametrize("region", ["US", "GB", "DE", "AR"])
def test_every_number_phonenumbers_keeps_is_kept(region):
    missed = []
    for written in _examples():
        text = f"call {written} today"
        ours = [(m.start, m.end) for m in Matcher(text, region)]
        for start, end in _kept_by_phonenumbers(text, region):
            if not any(a <= start and end <= b for a, b in ours):
                missed.append(written)
    assert not missed, missed[:20]


def test_no_valid_number_is_shorter_than_the_fewest_digits():
    shortest = min(n for region in phonenumbers.SUPPORTED_REGIONS
                   for n in PhoneMetadata.metadata_for_region(region).general_desc.possible_length if n > 0)
    assert FEWEST_DIGITS <= shortest
