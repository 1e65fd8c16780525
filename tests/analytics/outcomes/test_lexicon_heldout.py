"""The built-in lexicon on phrases of its own, worded unlike the labelled set's
(storegen/labelled_text.py): whether the rules generalise. Per language and rule,
positives that must match and decoys (the same words about something else, negated,
hypothetical or quoted) that must not."""

from __future__ import annotations

import unicodedata

import pytest

from analytics.conversation_outcomes.lexicon import built_in

LEX = built_in()

HUMAN = {
    "en": (
        ["I'd rather chat with a real human being.", "Please connect me with an actual person",
         "transfer me to a live operator now", "Let me speak with your supervisor.", "can somebody real talk to me",
         "Put me through to a representative, please.", "I need to talk to someone who works there",
         "Is there any way to reach a human?", "SPEAK TO AGENT", "get me a human, this bot is hopeless"],
        ["I don't want to talk to anyone, just fix it", "The delivery person left it at the door",
         "no need to connect me with an agent", "My travel agent booked the wrong flight",
         "Our sales representatives are based in Ohio", "You mentioned \"speak to an agent\" earlier, why?"],
    ),
    "de": (
        ["Kann ich bitte mit einem Menschen reden?", "Verbinden Sie mich mit einem Berater.",
         "Ich will sofort mit einem Mitarbeiter sprechen", "Gibt es jemanden, mit dem ich sprechen kann? Einen echten Menschen?",
         "Bitte leiten Sie mich an einen Sachbearbeiter weiter, verbinden Sie mich mit dem Kundenservice",
         "ICH MÖCHTE MIT EINER ECHTEN PERSON SPRECHEN", "Kann ich mit jemandem vom Support reden?",
         "Ich hätte gerne einen echten Menschen am Telefon", "Darf ich mit Ihrem Kundendienst sprechen?",
         "Bitte mit einem menschlichen Mitarbeiter verbinden"],
        ["Ich muss nicht mit einem Mitarbeiter sprechen, danke", "Der Mitarbeiter im Lager hat das Paket verloren",
         "Mein Mann hat schon mit dem Kundenservice telefoniert", "Ohne mit jemandem zu sprechen, geht das?",
         "Die Person an der Tür war sehr freundlich", "Der Bot sagte „mit einem Mitarbeiter sprechen“, was heißt das?"],
    ),
    "fr": (
        ["Je voudrais parler avec un conseiller.", "Passez-moi un humain s'il vous plaît",
         "Est-ce que je peux discuter avec une vraie personne ?", "Mettez-moi en relation avec un opérateur",
         "Je veux parler à un être humain !", "Pourriez-vous me transférer vers un conseiller ?",
         "JE VEUX PARLER À QUELQU'UN", "Comment joindre un interlocuteur humain ?",
         "Je souhaite contacter un agent, pas un robot", "Laissez-moi parler à votre conseillère"],
        ["Je n'ai besoin de parler à personne, merci", "Le livreur était une personne charmante",
         "Mon conseiller bancaire est en vacances", "Je ne veux pas parler à un conseiller",
         "Ce produit convient à une personne seule ?", "Vous avez écrit « parler à un conseiller », pourquoi ?"],
    ),
    "es": (
        ["Quiero hablar con un asesor, por favor.", "¿Me puede pasar con un agente?",
         "Necesito comunicarme con una persona de verdad", "Páseme con un operador ahora mismo",
         "¿Puedo chatear con un humano?", "QUIERO HABLAR CON ALGUIEN REAL",
         "Transfiérame a un representante, por favor", "¿Hay forma de hablar con un empleado?",
         "Prefiero hablar con una persona y no con un bot", "Déjeme hablar con su ejecutivo de cuentas"],
        ["No necesito hablar con nadie, gracias", "La persona que entregó el paquete fue amable",
         "Sin hablar con un agente, ¿puedo cancelarlo?", "Mi agente de viajes reservó mal",
         "El representante legal de la empresa firmó", "Usted escribió \"hablar con un asesor\", ¿qué significa?"],
    ),
}

WRONG = {
    "en": (
        ["Your reply is totally useless.", "that answer is just plain wrong", "This makes no sense at all",
         "No, that's incorrect", "You are completely wrong about the fees", "That really doesn't help me",
         "Nonsense.", "THIS IS NOT WHAT I ASKED", "The response was not helpful", "That solution still doesn't work"],
        ["The box was the wrong colour", "what if the update doesn't work?", "It's not wrong, just slow",
         "My old phone charger is useless", "The printer doesn't work since Monday",
         "Someone told me \"that's wrong\" at the store"],
    ),
    "de": (
        ["Ihre Antwort ist einfach falsch.", "Das hilft mir überhaupt nicht", "Das ist doch Quatsch",
         "Die Antwort ist völlig nutzlos", "Sie liegen falsch mit dem Preis", "Das stimmt so nicht!",
         "Völlig falsch.", "Das ergibt keinen Sinn", "DAS IST FALSCH", "Ihr Vorschlag hat nicht funktioniert"],
        ["Die Rechnung zeigt den falschen Betrag", "Das ist nicht falsch, ich wollte nur fragen",
         "Der Drucker funktioniert nicht", "Wenn das nicht hilft, was dann?",
         "Mein altes Ladegerät ist nutzlos", "Die App meldete „Passwort falsch“ heute früh"],
    ),
    "fr": (
        ["Votre réponse est complètement fausse.", "Ça ne m'aide en rien", "C'est vraiment n'importe quoi",
         "Cette réponse est inutile", "Vous vous trompez sur le prix", "Ça n'a aucun sens !",
         "Faux.", "C'EST FAUX", "Cela ne sert à rien", "Votre solution ne fonctionne toujours pas"],
        ["La facture indique le mauvais montant", "Ce n'est pas faux, je voulais juste vérifier",
         "Mon imprimante ne marche pas depuis lundi", "Et si ça ne marche pas, je fais quoi ?",
         "Ce vieux chargeur est inutile", "L'écran affichait « code faux » ce matin"],
    ),
    "es": (
        ["Su respuesta es totalmente incorrecta.", "Eso no me sirve de nada", "Esto no tiene ningún sentido",
         "La respuesta está mal", "Usted se equivoca con el precio", "Eso no me ayuda",
         "Incorrecto.", "ESO ESTÁ MAL", "Esa respuesta es inútil", "Su solución sigue sin funcionar"],
        ["La factura muestra un importe incorrecto", "No es que esté mal, solo quería confirmar",
         "Mi impresora no funciona desde el lunes", "¿Y si eso no funciona, qué hago?",
         "Este cargador viejo es inútil", "La pantalla decía \"clave incorrecta\" esta mañana"],
    ),
}

GIVE_UP = {
    "en": (
        ["Apologies, I wasn't able to locate your booking.", "I'm afraid I can't process this refund.",
         "Unfortunately we couldn't update your address.", "I am not able to access your account right now.",
         "Sorry, I cannot complete the cancellation.", "We were unable to verify the payment.",
         "I tried, but I couldn't retrieve the invoice.", "Sadly I can't help with that request.",
         "I failed to reset the password.", "I won't be able to change the delivery date."],
        ["Your order has been refunded.", "If you can't log in, reset your password here.",
         "Sorry for the delay, here is your invoice.", "You were unable to pay? Try another card.",
         "I found your booking: it ships tomorrow.", "I can help you with that right away."],
    ),
    "de": (
        ["Ich konnte Ihre Bestellung leider nicht finden.", "Das kann ich leider nicht erledigen.",
         "Wir können die Zahlung derzeit nicht verarbeiten.", "Leider konnte ich das Passwort nicht zurücksetzen.",
         "Es tut mir leid, das ist leider nicht möglich.", "Ich bin leider nicht in der Lage, das zu ändern.",
         "Dabei kann ich Ihnen nicht helfen.", "Ich habe keinen Zugriff und kann nichts tun.",
         "Entschuldigung, ich kann die Rechnung nicht abrufen.", "Wir konnten Ihre Adresse nicht aktualisieren."],
        ["Ihre Bestellung wurde erstattet.", "Wenn Sie sich nicht anmelden können, setzen Sie das Passwort zurück.",
         "Entschuldigen Sie die Wartezeit, hier ist die Rechnung.", "Ich habe Ihre Bestellung gefunden.",
         "Gern helfe ich Ihnen dabei.", "Sie können die Lieferung jederzeit verfolgen."],
    ),
    "fr": (
        ["Je n'ai malheureusement pas pu trouver votre commande.", "Désolé, je ne peux pas traiter ce remboursement.",
         "Nous n'avons pas pu mettre à jour votre adresse.", "Je ne suis pas en mesure d'accéder à votre compte.",
         "Il m'est impossible de modifier la date.", "Je n'arrive pas à récupérer la facture.",
         "Malheureusement, nous ne pouvons pas annuler cette commande.", "Je n'ai pas réussi à réinitialiser le mot de passe.",
         "Une erreur est survenue lors du paiement.", "Je ne parviens pas à localiser votre colis."],
        ["Votre commande a été remboursée.", "Si vous ne pouvez pas vous connecter, réinitialisez le mot de passe.",
         "Désolé pour l'attente, voici votre facture.", "J'ai trouvé votre commande, elle part demain.",
         "Je peux vous aider tout de suite.", "Vous pouvez suivre la livraison en ligne."],
    ),
    "es": (
        ["No pude encontrar su pedido, lo siento.", "Lamentablemente no puedo procesar el reembolso.",
         "No hemos podido actualizar su dirección.", "No me es posible acceder a su cuenta.",
         "Lo siento, no logré restablecer la contraseña.", "Hubo un error al procesar el pago.",
         "No pudimos verificar la tarjeta.", "Disculpe, no he conseguido recuperar la factura.",
         "No puedo cancelar este pedido ahora.", "Lo lamento, no fue posible cambiar la fecha."],
        ["Su pedido ha sido reembolsado.", "Si no puede iniciar sesión, restablezca la contraseña.",
         "Perdone la espera, aquí tiene su factura.", "Encontré su pedido, sale mañana.",
         "Puedo ayudarle ahora mismo.", "Puede seguir el envío en línea."],
    ),
}

RULES = {"human": HUMAN, "wrong": WRONG, "give_up": GIVE_UP}

#: Decoys the rules get wrong (docs/outcomes.md, Limits): the negation sits in another clause, or
#: more than `NEGATION_WINDOW` words before the request.
KNOWN_MISSES = {
    ("human", "Kein Grund, mich mit jemandem zu verbinden"),
    ("human", "Pas la peine de me passer un conseiller"),
}


def _cases(positive: bool):
    for category, by_lang in RULES.items():
        for lang, (positives, decoys) in by_lang.items():
            for text in positives if positive else decoys:
                yield pytest.param(category, text, id=f"{category}-{lang}-{text[:30]}")


@pytest.mark.parametrize("category, text", list(_cases(True)))
def test_held_out_positives_match_as_typed_in_capitals_and_decomposed(category, text):
    for form in (text, text.upper(), unicodedata.normalize("NFD", text)):
        assert LEX.matches(category, form), form


@pytest.mark.parametrize("category, text", list(_cases(False)))
def test_held_out_decoys_do_not_match(category, text):
    assert not LEX.matches(category, text)


@pytest.mark.parametrize("category, text", sorted(KNOWN_MISSES))
def test_known_limits_still_hold(category, text):
    """A negation out of reach is not seen: when this fails the rule got better; move the case to the decoys."""
    assert LEX.matches(category, text)


def test_the_held_out_set_has_ten_positives_and_five_decoys_per_language_and_rule():
    for by_lang in RULES.values():
        assert set(by_lang) == {"en", "de", "fr", "es"}
        assert all(len(pos) >= 10 and len(dec) >= 5 for pos, dec in by_lang.values())
