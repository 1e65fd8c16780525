"""Text normalisation and phrase matching of the built-in lexicon, and user lexicon files."""

from __future__ import annotations

import unicodedata

import pytest

from analytics.errors import BadRequest
from analytics.conversation_outcomes.lexicon import built_in, lexicon_from, load_lexicon
from analytics.conversation_outcomes.materialize import is_closing

LEX = built_in()


@pytest.mark.parametrize("category, text", [
    ("human", "Can I talk to a PERSON please"),
    ("human", "Ich will mit einem Menschen sprechen!"),
    ("human", "Je veux parler à un conseiller"),
    ("human", "Quiero hablar con una persona"),
    ("wrong", "That's wrong."),
    ("wrong", "Das ist falsch"),
    ("wrong", unicodedata.normalize("NFD", "Ça ne marche pas")),
    ("wrong", "esto no sirve"),
    ("wrong", "Ça ne marche toujours pas"),
    ("wrong", "Es funktioniert immer noch nicht"),
    ("give_up", "I'm sorry, I couldn't find that order."),
    ("give_up", "Es tut mir leid, ich konnte nicht helfen."),
    ("give_up", "Je n’ai pas pu trouver la commande."),
    ("give_up", "Lo siento, no pude hacerlo."),
])
def test_phrases_match_across_languages_case_and_unicode_forms(category, text):
    assert LEX.matches(category, text)
    assert LEX.matches(category, unicodedata.normalize("NFC", text).upper())


@pytest.mark.parametrize("category, text", [
    ("human", "No need to talk to a person, thanks"),
    ("human", "The agentur sent me"),  # whole words only
    ("human", "I don't want a representative"),
    ("human", "Pas besoin de parler à un conseiller"),
    ("wrong", 'He called it "useless" yesterday'),  # quoted
    ("wrong", "It's not useless at all"),
    ("wrong", "Je ne comprends pas, ça marche bien"),
])
def test_decoys_do_not_match(category, text):
    assert not LEX.matches(category, text)


def test_a_complaint_after_an_unrelated_negation_clause_still_matches():
    assert LEX.matches("wrong", "Je ne comprends pas, ça ne marche pas")


@pytest.mark.parametrize("text, closing", [
    ("Thanks, bye!", True), ("Perfect, that's all.", True), ("Danke, tschüss", True), ("Merci, au revoir", True),
    ("Gracias, adiós", True), ("Thanks, but where is it?", False), ("Thanks, but that's wrong", False),
    ("Thanks for the link. Now please explain in detail how the refund works for orders shipped abroad", False),
])
def test_closing_messages(text, closing):
    assert is_closing(text, LEX) is closing


def test_user_lexicon_files_toml_and_json(tmp_path):
    toml = tmp_path / "l.toml"
    toml.write_text('extend = true\nhuman = ["supervisor"]\n', encoding="utf-8")
    lex = load_lexicon(toml)
    assert lex.matches("human", "get me a supervisor") and lex.matches("human", "a real person")
    js = tmp_path / "l.json"
    js.write_text('{"human": ["supervisor"]}', encoding="utf-8")
    lex = load_lexicon(js)
    assert lex.matches("human", "get me a supervisor") and not lex.matches("human", "a real person")
    bad = tmp_path / "bad.json"
    bad.write_text('{"moods": ["x"]}', encoding="utf-8")
    with pytest.raises(BadRequest, match="unknown category 'moods'"):
        load_lexicon(bad)


def test_user_patterns_gaps_filler_and_anchors():
    lex = lexicon_from({"human": ["bring ... boss|owner"], "wrong": ["^ meh $", "reply ~ bad"], "filler": ["kinda"]})
    assert lex.matches("human", "bring me the real BOSS") and not lex.matches("human", "bring me to the big shop owner")
    assert not lex.matches("human", "never bring the boss")  # negated before
    assert lex.matches("wrong", "Meh.") and not lex.matches("wrong", "meh but fine")
    assert lex.matches("wrong", "reply kinda bad") and not lex.matches("wrong", "reply is bad")  # filler replaced


def test_a_lexicon_digests_its_patterns_once_and_the_same_patterns_alike():
    # Every signals check compares fingerprints: one lexicon answers with the digest it took first.
    assert LEX.fingerprint() is LEX.fingerprint()
    assert lexicon_from({"extend": True}).fingerprint() == LEX.fingerprint()
    assert lexicon_from({"human": ["supervisor"]}).fingerprint() != LEX.fingerprint()
