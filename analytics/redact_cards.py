"""Card numbers in a text (`analytics.redact`'s `CARD` kind): where each stands, and its digits.

A run of digits, grouped or not, is read group by group, so a card is found wherever it stands in
the run: alone, right after a comma or a word (`a,4111111111111111,b`, `id-4111…`), followed by more
digits (`4111 1111 1111 1111 123`, `4111111111111111123`) or after some (`12 4111 1111 1111 1111`).
A stretch of the run is a card when

- it is printed as a card is (`analytics.redact_shapes.card_shaped`: a major issuer's groups, or
  fours one digit short, one space, dash or dot throughout), whatever its checksum, anywhere in the run;
- it is one group of 13–19 digits that passes the Luhn check, anywhere in the run but right after
  a dot (`0.4111111111111111` is a number's decimals);
- it opens the run, holds 13–19 digits in groups split by one kind of separator (or by several,
  or a line break, in a card's own groups: fours, 4-6-5, 4-6-4) and passes the Luhn check;
- it is one group of 17–19 digits that starts with a major issuer's card passing the Luhn check
  (16 digits; 15 after 34 or 37): a card with digits typed on, masked whole.

A comma ends a run (a comma and a space end a card in a list: `4111 1111-1111_1111, 3782.822463 10005`),
and so do a semicolon (a list's separator too), an apostrophe (a thousands separator), a tilde and a
hash, so a card written with one of them alone between its groups (`4111,1111,1111,1111`,
`4111;1111;…`, `4111'1111'…`) is read apart (`comma_cards`): consecutive groups joined by one such
character throughout in a card's sizes (4-4-4-4, 4-4-4-4-3, 4-6-5 after 34 or 37) whose digits are a
major issuer's card passing the Luhn check, anywhere in a list of so joined numbers (`12,4111,1111,1111,1111,7`).

An ungrouped run otherwise needs its Luhn check (order numbers, ids and timestamps are no cards).

>>> [(text[a:b], d) for text in ["pay a,4111111111111111,b or 4111 1111 1111 1112"] for a, b, d in cards(text)]
[('4111111111111111', '4111111111111111'), ('4111 1111 1111 1112', '4111111111111112')]
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator

from stdnum import luhn as _luhn

from analytics.redact_shapes import card_shaped, issuer_prefix

# A run of digits grouped by spaces, dashes, dots, underscores, slashes, colons, bars, stars or line
# breaks (`4111.1111.1111.1111`, `5500/0000/0000/0004`, `4111:1111:…`, `4111|1111|…`, `4111*1111*…`;
# not commas, which end a card in a list), one with a space on each side too (`4111 - 1111 - 1111 - 1111`),
# or up to three spaces and tabs (`4111  1111  1111  1111`, columns of a pasted table); possessive,
# so a run is read once.
_RUN = re.compile(r"(?<![0-9])[0-9](?:(?: [._/-] |[ \t]{1,3}|[._/:|\n*-])?[0-9])*+")
_GROUP = re.compile(r"[0-9]+")
# Groups of digits joined by one comma, semicolon, apostrophe, tilde or hash each, no space
# (`4111,1111,1111,1111`); possessive, read once.
_COMMA_RUN = re.compile(r"(?<![0-9])[0-9]++(?:[,;'~#][0-9]++)++")
#: A card's groups in full, as `analytics.redact_shapes` has them, and the first digits each is an issuer's with.
_COMMA_SHAPES = ((4, 4, 4, 4, 3), (4, 4, 4, 4), (4, 6, 5))


def cards(text: str) -> Iterator[tuple[int, int, str]]:
    """Each card number in `text`: (start, end, its digits), leftmost first, the longest at each place.

    >>> [d for _, _, d in cards("4111111111111111123; 12 4111 1111 1111 1111; 1234567812345678")]
    ['4111111111111111', '4111111111111111']
    """
    for run in _RUN.finditer(text):
        groups = [(g.start() + run.start(), g.end() + run.start()) for g in _GROUP.finditer(run.group())]
        if sum(b - a for a, b in groups) < 13:
            continue
        # digits[k]: the digits in groups[:k] (a card holds at most 19, so a search from group i
        # stops at the last group within 19 digits: each run is read in linear time)
        count = [0]
        for a, b in groups:
            count.append(count[-1] + b - a)
        read_out = _read_out(text, groups)
        stop = read_out[0] if read_out else len(groups)
        i = 0
        while i < stop:
            found = _card_at(text, groups, i, count)
            if found is None:
                i += 1
                continue
            j, digits = found
            yield groups[i][0], groups[j - 1][1], digits
            i = j
        if read_out:
            yield groups[read_out[0]][0], groups[-1][1], read_out[1]


def comma_cards(text: str) -> Iterator[tuple[int, int, str]]:
    """Each card written with a comma (or a semicolon, apostrophe, tilde, hash) alone between its groups
    (module docstring): (start, end, its digits).

    >>> [d for _, _, d in comma_cards("4111,1111,1111,1111; 12,3782,822463,10005,7; 2021,2022,2023,2024; 1,234,567")]
    ['4111111111111111', '378282246310005']
    >>> [d for _, _, d in comma_cards("4111;1111;1111;1111 5500'0000'0000'0004 4111,1111;1111,1111")]
    ['4111111111111111', '5500000000000004']
    """
    for run in _COMMA_RUN.finditer(text):
        groups = [(g.start() + run.start(), g.end() + run.start()) for g in _GROUP.finditer(run.group())]
        i = 0
        while i < len(groups):
            for shape in _COMMA_SHAPES:
                window = groups[i:i + len(shape)]
                if tuple(b - a for a, b in window) != shape or len({text[b] for _, b in window[:-1]}) != 1:
                    continue  # (not a card's groups, or joined by several characters)
                digits = "".join(text[a:b] for a, b in window)
                if issuer_prefix(digits) and (shape != (4, 6, 5)) != (digits[:2] in ("34", "37")) \
                        and _luhn.is_valid(digits):
                    yield window[0][0], window[-1][1], digits
                    i += len(shape) - 1
                    break
            i += 1


def _read_out(text: str, groups: list[tuple[int, int]]) -> tuple[int, str] | None:
    """A card read out digit by digit at the end of a run, after other digits (`… 3 7 4 1 1 1 … 1`,
    one digit a group, one separator throughout, not a line break): its first group and its digits.
    Its digits a major issuer's card (16 digits; 15 after 34 or 37) passing the Luhn check, as a
    card a bare run of 17–19 digits opens with. (A run that opens with one is read from its start;
    one in the middle of a longer list of digits, which could start at any digit, is not looked for.)

    >>> text = "9 3 4 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1"
    >>> [(g, d) for g, d in [_read_out(text, [(m.start(), m.end()) for m in _GROUP.finditer(text)])]]
    [(2, '4111111111111111')]
    """
    for size in (16, 15):
        if len(groups) <= size or any(b - a != 1 for a, b in groups[-size:]):
            continue
        gaps = {text[groups[k - 1][1]:groups[k][0]] for k in range(len(groups) - size + 1, len(groups))}
        digits = "".join(text[a] for a, _ in groups[-size:])
        amex = digits[:2] in ("34", "37")
        if (len(gaps) == 1 and "\n" not in gaps.pop() and amex == (size == 15) and issuer_prefix(digits)
                and _luhn.is_valid(digits)):
            return len(groups) - size, digits
    return None


def _card_at(text: str, groups: list[tuple[int, int]], i: int, count: list[int]) -> tuple[int, str] | None:
    """The longest card starting at group `i`: (the group after it, its digits), or None
    (`count[k]`: the digits of the groups before group k)."""
    last = bisect.bisect_right(count, count[i] + 19) - 1  # the groups i..last-1 hold at most 19 digits
    if i > 0 and groups[i][1] - groups[i][0] != 4:
        last = i + 1  # (past a run's first group, a card of several groups opens with four digits: every shape does)
    fraction = i > 0 and text[groups[i][0] - 1] == "."  # (`0.4111111111111111`: a number's decimals)
    for j in range(min(last, len(groups)), i, -1):
        if count[j] - count[i] < 13:
            break  # (no card is shorter; fewer groups hold fewer digits)
        raw = text[groups[i][0]:groups[j - 1][1]]
        digits = re.sub(r"[^0-9]", "", raw)
        if len(digits) >= 15 and card_shaped(raw):
            return j, digits
        if (j == i + 1 and not fraction) or i == 0:
            if 13 <= len(digits) <= 19 and digits[0] != "0" and _luhn.is_valid(digits) and (j == i + 1 or _grouped(raw)):
                return j, digits
        if j == i + 1 and not fraction and 17 <= len(digits) <= 19:
            card = digits[:15] if digits[:2] in ("34", "37") else digits[:16]
            if issuer_prefix(card) and _luhn.is_valid(card):
                return j, card
    return None


def _grouped(raw: str) -> bool:
    """Whether the digit groups of `raw` are split as a card number's may be: by one kind of
    separator, or by several or a line break (`4111 1111-1111_1111`, `4111 1111⏎1111 1111`) in a
    card's own groups — fours (the last group shorter), 4-6-5 or 4-6-4; not a date and a number
    (`2025-03-05 1741203902`), nor numbers one per line.

    >>> _grouped("4111 1111-1111_1111"), _grouped("3782.822463 10005"), _grouped("2025-03-05 1741203900")
    (True, True, False)
    """
    gaps = set(re.findall(r"[^0-9]+", raw))
    if len(gaps) <= 1 and "\n" not in gaps:
        return True
    sizes = [len(g) for g in re.split(r"[^0-9]+", raw)]
    return sizes in ([4, 6, 5], [4, 6, 4]) or (all(n == 4 for n in sizes[:-1]) and sizes[-1] <= 4)
