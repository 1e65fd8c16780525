"""Values written in a personal value's shape, and shapes that are not one (`analytics.redact`'s rules).

A card number printed in a card's groups, or an IBAN in an IBAN's, is masked whatever its checksum:
typo'd, it gives away all but one character of the real one; one character short, its check digits
give the missing one back (`card_shaped`, `iban_shaped`).
A dotted quad glued to a name or a version pin (`Chrome/120.0.0.0`, `foo==1.2.3.4`) is a version,
not an address (`glued_quad`).
"""

from __future__ import annotations

import functools
import re

from stdnum import iban as _iban

_GAP = re.compile(r"[^0-9]+")


#: A card number's groups one digit short (of 16 and of 19 digits): with one of these separators, a card
#: whatever its checksum.
_CARD_SHAPES = ([4, 4, 4, 3], [4, 4, 4, 4, 2])
#: A card number's groups in full: 4-4-4-4 and 4-4-4-4-3 for every major issuer, 4-6-5 for American Express.
_ISSUER_SHAPES = ([4, 4, 4, 4], [4, 4, 4, 4, 3])
_AMEX_SHAPE = [4, 6, 5]
#: Major issuers' first digits: Visa 4; Mastercard 51-55 and 2221-2720; American Express 34, 37;
#: Discover 6011, 65, 644-649; JCB 35.
_ISSUER = re.compile(r"4|5[1-5]|2(?:22[1-9]|2[3-9][0-9]|[3-6][0-9]{2}|7[01][0-9]|720)|3[457]|6011|65|64[4-9]")


def issuer_prefix(digits: str) -> bool:
    """Whether `digits` start as a major issuer's card numbers do (`_ISSUER`).

    >>> [issuer_prefix(d) for d in ("4111", "5500", "2221", "2721", "3782", "6011", "6440", "1234")]
    [True, True, True, False, True, True, True, False]
    """
    return _ISSUER.match(digits) is not None


def card_shaped(raw: str) -> bool:
    """Whether `raw` is printed as a card is, split by one space, dash, dot, colon or bar throughout, so a card
    whatever its checksum (a typo'd number gives away all its digits but one; a number one digit
    short, its check digit gives the missing one back): a major issuer's number in full groups
    (4-4-4-4, 4-4-4-4-3; 4-6-5 starting 34 or 37), or any number in fours one digit short (4-4-4-3,
    4-4-4-4-2).

    >>> card_shaped("4111 1111 1111 111"), card_shaped("4111-1111-1111-1112"), card_shaped("3782.822463.10006")
    (True, True, True)
    >>> card_shaped("4111:1111:1111:1112"), card_shaped("4111|1111|1111|1112")
    (True, True)
    >>> card_shaped("411111111111111"), card_shaped("1234 5678 9012 3456"), card_shaped("4111_1111_1111_1112")
    (False, False, False)
    """
    gaps = set(_GAP.findall(raw))
    if len(gaps) != 1 or not gaps <= {" ", "-", ".", ":", "|"}:
        return False
    sizes = [len(g) for g in _GAP.split(raw)]
    if sizes in _CARD_SHAPES:
        return True
    digits = _GAP.sub("", raw)
    return issuer_prefix(digits) and (sizes in _ISSUER_SHAPES or (sizes == _AMEX_SHAPE and digits[:2] in ("34", "37")))


@functools.cache
def iban_length(country: str) -> int | None:
    """The length of an IBAN of `country` (its BBAN's fields and the four first characters), None
    for a country without IBANs.

    >>> iban_length("DE"), iban_length("GB"), iban_length("AB")
    (22, 22, None)
    """
    found = _iban._ibandb.info(country)[0][1].get("bban")
    return None if not found else 4 + sum(int(n) for n in re.findall(r"[0-9]+", found))


def iban_shaped(text: str, start: int, end: int) -> int | None:
    """Where an IBAN printed as one ends, whatever its checksum (None: not one): a country that has
    IBANs, two check digits, then the rest in the country's length — written without a gap, or in
    groups of four split by one space, dash or dot throughout (the last group shorter) —, any case;
    grouped, one or two characters short too (its check digits would give the missing ones back).
    A typo'd IBAN gives away all its characters but one.

    >>> text = "pay DE89 3704 0044 0532 0130 0 now, DE89 3704 0044 0532 0130 with AB12 CDEF GHIJ KLMN"
    >>> [iban_shaped(text, text.index(w), len(text)) for w in ("DE89", "DE89 3704 0044 0532 0130 w", "AB12")]
    [30, 60, None]
    >>> text = "de00 1234 5678 9012 3456 78, DE00123456789012345678; DE00 1234 5678 9012 3456 7890"
    >>> [iban_shaped(text, text.index(w), len(text)) for w in ("de00", "DE0012", "DE00 1234 5678 9012 3456 7890")]
    [27, 51, None]
    """
    head = text[start:start + 4]
    if not re.fullmatch(r"[A-Za-z]{2}[0-9]{2}", head) or iban_length(head[:2].upper()) is None:
        return None
    length = iban_length(head[:2].upper())
    token = re.match(r"[A-Za-z0-9]+", text[start:end]).end()
    if token == length:
        return start + length
    if token != 4 or text[start + 4:start + 5] not in (" ", ".", "-"):
        return None
    gap, at, size, found = text[start + 4], start + 4, 4, None
    while at < end and text[at] == gap and size % 4 == 0 and size < length:  # (a shorter group is the last)
        group = re.match(r"[A-Za-z0-9]{1,4}(?![A-Za-z0-9])", text[at + 1:end])
        if group is None:
            break
        at += 1 + group.end()
        size += group.end()
        if size >= 16 and length - 2 <= size <= length:  # (words after it may look like one more group)
            found = at
    if found is not None and re.search(r"[0-9]", text[found:at]):
        return None  # its groups run on, with digits, past the country's length: not one
    return found


def glued_quad(text: str, start: int) -> bool:
    """Whether the dotted quad at `start` is glued to what is before it, so part of a version or a
    name, not an address standing alone: right after a letter (`v1.2.3.4`, `abc1.2.3.4`), after a
    `/` that follows a name (`Chrome/120.0.0.0`, `Version/10.0.0.1`; an address after `://`
    stands alone), or after a version pin's operator (`foo==1.2.3.4`, `pkg>=1.2.3.4`; `ip=10.0.0.1`,
    a key and its value, stands alone).

    >>> texts = ("v1.2.3.4", "Chrome/120.0.0.0", "x==1.0.0.1", "http://10.0.0.1", "ip=10.0.0.1", "at 10.0.0.1")
    >>> [glued_quad(t, t.index("1")) for t in texts]
    [True, True, True, False, False, False]
    """
    before = text[start - 1] if start else ""
    if before.isalpha():
        return True
    if before == "/":
        return start < 2 or text[start - 2] != "/"
    return before == "=" and start >= 2 and text[start - 2] in "=<>!~"
