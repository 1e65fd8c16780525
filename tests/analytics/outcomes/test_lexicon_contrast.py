"""A contrast after a closing or a give-up takes it back ("thanks, but …", "I couldn't find it at
first, but here it is"), and the categories cover wordings built from their word classes (a staff
noun after any request verb, a reply's verdict with "not", farewells and wishes), with decoys."""

from __future__ import annotations

import re
import unicodedata

import pytest

from analytics.conversation_outcomes.lexicon import built_in, lexicon_from
from analytics.conversation_outcomes.materialize import is_closing

LEX = built_in()

CLOSING_THEN_CONTRAST = [
    "thanks but that isn't my question", "thank you, however the label is still missing",
    "Danke, aber das hatte ich nicht gefragt", "Vielen Dank. Allerdings fehlt noch die Rechnung",
    "merci mais je parlais de l'autre commande", "Merci. Par contre il manque le reçu",
    "gracias pero yo preguntaba por otro pedido", "Muchas gracias, sin embargo falta el recibo",
    "thanks. Still no refund though", "Thank you! One more thing: my address changed", "Danke schön. Noch etwas: meine Adresse ist neu",
]
CLOSINGS = [
    "Vielen Dank, das ging aber schnell!",  # "aber" as a particle inside a clause is no contrast
    "much obliged, enjoy your weekend", "ok, all sorted, take care", "lieben Dank, bis bald",
    "Besten Dank und ein schönes Wochenende", "je vous remercie, à bientôt", "nickel, très bonne soirée",
    "se agradece, que tengas un lindo fin de semana", "vale, mil gracias, nos vemos",
]
NOT_CLOSINGS = ["Thank you for nothing", "Guten Tag, meine Bestellung fehlt", "Bonjour, mon colis n'est pas arrivé",
                "Buen día, mi pedido no llegó", "thanks for nothing", "ok thanks, can you also check the other one?"]

GIVE_UP_THEN_DELIVERED = [
    "I wasn't able to find it under that email, but I found it under your phone number: 340 points.",
    "Ich konnte die Rechnung erst nicht abrufen, aber hier ist sie: INV-2001.",
    "Je n'ai pas pu la trouver au début, mais la voici : INV-2001.",
    "No pude encontrarla al principio, pero aquí está: INV-2001.",
]
GIVE_UPS = [
    "I couldn't cancel it, but you can do it yourself in your account.",  # a contrast without a delivery
    "Sorry, but our billing system is down right now.", "I'm afraid I have to stop here.",
    "We don't have access to that carrier's data, sorry.",
    "Leider ist der Server momentan nicht erreichbar.", "Wir haben keine Berechtigung für diese Änderung.",
    "Nous n'avons trouvé aucune commande à ce nom.", "Le serveur est en panne, veuillez réessayer plus tard.",
    "No lo encuentro en el sistema, disculpe.", "El servidor no responde, inténtelo más tarde.",
    "Dazu habe ich leider keine Berechtigung.", "Une erreur technique m'empêche de continuer.",
    "Lo siento, el sistema de pagos está caído.",
]
NOT_GIVE_UPS = ["Sorry for the wait, here it is: INV-2001.", "No problem, I've updated your address.",
                "Kein Problem, die Rechnung ist unterwegs.", "Pas de souci, c'est fait.", "No hay problema, ya lo cambié."]

HUMANS = [
    "a supervisor please", "I need a manager", "get your boss on the line", "can someone from your team call me back",
    "Holen Sie mir bitte Ihren Vorgesetzten", "Kann mich ein Berater anrufen?", "Ich will keinen Bot sprechen",
    "Je voudrais un responsable", "Un technicien peut-il me rappeler ?", "pas une machine, un humain",
    "Quiero un supervisor", "¿Me puede atender un encargado?", "no con un robot, con una persona",
    "Stellen Sie mich bitte zu einem Mitarbeiter durch", "Je souhaite être rappelé par un conseiller",
    "Me gustaría que me atendiera un asesor", "transfer to agent",
]
NOT_HUMANS = [
    "My manager approved the order", "Un responsable du dépôt a signé", "Mi jefe pagó la factura",
    "Ich brauche keinen Mitarbeiter, der Chat reicht", "Je ne veux parler à personne", "No quiero hablar con nadie",
    "our IT team will call you", "The driver said a supervisor signed", "Mon voisin a parlé à un conseiller",
    "Ya hablé con un asesor ayer", "Der Kundenberater hat mir gestern geholfen",
]
WRONGS = [
    "that didn't solve anything", "you are not answering my question", "this doesn't make any sense… wrong again",
    "useless info", "Das hilft mir überhaupt nicht weiter", "Stimmt so nicht", "Sie verstehen mich einfach nicht",
    "Ça ne répond toujours pas à ma question", "Ce n'est toujours pas correct", "c'est pas ça",
    "Eso no me ayuda nada", "Usted no me está escuchando", "Sigue sin resolverse nada… sigue mal",
    "That isn't what I was asking", "Sie haben mich nicht verstanden", "Vous vous êtes trompé",
    "Votre solution n'a rien changé", "No ha respondido a mi pregunta", "Qué respuesta más inútil",
    "That's not the right answer", "Votre réponse ne correspond pas à ma question", "No me ha servido de nada",
]
NOT_WRONGS = [
    "I typed the wrong zip code", "It's not wrong, just slow", "Das falsche Paket kam an",
    "Ce n'est pas faux, je voulais juste vérifier", "Il a mis la mauvaise adresse", "Me equivoqué de talla",
    "My old phone doesn't work anymore", "Das Ladekabel funktioniert nicht",
]


def _forms(text: str) -> list[str]:
    return [text, text.upper(), unicodedata.normalize("NFD", text)]


@pytest.mark.parametrize("text", CLOSING_THEN_CONTRAST)
def test_a_contrast_after_a_closing_takes_it_back(text):
    assert LEX.matches("closing", re.split(r"[,.!]| but | aber | mais | pero ", text)[0])  # the closing alone matches
    assert not any(is_closing(form, LEX) for form in _forms(text))


@pytest.mark.parametrize("text", CLOSINGS)
def test_closings_in_other_words_are_closings(text):
    assert all(is_closing(form, LEX) for form in _forms(text))


@pytest.mark.parametrize("text", NOT_CLOSINGS)
def test_greetings_sarcasm_and_questions_are_not_closings(text):
    assert not is_closing(text, LEX)


@pytest.mark.parametrize("text", GIVE_UP_THEN_DELIVERED)
def test_a_give_up_the_reply_gets_past_is_no_give_up(text):
    assert LEX.matches("give_up", text.split(", ")[0])  # the failure alone is a give-up
    assert not any(LEX.matches("give_up", form) for form in _forms(text))


@pytest.mark.parametrize("text", GIVE_UPS)
def test_give_ups_in_other_words(text):
    assert all(LEX.matches("give_up", form) for form in _forms(text))


@pytest.mark.parametrize("text", NOT_GIVE_UPS)
def test_apologies_that_deliver_are_no_give_ups(text):
    assert not LEX.matches("give_up", text)


@pytest.mark.parametrize("category, text", [("human", t) for t in HUMANS] + [("wrong", t) for t in WRONGS])
def test_complaints_in_other_words(category, text):
    assert all(LEX.matches(category, form) for form in _forms(text))


@pytest.mark.parametrize("category, text", [("human", t) for t in NOT_HUMANS] + [("wrong", t) for t in NOT_WRONGS])
def test_complaint_decoys(category, text):
    assert not LEX.matches(category, text)


def test_a_user_lexicon_can_name_its_own_contrasts():
    lex = lexicon_from({"extend": True, "contrast": ["only"]})
    assert not is_closing("thanks, only the invoice is missing", lex)
    assert is_closing("thanks, only the invoice is missing", LEX)


def test_a_give_up_is_taken_back_by_a_contrast_anywhere_after_it():
    assert not LEX.matches("give_up", "I couldn't find it under your email at first but here it is: 340 points")
    assert LEX.matches("give_up", "I couldn't find it under your email and I'm sorry but I have to stop here")
