"""`phonenumbers`' matcher asked only for the numbers masking keeps, and asked in time linear in the text.

`phonenumbers.PhoneNumberMatcher` cuts a text into candidates (up to 21 digit blocks) and parses each
whole, then piece by piece, until one is a number. Parsing is the cost (some 50 µs a piece), and a
text of digit groups (a list, a table, a flood of `237-2033` or of addresses) is almost all
candidates. Masking keeps a number only when it is written as one (`written_as_phone`: `+` or a
trunk `0`, ten digits or more) and possible, or when it is valid (`phonenumbers`' VALID leniency). So
`Matcher` asks, before parsing a piece, whether it could be either, from its digits alone
(`_may_be_valid`, a necessary condition drawn from the region's metadata), and parses only those: one
parse a piece at most, in one pass for both rules, where two leniencies took two passes.
The pieces it skips are pieces `phonenumbers` would have refused.

`phonenumbers` gives up on a text after 65,535 pieces that are no number (its `max_tries`), so a
number after a long enough list of decoys was never looked for: here there is no such limit (the time
is bounded by the text's length: candidates do not overlap, and each is at most 21 blocks).

>>> [m.raw_string for m in Matcher("call 212 664 7665, 237-2033 or +44 7700 900456", "US")]
['212 664 7665', '+44 7700 900456']
"""

from __future__ import annotations

import functools
import re
import sys
from typing import NamedTuple

import phonenumbers
from phonenumbers import Leniency, PhoneMetadata, PhoneNumberMatcher

#: The separators a piece's digits may be written with for `_may_be_valid` to read them; any other
#: character (a `+`, letters of an extension or a vanity number, other punctuation) and the piece is parsed.
_SEPARATORS = str.maketrans("", "", " ()./-")
#: More digits than any number's: country code (3), national prefix or international prefix and
#: carrier code (a handful), national number (17, `phonenumbers`' limit).
_MOST_DIGITS = 30
#: Fewer digits than any valid number's (the shortest national number of any region: Austria's,
#: Germany's, Niue's, …) and than one written as a phone number (`written_as_phone`).
FEWEST_DIGITS = 4


def written_as_phone(raw: str) -> bool:
    """`+44 7700 900456`, `(0)20 …`, `07700 900456`: an international or trunk-prefixed form of 10 digits or more.

    >>> written_as_phone("+44 7700 900456"), written_as_phone("07700 900456"), written_as_phone("20250305")
    (True, True, False)
    """
    return raw.lstrip("(")[:1] in ("+", "0") and sum(map(str.isdigit, raw)) >= 10


class _Plan(NamedTuple):
    """What a region's metadata says of a national number's digits."""

    international: re.Pattern | None  # its international prefix (`011`, `00`): any country follows
    national: re.Pattern | None  # its national prefix for parsing (`1`, `0`), stripped before the number
    rewrites: bool  # a prefix rewritten, not stripped (Argentina's, Brazil's): no shortcut
    code: str  # its country code, which a number may open with (`44 20 …`)
    numbers: re.Pattern  # every national number of the regions of that code (their `general_desc`)
    typed: re.Pattern  # every one of a type (fixed line, mobile, toll free, …): what a valid number matches too
    lengths: frozenset[int]  # every possible length of one (its main region's, local numbers' too)
    shortest: int  # the fewest digits of a valid one (`numbers`' possible lengths)


#: The types of number a valid one is of (`phonenumbers`' `_number_type_helper`: none, and it is no valid number).
_TYPES = ("premium_rate", "toll_free", "shared_cost", "voip", "personal_number", "pager", "uan", "voicemail",
          "fixed_line", "mobile")


@functools.cache
def _plan(region: str) -> _Plan:
    meta = PhoneMetadata.metadata_for_region(region)
    regions = [PhoneMetadata.metadata_for_region(r) for r in phonenumbers.COUNTRY_CODE_TO_REGION_CODE[meta.country_code]]
    typed = [desc.national_number_pattern for m in regions for desc in (getattr(m, t) for t in _TYPES) if desc is not None]
    main = PhoneMetadata.metadata_for_region(phonenumbers.region_code_for_country_code(meta.country_code)).general_desc
    return _Plan(re.compile(meta.international_prefix) if meta.international_prefix else None,
                 re.compile(meta.national_prefix_for_parsing) if meta.national_prefix_for_parsing else None,
                 bool(meta.national_prefix_transform_rule), str(meta.country_code),
                 re.compile("|".join(f"(?:{m.general_desc.national_number_pattern})" for m in regions
                                     if m.general_desc.national_number_pattern)),
                 re.compile("|".join(f"(?:{p})" for p in typed if p)),
                 frozenset(main.possible_length) | frozenset(main.possible_length_local_only),
                 min(n for m in regions for n in m.general_desc.possible_length if n > 0))


def _plain(piece: str) -> str | None:
    """The digits of `piece` when it holds digits and plain separators alone, else None (a `+`,
    letters of an extension or a vanity number, other punctuation: it may stand for anything).

    >>> _plain("(020) 7946-0958"), _plain("+1 212"), _plain("12 ext 3")
    ('02079460958', None, None)
    """
    digits = piece.translate(_SEPARATORS)
    return digits if digits.isascii() and digits.isdigit() else None


def _nationals(digits: str | None, plan: _Plan) -> list[str] | None:
    """The national numbers a piece of these `digits` (`_plain`) may stand for when `phonenumbers`
    parses it in the region of `plan`: its digits, with the region's national prefix or its country
    code (then the prefix) taken off the front. None when it may stand for anything: it is no plain
    piece, it opens with the international prefix (any country follows), or the region rewrites its
    prefix.

    >>> _nationals("02079460958", _plan("GB")), _nationals("442079460958", _plan("GB"))
    (['02079460958', '2079460958'], ['442079460958', '442079460958', '2079460958', '2079460958'])
    >>> _nationals("0012126647665", _plan("GB")), _nationals(None, _plan("GB"))
    (None, None)
    """
    if digits is None or plan.rewrites or (plan.international is not None and plan.international.match(digits)):
        return None
    out = []
    for number in (digits, digits[len(plan.code):]) if digits.startswith(plan.code) else (digits,):
        prefix = plan.national.match(number) if plan.national is not None else None
        out += [number, number[prefix.end():] if prefix else number]
    return out


def _may_be_valid(digits: str | None, plan: _Plan) -> bool:
    """False only when a piece of these `digits` (`_plain`) parsed in the region of `plan` is no valid
    number whatever they mean: a valid number's national significant number is one of `_nationals`,
    no shorter than the fewest digits of one, and matches the metadata of a region of its country
    code, its numbers and those of one type (`phonenumbers.is_valid_number` looks for that region,
    then the number's type).

    >>> [_may_be_valid(_plain(p), _plan("US")) for p in ("212 664 7665", "1 212 664 7665", "237-2033", "011 44 20 7946 0958")]
    [True, True, False, True]
    >>> [_may_be_valid(_plain(p), _plan("GB")) for p in ("020 7946 0958", "44 20 7946 0958", "2372033", "+1 2")]
    [True, True, False, True]
    """
    nationals = _nationals(digits, plan)
    if nationals is None:
        return True
    return len(nationals[0]) >= plan.shortest and any(
        plan.numbers.fullmatch(n) and plan.typed.fullmatch(n) for n in nationals if n)


def _may_be_possible(digits: str | None, plan: _Plan) -> bool:
    """False only when a piece of these `digits` (`_plain`) parsed in the region of `plan` is no
    possible number: a possible number's national significant number is one of `_nationals` and of
    a possible length (`phonenumbers.is_possible_number`).

    >>> [_may_be_possible(_plain(p), _plan("US")) for p in ("020 7946 0958", "212 664 7665", "011 44 20 7946 0958")]
    [False, True, True]
    """
    nationals = _nationals(digits, plan)
    return nationals is None or any(len(n) in plan.lengths for n in nationals)


_PLUS = re.compile(r"[^0-9+]*\+")


def _international(piece: str) -> bool:
    """Whether `piece` opens with a `+` and a country code, so reads the same in every region.

    >>> _international("+44 20 7946 0958"), _international("(+1) 212"), _international("+0 20"), _international("020")
    (True, True, False, False)
    """
    plus = _PLUS.match(piece) if "+" in piece else None
    if plus is None:
        return False
    digits = _plain(piece[plus.end():])
    return (digits is not None and digits[0] != "0"
            and any(int(digits[:n]) in phonenumbers.COUNTRY_CODE_TO_REGION_CODE for n in (1, 2, 3)))


class Matcher(PhoneNumberMatcher):
    """The numbers of `text` that masking keeps, read in `region`: each written as a phone number and
    possible, or valid (`strict`: `phonenumbers`' VALID leniency, which also refuses a number glued to
    a letter or missing a national prefix its region requires; not `strict`, `is_valid_number`
    alone). A piece that can be neither is refused before it is parsed, so the matcher reads on into
    it (where a kept number may stand) instead of stopping at a possible number it would drop. Not
    `international`: a piece opening with `+` and a country code, which reads the same in every
    region, is left to the matcher of the region that reads them."""

    def __init__(self, text: str, region: str, strict: bool = True, international: bool = True) -> None:
        super().__init__(text, region, leniency=Leniency.VALID, max_tries=sys.maxsize)
        self._plan = _plan(region)
        self._strict = strict
        self._international = international

    def _parse_and_verify(self, candidate, offset):
        digits = _plain(candidate)
        if digits is not None and not FEWEST_DIGITS <= len(digits) <= _MOST_DIGITS:
            return None  # (fewer or more digits than any number has)
        if not self._international and _international(candidate):
            return None
        if written_as_phone(candidate):
            if not _may_be_possible(digits, self._plan):
                return None
            self.leniency = Leniency.POSSIBLE  # (read by the method below: a number written as one need only be possible)
            return super()._parse_and_verify(candidate, offset)
        if not _may_be_valid(digits, self._plan):
            return None
        if self._strict:
            self.leniency = Leniency.VALID
            return super()._parse_and_verify(candidate, offset)
        self.leniency = Leniency.POSSIBLE
        match = super()._parse_and_verify(candidate, offset)
        return match if match is not None and phonenumbers.is_valid_number(match.number) else None
