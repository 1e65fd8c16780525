"""Masking what was masked changes nothing (`analytics.redact_issued`): a placeholder the redactor
issued is no personal value, whatever a configured pattern matches in it; one it never issued is
text like any other."""

from __future__ import annotations

from analytics.redact import RedactConfig, Redactor

TICKETS = RedactConfig(patterns={"TICKET": r"[A-Z]+_[0-9]+"})


def test_masking_twice_is_masking_once():
    r = Redactor(TICKETS)
    once = r.text("mail bob@example.com about EMP_00123, card 4111 1111 1111 1111")
    assert once == "mail <EMAIL_1> about <TICKET_1>, card <CARD_1>"
    assert r.text(once) == once
    assert r.json_text('{"to": "%s"}' % once) == '{"to":"%s"}' % once


def test_a_placeholder_never_issued_is_text():
    r = Redactor(TICKETS)
    assert r.text("<EMAIL_1> typed, then bob@example.com") == "<<TICKET_1>> typed, then <EMAIL_1>"
    assert r.text("<EMAIL_1> <EMAIL_2>") == "<EMAIL_1> <<TICKET_2>>"
