"""Shapes masked on purpose, though a reader may take them for something else (docs/privacy.md,
`IP`): a dotted quad before a version word or in a section number is masked, since a real address
is as likely to stand there, and an IPv4 written as one integer is masked as the phone number its
digits make (masked either way, under another kind); a ten-digit run that is no valid number stays."""

from __future__ import annotations

import pytest

from analytics.redact import Redactor


@pytest.mark.parametrize("text, shown", [
    ("harmless semver 10.20.30.40 release end", "harmless semver <IP_1> release end"),
    ("section 1.1.1.1 of the spec end", "section <IP_1> of the spec end"),
    ("refused 10.20.30.40 refused end", "refused <IP_1> refused end"),
    ("ip int 3232255757 end", "ip int <PHONE_1> end"),
    ("ip int 1234567890 end", "ip int 1234567890 end"),
])
def test_as_documented(text, shown):
    assert Redactor().text(text) == shown
