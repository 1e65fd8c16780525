"""The built-in outcome lexicon: English, German, French and Spanish patterns by category
(syntax and matching: `analytics.conversation_outcomes.lexicon`; the rules in words: docs/outcomes.md)."""

from __future__ import annotations

# Words naming the parts of a pattern, by language (joined with "|" into pattern parts).
_EN_ASK = "talk|speak|chat|connect me|transfer me|put me through|get me|reach"
_EN_PERSON = "person|human|humans|agent|representative|rep|someone|somebody|operator|manager|supervisor|staff"
_DE_ASK = "sprechen|reden|chatten|verbinden|weiterleiten|durchstellen|verbinde|verbindest"
_DE_PERSON = ("mensch|menschen|mitarbeiter|mitarbeiterin|mitarbeitenden|berater|beraterin|kundenberater|person"
              "|jemandem|jemand|agenten|kundendienst|kundenservice|support|ansprechpartner|sachbearbeiter")
_FR_ASK = ("parler|parle|passer|passez moi|passe moi|transferer|transferez moi|mettre en relation|mettez moi en relation"
           "|joindre|contacter|discuter")
_FR_PERSON = "personne|humain|etre humain|conseiller|conseillere|agent|quelqu'un|operateur|operatrice|interlocuteur"
_ES_ASK = ("hablar|hable|hablo|pasar|pasame|paseme|pasa|pase|comunicar|comunicarme|comunica|comunique|comuniqueme|transferir|transfiera"
           "|transfierame|contactar|chatear")
_ES_PERSON = "persona|humano|agente|asesor|asesora|operador|operadora|alguien|representante|ejecutivo|empleado"

# A reference to the reply, and a verdict on it.
_EN_REPLY = "answer|answers|reply|response|solution|suggestion|that|this|you"
_EN_VERDICT = ("wrong|useless|incorrect|not helpful|unhelpful|not right|not correct|not true|nonsense|rubbish|garbage"
               "|pointless|doesn't help|does not help|didn't help|did not help|isn't helping|is not helping"
               "|makes no sense|doesn't make sense|does not make sense|doesn't work|does not work|didn't work"
               "|did not work|not what i asked|not what i asked for|didn't answer|did not answer|are not listening"
               "|aren't listening")
_DE_REPLY = "antwort|antworten|losung|vorschlag|das|dies|sie|du"
_DE_VERDICT = ("falsch|nutzlos|unbrauchbar|sinnlos|quatsch|unsinn|hilft nicht|hilft mir nicht|hilft uns nicht"
               "|hilft mir gar nicht|hilft gar nicht|hilft mir uberhaupt nicht|hilft uberhaupt nicht|bringt nichts"
               "|bringt mir nichts|stimmt nicht|stimmt so nicht|stimmt einfach nicht|nicht hilfreich|nicht richtig"
               "|macht keinen sinn|ergibt keinen sinn|verstehen mich nicht|versteht mich nicht|horen mir nicht zu"
               "|funktioniert nicht|geht nicht|hat nicht geholfen|hat nicht funktioniert|liegen falsch|liegst falsch")
_FR_REPLY = "reponse|reponses|solution|ca|c|cela|ceci|vous|tu"
_FR_VERDICT = ("faux|fausse|inutile|inutiles|incorrect|incorrecte|n'aide pas|ne m'aide pas|ne m'aide pas du tout"
               "|ne m'aide en rien|ne sert a rien|ne me sert a rien|sert a rien|n'a aucun sens|n'a pas de sens|absurde"
               "|n'importe quoi|pas bon|pas juste|ne repond pas|ne marche pas|ne fonctionne pas|n'a pas marche"
               "|n'a pas fonctionne|trompez|vous trompez|te trompes|ne comprenez pas|ne m'ecoutez pas")
_ES_REPLY = "respuesta|respuestas|solucion|eso|esto|usted|tu|ustedes"
_ES_VERDICT = ("incorrecto|incorrecta|inutil|inutiles|mal|esta mal|no sirve|no sirve de nada|no sirve para nada"
               "|no ayuda|no me ayuda|no me ayuda nada|no me sirve|no tiene sentido|no tiene ningun sentido|no es correcto|no es cierto"
               "|no funciona|no funciono|no me entiende|no me entiendes|no me escucha|se equivoca|te equivocas"
               "|equivocado|equivocada|absurdo|absurda")
# A verdict said on its own: the whole clause, with an intensifier at most.
_ALONE = ("wrong|useless|incorrect|nonsense|rubbish|unhelpful|not helpful|completely wrong|totally wrong|so wrong"
          "|all wrong|just wrong|completely useless|totally useless|so useless|wrong answer|still wrong|not what i asked"
          "|falsch|nutzlos|quatsch|unsinn|vollig falsch|total falsch|komplett falsch|vollig nutzlos|leider falsch"
          "|faux|inutile|completement faux|totalement faux|archi faux|completement inutile|totalement inutile|nul"
          "|n'importe quoi"
          "|incorrecto|inutil|mal|totalmente mal|muy mal|completamente incorrecto|totalmente inutil|no sirve"
          "|makes no sense|macht keinen sinn|ergibt keinen sinn|n'a aucun sens|no tiene sentido")

BUILT_IN: dict[str, tuple[str, ...]] = {
    # A user's message ending the conversation well (also needs to be short: `outcomes.signals`).
    "closing": (
        "thanks bye", "thank you bye", "thanks that's all", "that's all", "that is all", "perfect thanks",
        "that's all i needed", "all good", "bye", "goodbye", "have a nice day", "problem solved", "that solved it",
        "that worked", "works now", "thanks a lot", "thank you so much", "thanks", "thank you", "cheers",
        "danke", "vielen dank", "tschuss", "auf wiedersehen", "das wars", "das war's", "alles klar danke", "hat geklappt",
        "merci", "merci beaucoup", "au revoir", "c'est tout", "parfait merci", "bonne journee", "ca marche merci",
        "gracias", "muchas gracias", "adios", "hasta luego", "eso es todo", "perfecto gracias", "ya funciona",
    ),
    # An assistant giving up or apologising for failing: first person + inability (+ what it could not do).
    "give_up": (
        "i|we ... couldn't|could not|wasn't able to|was not able to|weren't able to|were unable to|was unable to"
        "|failed to|did not manage to|didn't manage to",
        "i|we ... can't|cannot|can not|am unable to|'m unable to|are unable to|am not able to|'m not able to"
        "|are not able to|won't be able to|will not be able to ... help|assist|do|complete|process|find|access|fix"
        "|resolve|retrieve|change|cancel|proceed|finish|look up|handle|locate|update|issue|perform|carry out|go further",
        "i can't help|i cannot help|i'm unable to|i am unable to|i'm not able to|i am not able to",
        "something went wrong|an error occurred|an error has occurred|ran into an error|ran into a problem",
        "sorry|unfortunately|afraid ... not possible|isn't possible|is not possible",
        "ich|wir ... kann|konnte|konnen|konnten|war|waren ... nicht|kein|keine|keinen|nichts|nicht in der lage",
        "kann|konnte|konnen|konnten ... ich|wir ... nicht|kein|keine|keinen|nichts",
        "kann|konnte ... nichts ... tun|machen|unternehmen|erreichen",
        "leider nicht moglich|nicht in der lage|etwas ist schiefgelaufen|ist etwas schiefgelaufen"
        "|ein fehler ist aufgetreten|ist ein fehler aufgetreten|es tut mir leid ich konnte nicht",
        "je|nous ... ne peux|ne pouvons|ne pourrai|ne pourrons|n'ai pas pu|n'avons pas pu|n'ai pas reussi"
        "|n'avons pas reussi|n'arrive pas|n'arrivons pas|ne parviens pas|ne suis pas en mesure|ne sommes pas en mesure",
        "je|nous ... n'ai|n'avons ... pas pu|pas reussi|pas ete en mesure",
        "impossible de|une erreur s'est produite|une erreur est survenue|il m'est impossible|il nous est impossible",
        "no puedo|no pude|no he podido|no podemos|no pudimos|no hemos podido|no me es posible|no me fue posible"
        "|no es posible|no fue posible|no logre|no consegui|no he logrado|no he conseguido|ocurrio un error"
        "|se produjo un error|hubo un error|ha ocurrido un error",
    ),
    # A user asking for a human: a request verb a few words before a person noun.
    "human": (
        f"{_EN_ASK} ... {_EN_PERSON}",
        f"{_EN_PERSON} ... talk to me|speak to me|speak with me|talk with me|chat with me|call me",
        "human agent|live agent|real person|real human|actual person|actual human|representative|human being",
        f"mit ... {_DE_PERSON} ... {_DE_ASK}",
        f"{_DE_ASK} ... mit ... {_DE_PERSON}",
        "echten menschen|echter mensch|echten mitarbeiter|einen mitarbeiter|kundenberater|menschlichen mitarbeiter",
        f"{_FR_ASK} ... {_FR_PERSON}",
        "un vrai conseiller|une vraie personne|un agent humain|un etre humain|un humain|un conseiller humain",
        f"{_ES_ASK} ... {_ES_PERSON}",
        "agente humano|persona real|un representante|un humano|una persona de verdad|asesor humano",
    ),
    # A user saying the answer is wrong or useless: a reference to the reply and a verdict, in one clause,
    # or a verdict alone, or still failing after the answer.
    "wrong": (
        f"{_EN_REPLY} ~ {_EN_VERDICT}",
        f"{_DE_REPLY} ~ {_DE_VERDICT}",
        f"{_FR_REPLY} ~ {_FR_VERDICT}",
        f"{_ES_REPLY} ~ {_ES_VERDICT}",
        f"^ {_ALONE} $",
        "wrong answer|useless answer|incorrect answer|unhelpful answer|wrong information|falsche antwort"
        "|nutzlose antwort|mauvaise reponse|reponse fausse|reponse inutile|respuesta incorrecta|respuesta equivocada"
        "|respuesta inutil",
        "still ~ doesn't work|does not work|not working|broken|wrong|failing",
        "funktioniert immer noch nicht|funktioniert noch immer nicht|geht immer noch nicht|immer noch falsch",
        "ne marche toujours pas|ne fonctionne toujours pas|marche toujours pas|toujours faux",
        "sigue sin funcionar|todavia no funciona|aun no funciona|sigue fallando|sigue mal|sigue sin servir",
        "you're not listening|you are not listening|you don't understand|you do not understand|n'importe quoi",
    ),
    # Words that, just before a match or between its parts, take its meaning back (or make it hypothetical).
    "negation": (
        "no", "not", "don't", "dont", "never", "without", "no need", "if", "nicht", "kein", "keine", "ohne", "nie",
        "wenn", "falls", "ob", "pas", "sans", "jamais", "ne", "n", "si", "sin", "nunca", "ni",
    ),
    # Words allowed between the parts of a `~` pattern: verbs "to be", intensifiers, "still", "again".
    "filler": (
        "is", "s", "are", "re", "was", "were", "just", "completely", "totally", "so", "really", "absolutely", "very",
        "still", "again", "simply", "plain", "all", "also", "utterly", "entirely", "quite", "pretty", "honestly",
        "literally", "clearly", "obviously", "ist", "war", "sind", "waren", "ja", "einfach", "vollig", "total",
        "komplett", "echt", "wirklich", "leider", "schon", "wieder", "auch", "absolut", "ganz", "immer", "noch",
        "doch", "so", "halt", "eben", "mal", "jetzt", "gar", "est", "c", "etait", "vraiment", "completement",
        "totalement", "encore", "tout", "a", "fait", "juste", "absolument", "toujours", "franchement", "carrement",
        "es", "esta", "fue", "era", "estan", "son", "totalmente", "completamente", "muy", "realmente", "de", "nuevo",
        "otra", "vez", "simplemente", "todavia", "sigue", "aun", "tambien", "absolutamente",
    ),
}
