"""IPv4 addresses written as browsers and `inet_aton` read them: a dotted quad with octets in
octal (`0177.0.0.1`, `0300.0250.0001.0001`), and a URL's host in one to four parts, the last filling
the bytes left (`http://10.1.258/`, `http://127.1/`, `http://3232235777/`, `http://0x7f000001/`), each
masked as the address it reaches, and no part of one found by a masked search. Left as written
(docs/privacy.md, `IP`): fewer parts than four outside a URL's host (versions, dates, numbers), a
path in code written in letters (`a::b`, `std::vector`, which is no IPv6 address to a reader)."""

from __future__ import annotations

import pytest

from analytics.redact import Redactor
from tests.attacks.harness import found_unmasked_only, said_in_a_thread

SAME = {  # written → the address it is
    "0177.0.0.1": "127.0.0.1",
    "0300.0250.0001.0001": "192.168.1.1",
    "http://10.1.258/admin": "10.1.1.2",
    "http://127.1:8080/": "127.0.0.1",
    "http://3232235777/x": "192.168.1.1",
    "http://0x7f000001/": "127.0.0.1",
    "https://ops@0300.0250.1.1/": "192.168.1.1",
}
DECOYS = [
    "release 1.2.3, python 3.11, on 05.03.2025, chapter 4.2.1",
    "see https://example.com/1.2.3 and https://docs.python.org/3.11/",
    "rust a::b and c++ std::vector and ruby Foo::Bar",
    "registers 0x1F.0x2 and 0xFF.0x00.0x00 end",
    "no host http://1.2.3.4.5/ nor http://09.1/",
]


def test_each_is_masked_as_the_address_it_reaches():
    for written, address in SAME.items():
        r = Redactor()
        assert r.text(f"{address} then {written} end") == "<IP_1> then " + written.replace(_host(written), "<IP_1>") + " end"


def _host(written: str) -> str:
    """The address in `written`: a URL's host (after `://` and a user name), or all of it."""
    return written.split("://")[-1].split("@")[-1].split("/")[0].rsplit(":", 1)[0] if "://" in written else written


@pytest.fixture(scope="module")
def lens(tmp_path_factory):
    return said_in_a_thread(tmp_path_factory.mktemp("masking-browser-ips"), [f"ip {w} end" for w in SAME])


@pytest.mark.parametrize("probe", ["0177", "0250.0001", "10.1.258", "127.1", "0x7f000001"])
def test_a_masked_search_finds_no_part(lens, probe):
    found_unmasked_only(lens, probe)


def test_the_look_alikes_are_left_as_written():
    r = Redactor()
    assert [r.text(text) for text in DECOYS] == DECOYS
