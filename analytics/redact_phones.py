"""Phone numbers in a text (`analytics.redact`'s `PHONE` kind): where each stands, and its E.164 form.

Found three ways: North American numbers written with separators (`_NANP`, fictional area codes
too); what `phonenumbers` reads in each configured region, kept when written as a phone number or
valid (`analytics.redact_phone_matcher.Matcher`); and, since `phonenumbers` reads a number with the
digits before it (`line2 07700 900456`, `ticket 12 020 7946 0958`) as one longer number that is
none, each run of digits read again from each of its first groups (`_later_groups`).

Every step reads the text once, and a flood of numbers costs time linear in their number: a group
already inside a number found is not read again (`phones`). A number may be found more than one way
(the findings are merged: `analytics.redact_merge`).

>>> text = "ring (415) 555-0199 or line2 07700 900456"
>>> sorted({(text[a:b], v) for a, b, v in phones(text, ("US", "GB"))})
[('(415) 555-0199', '+14155550199'), ('07700 900456', '+447700900456')]
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterator

import phonenumbers
from phonenumbers import PhoneNumberFormat

from analytics.redact_phone_matcher import Matcher

# A run of seven digits or more, separators allowed: the only texts a phone number can hide in.
_PHONE_HINT = re.compile(r"[0-9](?:[\s().\-/]{0,3}[0-9]){6,}")
# North American numbers written with separators, `(555) 010-4477`, `555-010-4477`: numbers of
# fictional area codes (555 in films and test data) fail `phonenumbers`' validity check but are
# written to be read as phone numbers; `+1 …` and national forms of real ones are found below.
_NANP = re.compile(r"(?<![0-9-])(?:\+?1[ .-]?)?(?:\([2-9][0-9]{2}\)\s?[0-9]{3}|[2-9][0-9]{2}[.-][2-9][0-9]{2})[.-][0-9]{4}(?![0-9]|-[0-9])")
# A run of digit groups a phone number may stand in (`_PHONE_HINT`'s separators); possessive, read once.
_PHONE_RUN = re.compile(r"[0-9](?:[\s().\-/]{0,3}[0-9])*+")
#: How many groups after a run's first a number is looked for from, and how many characters it may take
#: (the longest number, 15 digits, with a separator of up to 3 characters between each two).
_LATER_GROUPS = 3
_PHONE_CHARS = 60

Found = tuple[int, int, str]  # (start, end, the number in E.164)


def phones(text: str, regions: tuple[str, ...]) -> Iterator[Found]:
    """Each phone number in `text`: (start, end, E.164), each way's in text order."""
    if not _PHONE_HINT.search(text):
        return
    for m in _NANP.finditer(text):
        digits = re.sub(r"[^0-9]", "", m.group())
        yield m.start(), m.end(), "+1" + digits[-10:]
    found = list(_matched(text, 0, len(text), regions))
    # A later group inside a number found is not read again: the numbers found, by start, are taken
    # off a heap as the groups pass them, keeping how far they reach.
    ahead = [(start, end) for start, end, _ in found]
    heapq.heapify(ahead)
    reach = 0
    for start, end, cut in _later_groups(text):
        while ahead and ahead[0][0] <= start:
            reach = max(reach, heapq.heappop(ahead)[1])
        if start < reach:
            continue
        for f in _matched(text, start, end, regions, strict=False):
            if not (cut and f[1] == end):
                found.append(f)
                heapq.heappush(ahead, (f[0], f[1]))
    yield from found


def _later_groups(text: str) -> Iterator[tuple[int, int, bool]]:
    """Where a phone number is looked for again in each run of seven digits or more: from each of its
    first `_LATER_GROUPS` groups after white space (a `(` or `+` right before one with it; a group
    after a dot, a dash or a slash is part of a version or a date) that leaves seven digits or more, to the run's end or, cut between two groups, `_PHONE_CHARS` on: (start,
    end, whether it was cut).

    >>> [("line2 07700 900456 x"[a:b], cut) for a, b, cut in _later_groups("line2 07700 900456 x")]
    [('07700 900456', False)]
    """
    for run in _PHONE_RUN.finditer(text):
        if sum(c.isdigit() for c in run.group()) < 7:
            continue
        groups = [run.start() + m.start() for m in re.finditer(r"(?<=\s)[(+]?[0-9]", run.group())]
        for start in groups[:_LATER_GROUPS]:
            end = run.end()
            if end - start > _PHONE_CHARS:
                end = start + _PHONE_CHARS
                while text[end - 1].isdigit() and text[end].isdigit():
                    end -= 1
            if sum(c.isdigit() for c in text[start:end]) < 7:
                break  # (no number of seven digits is left in the run)
            yield start, end, end < run.end()


def _matched(text: str, start: int, end: int, regions: tuple[str, ...], strict: bool = True) -> Iterator[Found]:
    """The phone numbers `phonenumbers` finds in text[start:end] that masking keeps, as spans of
    `text`: written as one (`+44 7700 900456`, `07700 900456`: ranges kept for drama, which
    `phonenumbers` calls invalid) and possible, or valid (`strict`: by its VALID leniency; not
    `strict`, a stretch of one run of digits, by `is_valid_number`)."""
    part = text[start:end]
    for k, region in enumerate(regions):
        for match in Matcher(part, region, strict=strict, international=k == 0):
            if not _glued(text, start + match.start, start + match.end):
                yield start + match.start, start + match.end, phonenumbers.format_number(match.number, PhoneNumberFormat.E164)


def _glued(text: str, start: int, end: int) -> bool:
    """Whether digits at text[start:end] are part of a longer token (`ORD-2025-000123`,
    `INV/2025/0001234`): an identifier, not a number someone would dial."""
    before = text[start - 1] if start else " "
    after = text[end] if end < len(text) else " "
    return before.isalnum() or before in "-_/#" or after.isalnum() or (after in "-_/" and text[end + 1:end + 2].isalnum())
