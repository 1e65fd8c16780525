"""More of the lexicon's mechanisms on wordings of their own, each with decoys that share its words:
a verdict alone after the verb "to be" or a word of totality ("Todo está mal"); a thanks for what is
still to come, which is no closing ("Danke vorab", "merci de" + an infinitive); a quoted passage, which
counts toward a closing's length but matches nothing; particles between the parts of a stop phrase
("Ich komme da leider nicht weiter"); a weak person noun made staff by its team ("someone from
accounts"), and a question about what the agent is, which asks for no one ("Bist du ein Mensch?").
None of these sentences is in the labelled set."""

from __future__ import annotations

import datetime as dt
import unicodedata

import pytest

import analytics
import transcript_lens
from analytics.conversation_outcomes.lexicon import built_in
from analytics.conversation_outcomes.materialize import MAX_CLOSING_TOKENS, is_closing
from analytics.conversation_outcomes.texts import text_rows, text_signals
from storegen import Reply
from tests.analytics.outcomes.stores import START, Script, Unanswered, User, write_store

LEX = built_in()

CASES = {
    # A verdict alone as the whole clause, after the verb "to be" with its subject dropped, a pronoun subject
    # (what was just said) or a word of totality. Elsewhere a pronoun is no reference to the reply: what "it"
    # or "es" does or is otherwise is about the product.
    "wrong": (
        ["Está totalmente mal.", "Todo estaba mal otra vez", "Es inútil.", "Está todo mal, de verdad.",
         "Everything is completely wrong.", "Everything's useless", "Ist leider falsch.", "Alles ist Quatsch!",
         "Alles falsch", "Tout est inutile.", "Tout était faux.",
         "Es ist falsch.", "Es ist völlig falsch!", "Es war leider wieder falsch.", "Ist es falsch",
         "It is wrong.", "It's totally useless", "Il est faux.", "Il était complètement inutile."],
        ["No está mal.", "Todo está bien.", "Estoy mal.", "Está mal escrita la dirección en el paquete.",
         "Everything is fine.", "Not everything is wrong", "Everything is in the wrong box.", "Nicht falsch.",
         "Alles ist gut.", "Pas faux.", "Tout est clair.",
         "Es funktioniert nicht.", "Es ist falsch geliefert worden.", "Es ist die falsche Größe.", "Es ist nicht falsch.",
         "It's not working since Monday", "It is the wrong size.", "It doesn't work.", "Il est arrivé faux."],
    ),
    # Particles and adverbs between the parts of a stop phrase, up to the gap of `~`.
    "give_up": (
        ["Ich komme da leider nicht weiter.", "Hier kommen wir gerade wirklich nicht weiter.",
         "Leider komme ich hier jetzt nicht weiter.", "Wir müssen hier leider abbrechen.",
         "Je suis malheureusement bloqué.", "Nous sommes hélas bloqués ici.", "Je dois malheureusement m'arrêter ici.",
         "I'm sadly stuck here.", "We are unfortunately stuck.", "There is really nothing I can do now.",
         "Lamentablemente estoy bloqueado aquí.", "Ahora estamos atascados."],
        ["Kommen Sie nicht weiter? Dann helfe ich gern.", "Ich komme morgen wieder.", "Je suis ici pour vous aider.",
         "The parcel is stuck in customs, it will move tomorrow.", "Estoy aquí para ayudarle."],
    ),
    # A request verb and a weak person noun made staff by the team it is from; a question about what
    # the agent is asks for no one, in each language.
    "human": (
        ["Find me somebody from accounts.", "I want somebody from the returns department.",
         "Schicken Sie mir jemanden vom Kundendienst.", "Ich brauche jemanden aus der Rechnungsabteilung.",
         "Je voudrais quelqu'un du service technique.", "J'exige quelqu'un de la comptabilité.",
         "Necesito a alguien del área de facturación.", "Quisiera a alguien de soporte."],
        ["I heard from someone in accounts that it shipped.", "I don't need anybody from your team.",
         "Mein Nachbar kennt jemanden aus der Buchhaltung.", "Je n'ai pas besoin de quelqu'un du service technique.",
         "Mi hermana trabaja con alguien del departamento de ventas.",
         "Tu es un humain ou une machine ?", "Vous êtes une vraie personne ?", "Are you a human or a bot?",
         "Am I chatting with a real person", "Bist du ein Mensch oder eine KI?", "Sind Sie ein echter Mensch?",
         "¿Eres una persona real?", "¿Es usted un humano o una máquina?", "¿Hablo con un humano?"],
    ),
}


def _cases(positive: bool):
    for category, (positives, decoys) in CASES.items():
        for text in positives if positive else decoys:
            yield pytest.param(category, text, id=f"{category}-{text[:40]}")


@pytest.mark.parametrize("category, text", list(_cases(True)))
def test_wordings_match_as_typed_in_capitals_and_decomposed(category, text):
    for form in (text, text.upper(), unicodedata.normalize("NFD", text)):
        assert LEX.matches(category, form), form


@pytest.mark.parametrize("category, text", list(_cases(False)))
def test_decoys_do_not_match(category, text):
    assert not LEX.matches(category, text)


def test_a_verdict_alone_after_to_be_is_frustration_after_an_answer_only():
    rows = text_rows([("t", 0, "user", "¿Cuánto cuesta el envío?"), ("t", 1, "assistant", "Cuesta 4 euros."),
                      ("t", 2, "user", unicodedata.normalize("NFD", "Está mal")),
                      ("u", 0, "user", "Todo está mal con mi pedido"), ("v", 0, "user", "Todo está mal")])
    frustrated, _ = text_signals(rows.to_batches(), LEX, 20)
    assert frustrated == {"t": [2]}  # (`v` opens its conversation: no answer to judge)


@pytest.mark.parametrize("text", ["Are you a bot? Put me through to a person.", "Un conseiller, s'il vous plaît.",
                                  "Bist du ein Bot? Ich will mit einem Menschen sprechen.",
                                  "¿Eres un bot? Quiero hablar con un humano."])
def test_a_request_beside_a_question_about_the_agent_still_counts(text):
    assert LEX.matches("human", text)


PENDING = ["Many thanks in advance for checking.", "Thank you ahead of time!", "Vielen Dank vorab!",
           "Danke schon mal im Voraus.", "Ich bedanke mich im Voraus.", "Merci par avance.", "D'avance, merci !",
           "Muchas gracias de antemano.", "Gracias por anticipado, quedo atento.",
           "Merci de confirmer la livraison.", "Merci de nous rappeler rapidement.",
           "Je vous remercie de bien vouloir annuler ma commande.", "Merci de m'envoyer la facture, bonne journée."]
CLOSINGS = ["I paid ahead of time, thank you!", "Thanks for sorting it out before my trip.",
            "Merci de votre patience.", "Merci de m'avoir rappelé, au revoir.", "Merci pour tout, à bientôt.",
            "Gracias por ayudarme.", "Danke für die schnelle Antwort.", "Nothing else, thank you.",
            "I need nothing else today.", "Rien d'autre, merci.", "Sonst nichts.", "Nada más, gracias."]


@pytest.mark.parametrize("text", PENDING)
def test_a_thanks_for_what_is_still_to_come_is_no_closing(text):
    assert LEX.matches("closing", text)  # (a thanks is there: the `pending` rule takes it back)
    for form in (text, text.upper(), unicodedata.normalize("NFD", text)):
        assert not is_closing(form, LEX), form


@pytest.mark.parametrize("text", CLOSINGS)
def test_thanks_for_what_was_done_and_nothing_else_forms_still_close(text):
    assert is_closing(text, LEX)


def test_a_quoted_passage_counts_toward_a_closings_length_and_matches_nothing():
    quoted = 'The note said "ring the bell twice and leave it by the door" and nothing else'
    assert not is_closing(quoted, LEX)
    assert not is_closing("The note said and nothing else", LEX)  # ("nothing else" reports: not a clause opener)
    short = 'Perfect, "A-1043" arrived. Thanks!'
    assert is_closing(short, LEX)
    words = "Thanks " + '"' + " ".join(["word"] * (MAX_CLOSING_TOKENS - 1)) + '"'
    assert is_closing(words, LEX)  # 12 words, 11 of them quoted: at the limit
    assert not is_closing(words[:-1] + ' word"', LEX)  # 13


@pytest.fixture(scope="module")
def pending_store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pending")
    src, db = folder / "src.sqlite", folder / "lens.duckdb"
    ask = [User("Can you change the delivery address of A-1043?", 0)]
    replies = [Reply("Which address should I use?")]
    write_store(src, {
        "fr:merci-de": Script(replies, [*ask, Unanswered("Merci de valider l'adresse de mon bureau.")]),
        "de:im-voraus": Script(replies, [*ask, Unanswered("Danke im Voraus!")]),
        "es:gracias": Script(replies, [*ask, Unanswered("Ya está, muchas gracias.")]),
        "z:end": Script([Reply("Hello!")], [User("Hi", 0)], start=START + dt.timedelta(days=1)),
    })
    transcript_lens.load(src, db, workers=1)
    return analytics.outcomes(db).set_index("thread_id")


@pytest.mark.parametrize("thread, outcome", [("fr:merci-de", "abandoned"), ("de:im-voraus", "abandoned"),
                                             ("es:gracias", "resolved")])
def test_an_unanswered_thanks_in_advance_ends_abandoned(pending_store, thread, outcome):
    row = pending_store.loc[thread]
    assert row["outcome"] == outcome, row["outcome_reason"]
    assert bool(row["resolved_closing"]) == (outcome == "resolved")
