"""The lexicon's mechanisms on wordings of their own, several per mechanism and language, with decoys
that share their words: an idiom that says the opposite of its words ("I couldn't be happier"), a
matter out of the assistant's hands, a request to be passed on to a person (passive, or a realness
adjective before a staff noun in any inflection), and a verdict naming what the reply failed to grasp
("Sie haben meine Frage nicht verstanden"). None of these sentences is in the labelled set."""

from __future__ import annotations

import unicodedata

import pytest

from analytics.conversation_outcomes.lexicon import built_in, lexicon_from
from analytics.conversation_outcomes.materialize import is_closing

LEX = built_in()

CASES = {
    # A negated comparative or "can only" is no give-up; a give-up beside it still is.
    "give_up": (
        ["I couldn't be happier to help, but I couldn't find your order.",
         "Leider kann ich nicht mehr für Sie tun.",
         "Je ne peux que constater l'échec : je n'ai pas pu annuler la commande.",
         "No puedo cancelar el pedido, lo siento."],
        ["I couldn't be happier to help!", "We could not be more pleased to have you with us.",
         "I can't wait to help you with the next order.", "I couldn't agree more with your choice.",
         "Ich könnte nicht glücklicher sein, Ihnen zu helfen.", "Wir könnten nicht zufriedener sein.",
         "Ich kann mich wirklich nicht beklagen.", "Ich kann Ihnen gar nicht genug danken.",
         "Je ne peux que vous recommander cette option.", "Nous ne pourrions pas être plus heureux de vous aider.",
         "No puedo estar más de acuerdo con usted.", "No podemos más que agradecerle su paciencia."],
    ),
    # Out of the assistant's hands, reach or control.
    "out_of_hands": (
        ["Eso no está en mis manos.", "Lamentablemente, no depende de mí.", "Eso queda fuera de mi alcance.",
         "Esto escapa a nuestro control, lo siento.", "I'm afraid it's out of my hands.",
         "That is not within my power, sorry.", "Unfortunately that's beyond our control.",
         "Das liegt leider nicht in meiner Hand.", "Das liegt außerhalb meiner Möglichkeiten.",
         "Das entzieht sich unserer Kontrolle.", "Ce n'est malheureusement pas entre mes mains.",
         "Cela ne dépend pas de moi.", "C'est hors de mon contrôle.", "Ce n'est pas de mon ressort."],
        ["The package is in your hands now.", "It's not in my cart yet, is it?", "Está en sus manos decidir.",
         "No está en mi carrito todavía.", "C'est entre vos mains désormais.", "Ce n'est pas de ma faute.",
         "Das liegt ganz bei Ihnen.", "Der Artikel ist nicht in meinem Warenkorb."],
    ),
    # Asked to be passed on to a person.
    "human": (
        ["Could I be put through to somebody?", "Can I get transferred to someone in billing?",
         "I'd like to be connected with somebody who knows this.", "Please put me through to somebody.",
         "I want an actual agent.", "Is there a real employee I can write to?",
         "Ich will einen echten Mitarbeiter.", "Gibt es bei Ihnen echte Mitarbeiter?",
         "Ich möchte mit einer echten Mitarbeiterin sprechen.", "Einen menschlichen Berater, bitte.",
         "Je veux un vrai conseiller.", "Je voudrais une vraie personne.", "Je veux être mis en relation avec quelqu'un.",
         "Un interlocuteur humain, c'est possible ?", "Quiero un empleado de verdad.", "Páseme con alguien, por favor.",
         "Quiero que me atienda una persona de carne y hueso.", "¿Me puede comunicar con alguien?"],
        ["My account is connected to someone else's email.", "I never asked to be transferred to anyone.",
         "The call got transferred to voicemail.", "Ich brauche keinen echten Mitarbeiter, danke.",
         "Je ne veux pas de vrai conseiller.", "No quiero un empleado de verdad."],
    ),
    # The reply failed to grasp the user's question.
    "wrong": (
        ["Sie haben meine Frage nicht verstanden.", "Sie haben mein Problem gar nicht verstanden",
         "Du hast meine Frage nicht einmal gelesen.", "Sie haben meine Frage immer noch nicht beantwortet.",
         "Sie haben meine Frage falsch verstanden.", "Haben Sie meine Frage überhaupt nicht gelesen?",
         "Sie haben auf meine Frage nicht geantwortet.", "Sie verstehen mein Anliegen nicht.",
         "You didn't understand my question.", "You haven't understood my question at all.",
         "you didn't even read my question", "You ignored my question again.",
         "Vous n'avez pas compris ma question.", "Vous n'avez pas bien compris ma question.",
         "Tu n'as pas compris ce que je demande.", "Vous avez ignoré ma question.",
         "No ha entendido mi pregunta.", "Usted no ha entendido mi pregunta.", "No entendió lo que le pregunté.",
         "No me ha entendido.", "No has leído mi pregunta.", "Todavía no ha respondido a mi pregunta.",
         "You couldn't be more wrong."],
        ["Wenn Sie meine Frage nicht verstanden haben, fragen Sie ruhig nach.",
         "Ich habe Ihre Frage nicht verstanden.", "I didn't understand your question.",
         "If you didn't understand my question, ask me.", "Je n'ai pas compris votre question.",
         "Si vous n'avez pas compris ma question, dites-le.", "Mi hijo no ha entendido las instrucciones.",
         "Si no ha entendido mi pregunta, dígamelo.", "No entendí su pregunta."],
    ),
}


def _cases(positive: bool):
    for name, (positives, decoys) in CASES.items():
        category = "give_up" if name == "out_of_hands" else name
        for text in positives if positive else decoys:
            yield pytest.param(category, text, id=f"{name}-{text[:40]}")


@pytest.mark.parametrize("category, text", list(_cases(True)))
def test_signal_wordings_match_as_typed_in_capitals_and_decomposed(category, text):
    for form in (text, text.upper(), unicodedata.normalize("NFD", text)):
        assert LEX.matches(category, form), form


@pytest.mark.parametrize("category, text", list(_cases(False)))
def test_decoys_do_not_match(category, text):
    assert not LEX.matches(category, text)


@pytest.mark.parametrize("text", ["I couldn't be happier!", "Ich könnte nicht zufriedener sein.",
                                  "Je ne pourrais pas être plus satisfaite !", "No podría estar más contento, gracias.",
                                  "Honestly, I could not have asked for more."])
def test_satisfaction_as_a_negated_comparative_is_a_closing(text):
    assert is_closing(text, LEX)
    assert not LEX.matches("wrong", text) and not LEX.matches("human", text)


def test_a_negated_comparative_is_no_closing_when_it_intensifies_a_verdict():
    assert not is_closing("You couldn't be more wrong.", LEX)


def test_the_idiom_category_is_what_reads_them_as_one_filler_word():
    """Without the idioms the same words are a give-up and no verdict: the mechanism, not a phrase list."""
    bare = lexicon_from({"idiom": []})
    assert bare.matches("give_up", "I couldn't be happier to help!")
    assert not bare.matches("wrong", "You couldn't be more wrong.")
    own = lexicon_from({"idiom": ["couldn't ~ be ~ happier"]})
    assert not own.matches("give_up", "I couldn't be happier to help!")
    assert own.matches("give_up", "I couldn't agree more.")  # (not among this file's idioms)
