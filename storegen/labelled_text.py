"""The phrase book of the labelled outcome set: what users and the assistant say, in EN, DE, FR and ES.

Each entry is a list of variants; the generator picks one with its seeded RNG. `{ref}`
is the order, invoice, account, subscription or product the conversation is about.

Example:
    >>> TOPIC_QUESTIONS["refund"]["de"][0].format(ref="A-1043")
    'Ich möchte eine Rückerstattung für Bestellung A-1043, sie kam beschädigt an.'
"""

from __future__ import annotations

LANGS = ("en", "de", "fr", "es")
TOPICS = ("refund", "shipping", "password", "billing", "cancel", "product")

#: The first user question of a conversation, by topic and language.
TOPIC_QUESTIONS: dict[str, dict[str, list[str]]] = {
    "refund": {
        "en": ["I'd like a refund for order {ref}, it arrived damaged.", "Can I get my money back for {ref}? The item doesn't work.",
               "How do I return {ref} and get refunded?"],
        "de": ["Ich möchte eine Rückerstattung für Bestellung {ref}, sie kam beschädigt an.",
               "Bekomme ich mein Geld für {ref} zurück? Der Artikel funktioniert nicht.",
               "Wie kann ich {ref} zurückschicken und das Geld erstattet bekommen?"],
        "fr": ["Je voudrais un remboursement pour la commande {ref}, elle est arrivée abîmée.",
               "Puis-je être remboursé pour {ref} ? L'article ne fonctionne pas.", "Comment retourner {ref} et me faire rembourser ?"],
        "es": ["Quiero un reembolso del pedido {ref}, llegó dañado.", "¿Me pueden devolver el dinero de {ref}? El artículo no funciona.",
               "¿Cómo devuelvo {ref} y obtengo el reembolso?"],
    },
    "shipping": {
        "en": ["Where is my package? Order {ref} still hasn't arrived.", "My delivery for {ref} is late, can you track it?",
               "When will order {ref} be delivered?"],
        "de": ["Wo ist mein Paket? Bestellung {ref} ist immer noch nicht angekommen.",
               "Meine Lieferung {ref} ist verspätet, können Sie die Sendung verfolgen?", "Wann wird Bestellung {ref} geliefert?"],
        "fr": ["Où est mon colis ? La commande {ref} n'est toujours pas arrivée.", "Ma livraison {ref} est en retard, pouvez-vous la suivre ?",
               "Quand la commande {ref} sera-t-elle livrée ?"],
        "es": ["¿Dónde está mi paquete? El pedido {ref} todavía no ha llegado.", "Mi envío {ref} viene con retraso, ¿pueden rastrearlo?",
               "¿Cuándo se entregará el pedido {ref}?"],
    },
    "password": {
        "en": ["I can't log in to {ref}, the password reset email never arrives.", "I forgot my password for {ref} and I'm locked out.",
               "Login keeps failing for {ref} with my password, can you help me sign in?"],
        "de": ["Ich kann mich mit {ref} nicht anmelden, die E-Mail zum Zurücksetzen des Passworts kommt nie an.",
               "Ich habe mein Passwort für {ref} vergessen und bin ausgesperrt.",
               "Die Anmeldung mit {ref} und meinem Passwort schlägt ständig fehl, können Sie helfen?"],
        "fr": ["Je n'arrive pas à me connecter avec {ref}, l'e-mail de réinitialisation du mot de passe n'arrive jamais.",
               "J'ai oublié mon mot de passe pour {ref} et mon compte est bloqué.",
               "La connexion échoue toujours pour {ref} avec mon mot de passe, pouvez-vous m'aider ?"],
        "es": ["No puedo iniciar sesión con {ref}, el correo para restablecer la contraseña nunca llega.",
               "Olvidé mi contraseña de {ref} y mi cuenta está bloqueada.",
               "El inicio de sesión con {ref} falla siempre con mi contraseña, ¿me ayudan?"],
    },
    "billing": {
        "en": ["My invoice {ref} shows the wrong amount.", "I was charged twice on my last bill, invoice {ref}.",
               "Can you send me a corrected invoice {ref}? The VAT number is missing."],
        "de": ["Meine Rechnung {ref} zeigt einen falschen Betrag.", "Mir wurde auf der letzten Rechnung {ref} doppelt abgebucht.",
               "Können Sie mir eine korrigierte Rechnung {ref} schicken? Die USt-IdNr. fehlt."],
        "fr": ["Ma facture {ref} indique un montant erroné.", "J'ai été débité deux fois sur ma dernière facture {ref}.",
               "Pouvez-vous m'envoyer une facture {ref} corrigée ? Le numéro de TVA manque."],
        "es": ["Mi factura {ref} muestra un importe incorrecto.", "Me cobraron dos veces en mi última factura {ref}.",
               "¿Pueden enviarme una factura {ref} corregida? Falta el NIF."],
    },
    "cancel": {
        "en": ["I want to cancel my subscription {ref}.", "How do I cancel my membership {ref} before the next renewal?",
               "Please stop subscription {ref}, I don't want to be charged again."],
        "de": ["Ich möchte mein Abo {ref} kündigen.", "Wie kündige ich meine Mitgliedschaft {ref} vor der nächsten Verlängerung?",
               "Bitte beenden Sie das Abonnement {ref}, ich will nicht mehr belastet werden."],
        "fr": ["Je veux résilier mon abonnement {ref}.", "Comment annuler mon adhésion {ref} avant le prochain renouvellement ?",
               "Arrêtez l'abonnement {ref} s'il vous plaît, je ne veux plus être prélevé."],
        "es": ["Quiero cancelar mi suscripción {ref}.", "¿Cómo doy de baja mi membresía {ref} antes de la próxima renovación?",
               "Por favor, detengan la suscripción {ref}, no quiero más cargos."],
    },
    "product": {
        "en": ["Is the {ref} available in stock?", "When will the {ref} be back in stock?", "Do you have the {ref} in black? I want to buy two."],
        "de": ["Ist der {ref} auf Lager?", "Wann ist der {ref} wieder verfügbar?", "Haben Sie den {ref} in Schwarz? Ich möchte zwei kaufen."],
        "fr": ["Le {ref} est-il disponible en stock ?", "Quand le {ref} sera-t-il de nouveau en stock ?",
               "Avez-vous le {ref} en noir ? J'en voudrais deux."],
        "es": ["¿Está el {ref} disponible en stock?", "¿Cuándo volverá a estar disponible el {ref}?",
               "¿Tienen el {ref} en negro? Quiero comprar dos."],
    },
}

#: The assistant's answer on each topic (after a successful look-up or action).
ANSWERS: dict[str, dict[str, str]] = {
    "refund": {"en": "The refund for {ref} is approved; it will reach your card within 3 to 5 business days.",
               "de": "Die Erstattung für {ref} ist genehmigt; sie erscheint in 3 bis 5 Werktagen auf Ihrer Karte.",
               "fr": "Le remboursement de {ref} est validé ; il apparaîtra sur votre carte sous 3 à 5 jours ouvrés.",
               "es": "El reembolso de {ref} está aprobado; llegará a su tarjeta en 3 a 5 días hábiles."},
    "shipping": {"en": "Order {ref} is with the carrier and will be delivered on Thursday before 8 pm.",
                 "de": "Bestellung {ref} ist beim Paketdienst und wird am Donnerstag vor 20 Uhr zugestellt.",
                 "fr": "La commande {ref} est chez le transporteur et sera livrée jeudi avant 20 h.",
                 "es": "El pedido {ref} está con el transportista y se entregará el jueves antes de las 20 h."},
    "password": {"en": "I've sent a new reset link to {ref}; it is valid for 30 minutes, please check your spam folder too.",
                 "de": "Ich habe einen neuen Link an {ref} geschickt; er gilt 30 Minuten, bitte prüfen Sie auch den Spam-Ordner.",
                 "fr": "J'ai envoyé un nouveau lien à {ref} ; il est valable 30 minutes, vérifiez aussi vos courriers indésirables.",
                 "es": "He enviado un nuevo enlace a {ref}; es válido 30 minutos, revise también la carpeta de spam."},
    "billing": {"en": "I've corrected invoice {ref}; the new PDF is in your account under Billing.",
                "de": "Ich habe die Rechnung {ref} korrigiert; das neue PDF liegt in Ihrem Konto unter Abrechnung.",
                "fr": "J'ai corrigé la facture {ref} ; le nouveau PDF est dans votre compte, rubrique Facturation.",
                "es": "He corregido la factura {ref}; el nuevo PDF está en su cuenta, en Facturación."},
    "cancel": {"en": "Subscription {ref} is cancelled; you keep access until the end of the current period and won't be charged again.",
               "de": "Das Abo {ref} ist gekündigt; Sie behalten den Zugang bis zum Ende des Zeitraums und werden nicht mehr belastet.",
               "fr": "L'abonnement {ref} est résilié ; vous gardez l'accès jusqu'à la fin de la période et ne serez plus prélevé.",
               "es": "La suscripción {ref} está cancelada; conserva el acceso hasta el final del periodo y no habrá más cargos."},
    "product": {"en": "The {ref} is in stock: 14 units in our Leipzig warehouse, shipping within 24 hours.",
                "de": "Der {ref} ist auf Lager: 14 Stück in unserem Lager in Leipzig, Versand innerhalb von 24 Stunden.",
                "fr": "Le {ref} est en stock : 14 unités dans notre entrepôt de Leipzig, expédition sous 24 heures.",
                "es": "El {ref} está en stock: 14 unidades en nuestro almacén de Leipzig, envío en 24 horas."},
}

#: A second, different answer (to a follow-up question).
FOLLOW_UP_ANSWERS = {
    "en": "You will also get a confirmation email within the next hour with all the details.",
    "de": "Sie erhalten außerdem innerhalb der nächsten Stunde eine Bestätigung per E-Mail mit allen Details.",
    "fr": "Vous recevrez aussi un e-mail de confirmation dans l'heure avec tous les détails.",
    "es": "También recibirá un correo de confirmación en la próxima hora con todos los detalles.",
}

#: User follow-ups that are not closings (a conversation ending on one is unanswered).
FOLLOW_UPS = {
    "en": ["And how long will that take?", "Can you also send me a confirmation email?", "What happens if it doesn't work?"],
    "de": ["Und wie lange dauert das?", "Können Sie mir auch eine Bestätigung per E-Mail schicken?", "Was passiert, wenn es nicht klappt?"],
    "fr": ["Et combien de temps cela prendra-t-il ?", "Pouvez-vous aussi m'envoyer une confirmation par e-mail ?",
           "Que se passe-t-il si ça ne marche pas ?"],
    "es": ["¿Y cuánto tardará?", "¿Me pueden enviar también una confirmación por correo?", "¿Qué pasa si no funciona?"],
}

#: A user's closing message: the conversation ended resolved.
CLOSINGS = {
    "en": ["Thanks, bye!", "Perfect, that's all.", "Great, thank you so much, have a nice day."],
    "de": ["Danke, tschüss!", "Perfekt, das war's.", "Super, vielen Dank, schönen Tag noch."],
    "fr": ["Merci, au revoir !", "Parfait, c'est tout.", "Super, merci beaucoup, bonne journée."],
    "es": ["¡Gracias, adiós!", "Perfecto, eso es todo.", "Genial, muchas gracias, que tenga buen día."],
}

#: The assistant's reply to a closing.
GOODBYES = {"en": "You're welcome, have a great day!", "de": "Gern geschehen, einen schönen Tag!",
            "fr": "Avec plaisir, bonne journée !", "es": "¡De nada, que tenga un buen día!"}

#: The assistant gives up after a failure (the conversation then ends: dropped after a failure).
GIVE_UPS = {
    "en": ["I'm sorry, I couldn't retrieve your details: our system is not responding and I'm unable to help with this right now.",
           "Unfortunately something went wrong on my side and I can't complete this request."],
    "de": ["Es tut mir leid, ich konnte Ihre Daten nicht abrufen: Das System antwortet nicht, ich kann Ihnen gerade nicht weiterhelfen.",
           "Leider ist bei mir ein Fehler aufgetreten und ich kann diese Anfrage nicht abschließen."],
    "fr": ["Je suis désolé, je n'ai pas pu récupérer vos informations : le système ne répond pas et je ne peux pas vous aider pour le moment.",
           "Malheureusement, une erreur s'est produite de mon côté et je ne peux pas traiter cette demande."],
    "es": ["Lo siento, no he podido obtener sus datos: el sistema no responde y no puedo ayudarle en este momento.",
           "Lamentablemente algo ha fallado por mi parte y no puedo completar esta solicitud."],
}

#: The user asks the assistant to try again after it gave up.
TRY_AGAIN = {"en": "Please try again.", "de": "Bitte versuchen Sie es noch einmal.", "fr": "Réessayez, s'il vous plaît.",
             "es": "Inténtelo de nuevo, por favor."}

#: An apology that is not a failure: the answer follows it.
APOLOGY_PREFIX = {"en": "Sorry for the wait! Here it is: ", "de": "Entschuldigen Sie die Wartezeit! Hier ist es: ",
                  "fr": "Désolé pour l'attente ! Voici : ", "es": "¡Perdón por la espera! Aquí lo tiene: "}

#: A failure the assistant got past in the same reply: not a give-up.
RECOVERED_PREFIX = {"en": "I couldn't find it at first, but here it is: ",
                    "de": "Ich konnte es zuerst nicht finden, aber hier ist es: ",
                    "fr": "Je ne l'ai pas trouvé tout de suite, mais le voici : ",
                    "es": "Al principio no lo encontré, pero aquí está: "}

#: Thanks followed by a contrast and a new request: not a closing.
THANKS_BUT = {"en": "Thanks, but I also need the invoice for it.", "de": "Danke, aber ich brauche auch noch die Rechnung dazu.",
              "fr": "Merci, mais il me faut aussi la facture.", "es": "Gracias, pero también necesito la factura."}

#: Asking for a human (user frustration).
ASK_HUMAN = {
    "en": ["Can I talk to a person please?", "I want to speak to a human agent.", "Get me a representative."],
    "de": ["Kann ich bitte mit einem Menschen sprechen?", "Ich möchte mit einem echten Mitarbeiter sprechen."],
    "fr": ["Je veux parler à un conseiller humain.", "Puis-je parler à une personne, s'il vous plaît ?"],
    "es": ["¿Puedo hablar con una persona, por favor?", "Quiero hablar con un agente humano."],
}

#: Saying the answer is wrong or useless (user frustration).
SAYS_WRONG = {
    "en": ["That's wrong.", "This is useless!", "Your answer is completely wrong."],
    "de": ["Das ist falsch.", "Das ist völlig nutzlos!"],
    "fr": ["C'est faux.", "Votre réponse est complètement inutile !"],
    "es": ["Eso está mal.", "¡Esta respuesta no sirve para nada!"],
}

#: Decoys: they contain a frustration word, but are not frustration.
FRUSTRATION_DECOYS = {
    "en": ["No need to talk to a person, this works for me.", "That's not wrong, I just wanted to double-check.",
           "The app said \"wrong password\" earlier, but it works now."],
    "de": ["Ich muss nicht mit einem Menschen sprechen, das passt so.", "Das ist nicht falsch, ich wollte nur nachfragen.",
           "Die App zeigte vorhin „Passwort falsch“ an, jetzt geht es."],
    "fr": ["Pas besoin de parler à une personne, ça me va.", "Ce n'est pas faux, je voulais juste vérifier.",
           "L'appli affichait « mot de passe faux » tout à l'heure, mais ça marche maintenant."],
    "es": ["No hace falta hablar con una persona, así me sirve.", "No está mal, solo quería confirmarlo.",
           "La app decía \"contraseña incorrecta\" antes, pero ya funciona."],
}

#: The assistant's answer to a decoy remark.
ACKNOWLEDGE = {"en": "Understood, glad it works. Anything else?", "de": "Verstanden, schön dass es klappt. Sonst noch etwas?",
               "fr": "Entendu, tant mieux. Autre chose ?", "es": "Entendido, me alegro. ¿Algo más?"}

#: A greeting, repeated by the user (not a rephrased request), and the assistant's greetings.
GREETINGS = {"en": "Hello", "de": "Hallo", "fr": "Bonjour", "es": "Hola"}
ASSISTANT_GREETINGS = {
    "en": ["Hello! How can I help you today?", "Hi again! What can I do for you?"],
    "de": ["Hallo! Wie kann ich Ihnen heute helfen?", "Hallo nochmal! Was kann ich für Sie tun?"],
    "fr": ["Bonjour ! Comment puis-je vous aider aujourd'hui ?", "Re-bonjour ! Que puis-je faire pour vous ?"],
    "es": ["¡Hola! ¿En qué puedo ayudarle hoy?", "¡Hola de nuevo! ¿Qué puedo hacer por usted?"],
}

#: The assistant after a human's approval is still pending (said before the interrupt).
HANDOFF = {"en": "This needs a supervisor's approval; I've asked for it.", "de": "Das muss eine Vorgesetzte freigeben; ich habe sie gefragt.",
           "fr": "Cela nécessite l'accord d'un superviseur ; je l'ai demandé.", "es": "Esto requiere la aprobación de un supervisor; ya la he pedido."}

#: Products named in the product topic; the other topics name an id.
PRODUCTS = ["Nimbus X2", "Aero 7", "Vela Pro", "Kora S", "Lumen 3"]

#: A third distinct answer (a second follow-up).
FINAL_CHECKS = {"en": "Everything is in order for {ref}; nothing else is needed from you.",
                "de": "Für {ref} ist alles in Ordnung; Sie müssen nichts weiter tun.",
                "fr": "Tout est en ordre pour {ref} ; vous n'avez rien d'autre à faire.",
                "es": "Todo está en orden para {ref}; no necesita hacer nada más."}

#: A user asking for their whole order history (the agent pages through it: a long turn).
HISTORY_REQUEST = {"en": "Could you go through my whole order history, page by page?",
                   "de": "Können Sie meinen gesamten Bestellverlauf Seite für Seite durchgehen?",
                   "fr": "Pouvez-vous parcourir tout mon historique de commandes, page par page ?",
                   "es": "¿Puede revisar todo mi historial de pedidos, página por página?"}

#: The assistant's summary after paging through the history.
HISTORY_SUMMARY = {"en": "I went through all {pages} pages of your order history: every order is delivered and paid.",
                   "de": "Ich habe alle {pages} Seiten Ihres Bestellverlaufs geprüft: Jede Bestellung ist geliefert und bezahlt.",
                   "fr": "J'ai parcouru les {pages} pages de votre historique : chaque commande est livrée et payée.",
                   "es": "He revisado las {pages} páginas de su historial: todos los pedidos están entregados y pagados."}
