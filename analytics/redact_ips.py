"""IP addresses in a text (`analytics.redact`'s `IP` kind): where each stands, and the address it is.

- A dotted quad. Each octet in decimal (zero-padded too: `010.001.002.003` is `10.1.2.3`, as a
  table of addresses pads them), in hex (`0xC0`), or in octal when it opens with a 0 and has four
  digits or more (`0177`, `0300`: no zero-padded decimal octet is that long), as `inet_aton` and
  browsers read them: `0177.0.0.1`, `0x7F.0.0.1` and `127.0.0.1` are one address. A quad right after
  a version word or glued to a name is a version (`firmware 1.2.4.0`, `Chrome/120.0.0.0`:
  `analytics.redact_shapes.glued_quad`).
- A URL's host (after `://`) in every form a browser reads as an IPv4 address: one to four parts,
  the last filling the bytes left (`http://10.1.258/` is `10.1.1.2`, `http://127.1/` `127.0.0.1`,
  `http://3232235777/` `192.168.1.1`, `http://0x7f000001/`). Elsewhere, fewer parts than four are
  versions, dates and numbers (`1.2.3`, `05.03.2025`, `3.11`), and one integer is a number (a run
  of ten digits that is a valid phone number is masked as one).
- IPv6: full, compressed, with a zone id; not a time (`12:30:45`), nor a path in code written in
  letters alone (`a::b`, `std::vector`).

>>> text = "hosts 10.0.0.7, 0177.0.0.1, http://10.1.258/x, v1.2.3.4, fe80::1, a::b"
>>> [(text[a:b], v) for a, b, v in ips(text)]
[('10.0.0.7', '10.0.0.7'), ('0177.0.0.1', '127.0.0.1'), ('10.1.258', '10.1.1.2'), ('fe80::1', 'fe80::1')]
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator

from analytics.redact_shapes import glued_quad

_IPV4 = re.compile(r"(?<![0-9.])(?:[0-9]{1,3}\.){3}[0-9]{1,3}(?![0-9]|\.[0-9])")
# A dotted quad with an octet or more in hex (`0xC0.0xA8.0x01.0x01`, `0xC0.168.1.1`) or in octal of
# four digits or more (`0177.0.0.1`).
_OCTET = r"(?:0[xX][0-9A-Fa-f]{1,2}|0[0-7]{3,11}|[0-9]{1,3})"
_IPV4_WIDE = re.compile(rf"(?<![\w.])(?=[0-9.]*0(?:[xX]|[0-7]{{3}})){_OCTET}(?:\.{_OCTET}){{3}}(?![\w]|\.[\w])")
# A URL's host of numbers (after `://` and any user name): one to four parts, decimal, octal or hex.
_PART = r"(?:0[xX][0-9A-Fa-f]*|[0-9]+)"
_URL_HOST = re.compile(rf"(?<=://)(?:[^\s/?#@]*@)?({_PART}(?:\.{_PART}){{0,3}})\.?(?![\w.-])")
_IPV6 = re.compile(r"(?<![\w:.])(?=[0-9A-Fa-f:]*:[0-9A-Fa-f:]*:)[0-9A-Fa-f:]{2,39}(?:%[\w.]+)?(?:(?<=:)(?:[0-9]{1,3}\.){3}[0-9]{1,3})?(?![\w:])")
# Version context before a dotted quad: `v1.2.3.4`, `version 10.0.0.1`, `release 4.1.0.2`.
_VERSION_BEFORE = re.compile(
    r"(?:\b(?:v|ver|version|release|build|rev|firmware|fw|bios|kernel|driver|patch|sdk)[\s.:=-]*|[vV])$", re.IGNORECASE)

Found = tuple[int, int, str]  # (start, end, the address as `ipaddress` writes it)


def ips(text: str) -> Iterator[Found]:
    """Each IP address in `text` (module docstring), each form's in text order."""
    if "." in text:
        for m in _IPV4.finditer(text):
            if _VERSION_BEFORE.search(text, max(0, m.start() - 12), m.start()) or glued_quad(text, m.start()):
                continue
            octets = [int(octet) for octet in m.group().split(".")]
            if all(o < 256 for o in octets):
                yield m.start(), m.end(), ".".join(map(str, octets))
        if "0" in text:
            for m in _IPV4_WIDE.finditer(text):
                octets = [_octet(o) for o in m.group().split(".")]
                if all(o < 256 for o in octets):
                    yield m.start(), m.end(), ".".join(map(str, octets))
    if "://" in text:
        for m in _URL_HOST.finditer(text):
            address = browser_ipv4(m.group(1))
            if address is not None and m.group(1).count(".") < 3:  # (a quad is read above)
                yield m.start(1), m.end(1), address
    if text.count(":") >= 2:
        for m in _IPV6.finditer(text):
            raw = m.group()
            if raw.count(":") < 2 or not any(c not in ":" for c in raw):
                continue
            try:
                address = ipaddress.IPv6Address(raw)
            except ValueError:
                continue
            if "::" not in raw and raw.count(":") < 7 and "." not in raw:
                continue  # `12:30:45`: a time, not an address
            if not any(c.isdigit() for c in raw) and len([g for g in raw.split(":") if g]) < 3:
                continue  # `a::b`: a path in code
            yield m.start(), m.end(), address.compressed


def _octet(written: str) -> int:
    """An octet of a dotted quad as `_IPV4_WIDE` found it: hex, octal of four digits or more, decimal."""
    if written[:2] in ("0x", "0X"):
        return int(written, 16)
    return int(written, 8) if len(written) > 3 else int(written)


def browser_ipv4(host: str) -> str | None:
    """The IPv4 address a browser reads a URL's host of numbers as (the WHATWG URL standard), or None
    when it reads none: one to four parts, each decimal, octal (opening with 0) or hex (`0x`), every
    part but the last a byte and the last filling the bytes left.

    >>> [browser_ipv4(h) for h in ("10.1.258", "127.1", "3232235777", "0x7f000001", "0300.0250.1.1", "1.2.3.4.5", "09.1")]
    ['10.1.1.2', '127.0.0.1', '192.168.1.1', '127.0.0.1', '192.168.1.1', None, None]
    """
    parts = host.split(".")
    if not 1 <= len(parts) <= 4:
        return None
    numbers = []
    for part in parts:
        if part[:2] in ("0x", "0X"):
            numbers.append(int(part[2:] or "0", 16))
        elif len(part) > 1 and part[0] == "0":
            if not part.isdigit() or "8" in part or "9" in part:
                return None
            numbers.append(int(part, 8))
        elif part.isdigit():
            numbers.append(int(part))
        else:
            return None
    if any(n > 255 for n in numbers[:-1]) or numbers[-1] >= 256 ** (5 - len(numbers)):
        return None
    value = numbers[-1] + sum(n << (8 * (3 - i)) for i, n in enumerate(numbers[:-1]))
    return str(ipaddress.IPv4Address(value))
