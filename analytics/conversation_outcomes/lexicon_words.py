"""The built-in outcome lexicon: English, German, French and Spanish patterns by category
(syntax and matching: `analytics.conversation_outcomes.lexicon`; the rules in words: docs/outcomes.md).

Each category is built from word classes (who is asked for, how, which verdict, which farewell)
rather than whole sentences, so that a wording is covered when its parts are: "a manager",
"your supervisor", "einen Vorgesetzten", "votre responsable", "su supervisor" are all the same
person noun after any request verb."""

from __future__ import annotations


def _alts(*groups: str) -> str:
    """Alternatives joined with `|` (each group already `|`-separated)."""
    return "|".join(g for g in groups if g)


def _each(template: str, *words: str) -> str:
    """`template` with `{}` replaced by each of `words`, as alternatives."""
    return "|".join(template.replace("{}", w) for w in words)


# --- Ask for a human ---------------------------------------------------------------------------
# Person nouns that name staff unambiguously, and weaker ones ("someone") that count only after
# a verb of talking or connecting. A verb of wanting ("I want", "ich möchte") needs a strong noun.
_EN_STAFF = ("human|humans|human being|operator|manager|supervisor|representative|rep|staff|staff member|employee"
             "|advisor|adviser|consultant|specialist|team leader|boss|live agent|human agent|real agent|support agent"
             "|customer service|customer support|support team|service team|helpdesk|help desk|real person|real human"
             "|actual person|actual human|live person|someone real|somebody real|a person|a human")
_EN_PERSON = _alts(_EN_STAFF, "person|agent|agents|someone|somebody|people|anyone|anybody|colleague|support")
_EN_TALK = ("talk|speak|chat|connect me|transfer me|transfer|transfer to|forward to|switch to|connect to|connect with"
            "|get through to|hand over to|hand off to|put me through|reach|escalate|escalate this|escalate it"
            "|hand me over|pass me|switch me|forward me|put me on|get me through|patch me through"
            # the passive asks the same: "could I be put through to somebody", "can I get transferred to someone"
            "|" + _each("be {}|get {}|been {}", "put through", "transferred", "connected", "passed", "passed on",
                        "forwarded", "switched", "handed over", "handed off", "escalated", "patched through"))
_EN_WANT = "want|need|get me|give me|prefer|request|demand|like|looking for|find me|bring me|get|have"
_EN_CALL = ("talk to me|speak to me|speak with me|talk with me|chat with me|call me|call me back|ring me|phone me"
            "|contact me|get back to me|reach out|take over|look at this|help me")

_DE_STAFF = ("mensch|menschen|echter mensch|echten menschen|mitarbeiter|mitarbeiterin|mitarbeitenden|berater|beraterin"
             "|kundenberater|kundenberaterin|sachbearbeiter|sachbearbeiterin|ansprechpartner|ansprechpartnerin"
             "|vorgesetzten|vorgesetzter|vorgesetzte|chef|chefin|teamleiter|teamleiterin|verantwortlichen|zustandigen"
             "|supervisor|fachmann|fachkraft|experten|kundendienst|kundenservice|support|operator|agenten"
             "|echte person|echten person|echter person|reale person|eine person|menschlichen")
_DE_PERSON = _alts(_DE_STAFF, "person|jemandem|jemand|jemanden|kollegen|kollegin")
_DE_TALK = ("sprechen|reden|chatten|verbinden|weiterleiten|durchstellen|verbinde|verbindest|telefonieren"
            "|zuruckrufen|anrufen|kontaktieren|melden|ubergeben|weitergeben")
_DE_WANT = ("mochte|mochten|will|wollen|brauche|brauchen|hatte gern|hatte gerne|hatten gern|verlange|wunsche"
            "|bitte um|geben sie mir|gib mir|holen sie|hol mir|besorgen sie mir|her mit")
_DE_CALL = ("zuruckrufen|anrufen|melden|kontaktieren|ubernehmen|sprechen|reden|helfen|ansehen|anschauen|kummern|prufen"
            "|durch|weiter")

_FR_STAFF = ("humain|etre humain|conseiller|conseillere|conseillers|operateur|operatrice|interlocuteur|interlocutrice"
             "|responsable|superieur|superviseur|superviseuse|manager|chef|gestionnaire|technicien|technicienne"
             "|employe|employee|collaborateur|agent humain|service client|service clientele|vraie personne"
             "|personne reelle|une personne|vrai agent")
_FR_PERSON = _alts(_FR_STAFF, "personne|agent|quelqu'un")
_FR_TALK = ("parler|passer|passez moi|passe moi|transferer|transferez moi|mettre en relation|mettez moi en relation"
            "|joindre|contacter|discuter|rappele|rappelee|recontacte|recontactee|mis en relation|mise en relation|en relation avec|en contact avec|mettre en contact|mettez moi en contact|rappeler|me rappeler|m'appeler|appeler|echanger|orienter vers|rediriger")
_FR_WANT = ("veux|voudrais|voulons|souhaite|souhaiterais|aimerais|exige|demande|besoin d'|besoin d'un|besoin d'une"
            "|donnez moi|trouvez moi|avoir|plutot")
_FR_CALL = "me rappeler|me rappelle|me contacter|m'appeler|me repondre|m'aider|me parler|reprendre"

_ES_STAFF = ("humano|ser humano|asesor|asesora|operador|operadora|representante|ejecutivo|ejecutiva|empleado|empleada"
             "|supervisor|supervisora|superior|encargado|encargada|responsable|gerente|jefe|jefa|especialista|tecnico|tecnica"
             "|agente humano|persona real|persona de verdad|una persona|alguien de verdad|alguien real"
             "|atencion al cliente|servicio al cliente")
_ES_PERSON = _alts(_ES_STAFF, "persona|agente|alguien|companero")
_ES_TALK = ("hablar|hablo|pasar|pasame|paseme|pasa|pase|comunicar|comunicarme|comunica|comunique|comuniqueme"
            "|transferir|transfiera|transfierame|contactar|chatear|llamar|llame|llamen|llameme|me llame|me llamen"
            "|atender|atienda|atiendan|me atienda|me atiendan|derivar|derive|escalar|poner en contacto|pasen|pasenme"
            "|me pasen|pongan|ponganme|me pongan|ponga|pongame|ponme|comuniquen|me comuniquen|atendiera|atendieran"
            "|llamara|llamaran|pasara|pasaran")
_ES_WANT = "quiero|quisiera|necesito|prefiero|exijo|pido|me gustaria|deme|dame|busco|queremos|necesitamos"
_ES_CALL = "me llame|me llamen|me atienda|me atiendan|me contacte|me contacten|me ayude|me hable|llamarme|contactarme"

# An adjective of realness before a staff noun, in each inflection ("a real agent", "echte Mitarbeiter",
# "einem echten Mitarbeiter", "une vraie conseillère"), or after it ("agent humain", "asesor de verdad"):
# a person asked for as opposed to the bot, wherever it stands.
_REAL_STAFF = "|".join([
    _each("{} person|{} human|{} agent|{} operator|{} employee|{} staff member|{} representative|{} advisor"
          "|{} rep|{} support agent|{} customer service agent", "real", "actual", "live", "human"),
    _each("{} mensch|{} menschen|{} mitarbeiter|{} mitarbeiterin|{} mitarbeiterinnen|{} person|{} personen"
          "|{} berater|{} beraterin|{} ansprechpartner|{} ansprechpartnerin|{} kundenberater|{} sachbearbeiter",
          "echte", "echten", "echter", "echtem", "menschliche", "menschlichen", "menschlicher", "menschlichem",
          "lebendige", "lebendigen", "lebendiger"),
    _each("{} personne|{} conseiller|{} conseillere|{} humain|{} agent|{} interlocuteur|{} interlocutrice"
          "|{} operateur|{} operatrice|{} employe|{} employee", "vrai", "vraie", "veritable"),
    _each("personne {}|conseiller {}|conseillere {}|agent {}|interlocuteur {}|operateur {}", "humain", "humaine",
          "reel", "reelle", "en chair et en os"),
    _each("persona {}|agente {}|asesor {}|asesora {}|empleado {}|empleada {}|operador {}|operadora {}"
          "|ejecutivo {}|humano {}", "real", "de verdad", "humano", "humana", "de carne y hueso"),
])

# Words for a human being as such ("is there a human?", "gibt es hier Menschen?").
_REAL = ("human|humans|human being|real person|real people|live person|live agent|real human|mensch|menschen"
         "|echte person|echten menschen|humain|humains|etre humain|vraie personne|humano|humanos|persona real"
         "|persona de verdad|personas reales")
# A user rejecting the bot is asking for a person ("not a bot", "keinen Bot", "pas un robot", "no quiero un bot").
_BOT = "bot|bots|robot|robots|chatbot|machine|maschine|maquina|ai|ki|ia|computer|ordinateur|computadora|automaton"
_NO_BOT = ("not a|not an|not with a|not with the|not this|no more|don't want a|don't want the|do not want a|stop the"
           "|rather than a|instead of a|instead of the|other than a|keinen|kein|nicht mit einem|nicht mit dem|statt"
           "|anstatt|nicht der|pas un|pas une|pas de|pas avec un|pas avec le|plutot qu'un|au lieu d'un|no un|no una"
           "|no con un|no con el|no quiero un|no quiero una|no quiero el|no quiero hablar con un|en vez de un"
           "|en lugar de un|mas que un")
# A weak person noun made staff by the team it is from: "someone from the billing team", "jemanden aus
# der Buchhaltung", "quelqu'un du service facturation", "alguien del departamento de facturación".
_EN_TEAM = ("team|department|dept|support|billing|sales|accounts|accounting|finance|office|desk|staff|service"
            "|helpdesk|management|returns|customer care|tech support|technical support")
_DE_TEAM = ("team|abteilung|kundenservice|kundendienst|support|buchhaltung|vertrieb|technik|service|fachabteilung"
            "|rechnungsabteilung|abrechnung|verwaltung|geschaftsleitung|leitung|zentrale|kundenbetreuung")
_FR_TEAM = ("equipe|service|departement|support|comptabilite|facturation|direction|assistance|sav|agence"
            "|service client|service clientele|service technique")
_ES_TEAM = ("equipo|departamento|area|soporte|facturacion|atencion al cliente|servicio|contabilidad|ventas"
            "|oficina|direccion|asistencia|servicio tecnico")
_TEAM_ASK = ("get me|give me|find me|bring me|send me|need|want|i'd like|i would like|request|demand"
             "|brauche|brauchen|mochte|mochten|will|wollen|hatte gern|hatte gerne|holen sie|hol mir|schicken sie"
             "|veux|voudrais|souhaite|aimerais|exige|demande|besoin d'|besoin de|envoyez moi|trouvez moi"
             "|quiero|quisiera|necesito|pido|exijo|me gustaria|deme|dame|busco|mandeme|envieme")
_TEAM_WEAK = ("someone|somebody|anyone|anybody|a person|a member|a colleague|someone else|somebody else"
              "|jemanden|jemand|jemandem|eine person|einen kollegen|eine kollegin|quelqu'un|une personne"
              "|un collegue|alguien|una persona|un companero|una companera")
_TEAM_FROM = "from|in|at|on|of|aus|von|vom|der|de|du|des|d'|del|de la"

# A question about what the agent is, not a request for one: "are you a human or a bot?", "vous êtes
# un humain ou un robot ?", "bist du ein Mensch?", "¿eres un humano?" (`identity`, masked for `human`).
_ID_OPEN = ("are you|you are|r u|are u|is this|is it|am i talking to|am i talking with|am i speaking to"
            "|am i speaking with|am i chatting with|am i chatting to|am i writing to|is this chat run by|is this chat with"
            "|bist du|du bist|sind sie|sie sind|ist das|spreche ich mit|rede ich mit|chatte ich mit|schreibe ich mit"
            "|vous etes|etes vous|est ce que vous etes|tu es|es tu|est ce que tu es|c'est|est ce|est ce que c'est"
            "|je parle a|je parle avec|je discute avec|je suis en train de parler a"
            "|eres|es usted|usted es|tu eres|eres tu|estoy hablando con|hablo con|estoy chateando con|es esto")
_ID_NOUN = "|".join(f"{article}{noun}" for article in ("", "a ", "an ", "ein ", "eine ", "einem ", "einer ", "un ",
                                                         "une ", "una ", "el ", "la ", "le ")
                    for noun in ("human|human being|person|real person|real human|live person|live agent|bot|robot"
                                 "|machine|ai|computer|chatbot|program|mensch|echter mensch|echten menschen|maschine"
                                 "|ki|computer|programm|humain|etre humain|vraie personne|personne reelle|ia|ordinateur"
                                 "|programme|humano|ser humano|persona|persona real|persona de verdad|maquina|programa"
                                 "|computadora").split("|"))
_ID_OR = "or|ou|oder|o|or just|ou bien|oder nur|o solo"

# A person asked for instead ("sondern eine Person", "plutôt une personne", "sino una persona").
_INSTEAD = "but|rather|instead|sondern|lieber|plutot|mais|sino|prefiero|mejor"

# --- Verdict on the answer -----------------------------------------------------------------------
# A reference to the reply, and a verdict on it.
_EN_REPLY = ("what you said|what you wrote|what you're saying|answer|answers|reply|replies|response|responses|solution|suggestion|advice|information|info|explanation"
             "|instructions|that|this|these|those|you|bot|chatbot")
_EN_VERDICT = ("wrong|useless|incorrect|not helpful|unhelpful|not right|not correct|not true|nonsense|rubbish|garbage"
               "|pointless|worthless|inaccurate|irrelevant|false|untrue|ridiculous|a joke|no help|no use|of no use|no good"
               "|not useful|not accurate|not relevant|not it|not the answer|way off|off topic|beside the point|mistaken"
               "|makes no sense|not what i asked|not what i asked for|not what i meant|not what i need|not what i needed"
               "|not what i wanted|not my question|are not listening|aren't listening|not listening|not helping"
               "|wrong again|a waste of time|waste of time|makes zero sense|zero sense|no sense|got it wrong"
               "|ve got it wrong|have it wrong|got that wrong|ve got that wrong|misunderstood|ve misunderstood"
               "|have misunderstood|outdated|out of date|has nothing to do with|have nothing to do with"
               "|nothing to do with my question|off|not the right answer|not the correct answer|not the right information"
               "|not the right info|not the right solution|not the answer i need|not the answer i wanted"
               "|misread|ve misread|misread my question|ignored my question|ve ignored my question|ignored what i"
               "|missed the point|missed my point|missed my question|ve missed the point")
# "doesn't / isn't / did not …" then what the reply failed to do: "that doesn't answer my question",
# "you're not helping", "this did not fix it".
_EN_NOT = ("doesn't|does not|didn't|did not|isn't|is not|wasn't|was not|won't|will not|don't|do not|aren't|are not"
           "|not|hasn't|has not|haven't|have not|never")
_EN_FAILED = ("help|helping|helped|helpful|answer|answering|answered|work|working|worked|solve|solved|fix|fixed"
              "|address|addressed|make sense|making sense|useful|right|correct|true|accurate|relevant|listening|listen"
              "|understand|understanding|get it|getting it|read|reading|change anything|resolve|resolved|what i asked"
              "|fit|match|relate to|apply|cover|cover it|what i was asking|what i was asking for|what i'm asking"
              "|what i am asking"
              "|what i asked for|what i need|what i meant|what i wanted|my question")
_EN_ADJ = "wrong|useless|incorrect|unhelpful|pointless|worthless|false|irrelevant|terrible|stupid|bad|inaccurate|nonsense"
_EN_NOUN = "answer|answers|reply|response|information|info|advice|suggestion|solution|explanation|instructions"

_DE_REPLY = ("antwort|antworten|losung|vorschlag|auskunft|information|informationen|erklarung|hinweis|das|dies|dieses"
             "|sie|du|ihr|bot")
_DE_VERDICT = ("falsch|nutzlos|unbrauchbar|sinnlos|quatsch|unsinn|blodsinn|schwachsinn|mist|irrelevant|nicht hilfreich"
               "|nicht richtig|nicht korrekt|nicht wahr|nicht zutreffend|keine hilfe|keine antwort|nicht meine frage"
               "|nicht das was ich gefragt habe|nicht das was ich wollte|am thema vorbei|daneben|vollig daneben"
               "|macht keinen sinn|ergibt keinen sinn|liegen falsch|liegst falsch|irren sich|irrst dich|verstehen mich nicht"
               "|versteht mich nicht|horen mir nicht zu|hat nicht geholfen|hat nicht funktioniert|hat nichts gebracht"
               "|hat nichts geandert|falsche antwort|veraltet|hat nichts mit|haben nichts mit|hat nichts damit zu tun"
               "|falsch verstanden|haben mich falsch verstanden|nichts mit meiner frage zu tun")
# Verb … negation with fillers (and "mir", "gar", "überhaupt") between: "bringt mir gar nichts".
_DE_VERB = ("hilft|helfen|hilfst|helft|stimmt|bringt|bringen|nutzt|nutzen|nutzt|passt|funktioniert|klappt|geht"
            "|beantwortet|beantworten|beantwortest|versteht|verstehen|verstehst|lost|losen|hort|horen")
# What the user asked, named as the object of a verdict: "Sie haben meine Frage nicht verstanden",
# "you ignored my question", "no ha entendido mi pregunta".
_DE_OBJ = ("meine frage|meine fragen|mein problem|mein anliegen|meine anfrage|meine nachricht|meine bitte"
           "|auf meine frage|auf meine anfrage|auf meine nachricht|was ich gefragt habe|was ich geschrieben habe")
_DE_PARTICIPLE = ("verstanden|geholfen|beantwortet|gelesen|gebracht|geandert|gelost|geantwortet|beachtet|erfasst"
                  "|kapiert|zugehort|angeschaut|angesehen")
_ES_OBJ = ("mi pregunta|mi consulta|mi problema|mi duda|mi mensaje|mi solicitud|a mi pregunta|a mi consulta"
           "|lo que pregunte|lo que le pregunte|lo que te pregunte|lo que dije|lo que le dije|lo que te dije"
           "|lo que pedi|lo que le pedi|lo que te pedi|lo que escribi")
# A past verb of reading, understanding or answering in the second person (usted or tu): Spanish drops
# the pronoun, so "no ha entendido mi pregunta" names the reply by the verb alone.
_ES_YOU_PAST = ("ha entendido|has entendido|entendio|entendiste|ha comprendido|has comprendido|comprendio"
                "|comprendiste|ha leido|has leido|leyo|leiste|ha respondido|has respondido|respondio|respondiste"
                "|ha contestado|has contestado|contesto|contestaste|ha resuelto|has resuelto|resolvio|resolviste"
                "|ha escuchado|has escuchado|escucho|escuchaste|ha atendido|has atendido|atendio|atendiste")
_DE_NEG = ("nicht|nichts|gar nicht|gar nichts|uberhaupt nicht|uberhaupt nichts|kein stuck|meine frage nicht"
           "|nicht weiter|mir nicht|mir nichts|mir nicht weiter|nicht zu|"
           + _each("{} nicht|{} gar nicht|{} uberhaupt nicht", *_DE_OBJ.split("|")))

_FR_REPLY = "ce que vous dites|ce que vous avez dit|ce que tu dis|reponse|reponses|solution|explication|information|informations|conseil|ca|c|ce|cela|ceci|vous|tu|le bot"
_FR_VERDICT = ("faux|fausse|inutile|inutiles|incorrect|incorrecte|inexact|inexacte|absurde|ridicule|nul|nulle|a cote"
               "|hors sujet|a cote de la plaque|n'importe quoi|pas bon|pas juste|pas correct|pas correcte|pas exact"
               "|pas vrai|pas utile|pas ca|pas du tout ca|pas la bonne reponse|pas ce que j'ai demande"
               "|pas ce que je demande|pas ce que je voulais|pas ce que je cherche|pas ma question|pas la question"
               "|n'a aucun sens|n'a pas de sens|trompez|vous trompez|te trompes|sert a rien|aucune aide|perime|perimee"
               "|obsolete|n'a rien a voir|mal compris|avez mal compris|as mal compris|errone|erronee|errones|erronees"
               "|vous etes trompe|vous etes trompee|etes trompe|etes trompee|t'es trompe|n'a aucun rapport|aucun rapport"
               "|ignore ma question|ignore ma demande|avez ignore ma question|as ignore ma question")
# "ne … pas" around what the reply failed to do: "vous ne m'aidez pas", "ça ne répond pas à ma question".
_FR_VERB = ("aide|aidez|aides|aident|m'aide|m'aidez|m'aides|m'aident|repond|repondez|reponds|repondent|sert|servez"
            "|me sert|m'a servi|comprenez|comprends|comprend|m'ecoutez|m'ecoutes|m'ecoute|ecoutez|marche|fonctionne"
            "|resout|regle|corrige|change|a aide|m'a aide|a marche|a fonctionne|a servi|a regle|a resolu|avez aide"
            "|m'avez aide|avez repondu|a repondu|correspond|correspondent|m'avance|avance|m'apporte|apporte|m'a avance|m'a apporte")
_FR_NEG = "pas|rien|plus|jamais|en rien|a rien|du tout|toujours pas|pas du tout|pas a ma question"
# "(ce n')est pas …": what the reply is not.
_FR_NOT = ("correct|correcte|juste|bon|bonne|exact|exacte|vrai|utile|ca|la bonne reponse|ce que j'ai demande"
           "|ce que je demande|ce que je voulais|ce que je cherche|ma question|la question|a ma question|clair"
           "|ce que je vous ai demande|ce que je vous demande|la bonne information|la bonne info|la bonne solution|le bon|la bonne|pertinent|pertinente|ce qu'il faut")

_ES_REPLY = ("respuesta|respuestas|solucion|explicacion|informacion|consejo|sugerencia|eso|esto|esa|usted|tu"
             "|ustedes|el bot|lo que dice|lo que dices")
_ES_VERDICT = ("incorrecto|incorrecta|inutil|inutiles|mal|esta mal|equivocado|equivocada|absurdo|absurda|erroneo"
               "|erronea|falso|falsa|una tonteria|tonteria|un disparate|disparate|ridiculo|ridicula|sin sentido"
               "|no sirve|no sirve de nada|no sirve para nada|no ayuda|no me ayuda|no me ayuda nada|no me sirve"
               "|no tiene sentido|no tiene ningun sentido|no es correcto|no es cierto|no funciona|no funciono"
               "|no me entiende|no me entiendes|no me escucha|se equivoca|te equivocas|se equivocan"
               "|no tiene nada que ver|nada que ver|desactualizada|desactualizado|entendio mal|ha entendido mal")
_ES_VERB = ("me ayuda|ayuda|me esta ayudando|esta ayudando|me ayudo|ayudo|me ha ayudado|ha ayudado|me sirve|sirve"
            "|sirvio|me sirvio|me ha servido|responde|contesta|respondio|contesto|ha respondido|ha contestado"
            "|funciona|funciono|ha funcionado|soluciona|soluciono|resuelve|resolvio|ha resuelto|es correcto"
            "|es correcta|es cierto|es verdad|es lo que pregunte|es lo que pedi|es lo que necesito|es lo que quiero"
            "|era lo que pregunte|es eso|tiene sentido|me entiende|entiende|me entiendes|me escucha|escucha"
            "|me escuchas|esta bien|es asi|es mi pregunta|me aclara|aclara|me esta entendiendo|esta entendiendo"
            "|me estas entendiendo|me esta escuchando|me estas escuchando|me estas ayudando|esta respondiendo"
            "|me esta sirviendo|es eso lo que pregunte|es eso lo que pedi|es lo que he preguntado"
            "|ha respondido a mi pregunta|ha contestado mi pregunta|ha contestado a mi pregunta|responde a mi pregunta"
            "|contesta a mi pregunta|contesta mi pregunta|respondio a mi pregunta|contesto mi pregunta"
            "|me ha servido de nada|ha servido de nada|me sirvio de nada|sirvio de nada|sirve de nada|me sirve de nada"
            "|me ha entendido|me has entendido|me entendio|me entendiste|ha entendido|has entendido|entendio"
            "|me ha escuchado|me has escuchado|me escucho|ha leido|has leido|leyo"
            "|me ayudo en nada|me ha ayudado en nada")
# A verdict said on its own: the whole clause, with an intensifier at most.
_ALONE_EN = ("way off|off the mark|off topic|wrong|useless|incorrect|nonsense|rubbish|unhelpful|not helpful|wrong answer"
             "|not what i asked|nope wrong|no wrong|not correct|not right|false|ridiculous|pointless|what nonsense"
             "|what rubbish|not it|no help|makes no sense")
_ALONE_DE = ("daneben|voll daneben|am thema vorbei|falsch|nutzlos|quatsch|unsinn|blodsinn|schwachsinn|so ein quatsch"
             "|so ein unsinn|nicht richtig|stimmt nicht|macht keinen sinn|ergibt keinen sinn")
_ALONE_FR = ("hors sujet|a cote de la plaque|faux|inutile|nul|n'importe quoi|pas correct|pas ca|pas bon|pas juste|ridicule"
             "|absurde|n'a aucun sens")
_ALONE_ES = ("fuera de lugar|nada que ver|incorrecto|inutil|mal|no sirve|tonteria|que tonteria|disparate|que disparate"
             "|no es correcto|absurdo|no tiene sentido")
_ALONE_BASE = _alts(_ALONE_EN, _ALONE_DE, _ALONE_FR, _ALONE_ES)
# Before a verdict alone, the verb "to be" with its subject dropped ("Está mal", "Ist falsch"), with a
# pronoun subject ("It's wrong", "Es ist falsch", "Il est faux") or a word of totality ("Todo está mal",
# "Everything is wrong", "Alles falsch", "Tout est faux"), per language: the subject is what was just said,
# as in the verdict alone. Elsewhere "it"/"es"/"il" are no reference: "Es funktioniert nicht" and "It's not
# working" are about the product ("No está mal" is praise).
_ALONE_SUBJECT = {
    _ALONE_EN: "everything|everything is|everything s|everything was|all of it is|all of this is|all of that is"
               "|it is|it s|its|it was",
    _ALONE_DE: "ist|war|alles|alles ist|ist alles|alles war|war alles|es ist|es war|ist es|war es",
    _ALONE_FR: "est|etait|tout|tout est|tout etait|tout ca est|il est|il etait",
    _ALONE_ES: "esta|es|estaba|era|fue|todo|todo esta|esta todo|todo es|es todo|todo estaba|estaba todo|todo era",
}
_INTENSIFY = ("completely|totally|so|all|just|still|again|utterly|plain|vollig|total|komplett|leider|schon wieder"
              "|wieder|immer noch|completement|totalement|archi|encore|toujours|totalmente|completamente|muy|otra vez"
              "|de nuevo|sigue")
_ALONE_POST = ("", " again", " once again", " as usual", " still", " wieder", " encore", " otra vez", " de nuevo")


def _alone(words: str) -> str:
    """The verdicts `words` said alone: each, an intensifier before it, "again" after it."""
    return "|".join(dict.fromkeys(f"{pre}{word}{post}" for word in words.split("|")
                                  for pre in ("", *(i + " " for i in _INTENSIFY.split("|"))) for post in _ALONE_POST))


_ALONE = _alone(_ALONE_BASE)

# --- Closing ---------------------------------------------------------------------------------------
# Thanks, farewells, wishes and "that's all / it works" forms: any of them makes a short message
# without a question a closing, unless a contrast follows it ("thanks, but …": `contrast`).
_THANKS = ("thanks|thank you|thank u|thanks a lot|thank you so much|many thanks|thx|ty|tyvm|cheers|much appreciated"
           "|appreciate it|appreciate your help|appreciate the help|i appreciate it|appreciated|much obliged|grateful"
           "|danke|dankeschon|vielen dank|herzlichen dank|besten dank|tausend dank|lieben dank|schonen dank|dank dir"
           "|dank ihnen|danke vielmals|ich danke ihnen|ich danke dir|bedanke mich|merci|merci beaucoup|merci bien"
           "|mille mercis|merci infiniment|grand merci|je vous remercie|je te remercie|remerciements|gracias"
           "|muchas gracias|mil gracias|muchisimas gracias|se agradece|le agradezco|te agradezco|agradecido"
           "|agradecida|muy amable|gracias por todo")
_BYE = ("bye|goodbye|good bye|bye bye|see you|see ya|take care|talk soon|catch you later|ciao|good night|goodnight"
        "|tschuss|tschau|auf wiedersehen|wiedersehen|bis dann|bis bald|bis spater|bis zum nachsten mal|machs gut"
        "|mach's gut|gute nacht|servus|adieu|au revoir|a bientot|a plus|a plus tard|a la prochaine|a tout a l'heure|bonne nuit|bonne continuation"
        "|adios|hasta luego|hasta pronto|hasta la proxima|hasta manana|nos vemos|chao|chau|cuidese|cuidate"
        "|que le vaya bien|que te vaya bien")
_WISH_EN = "good|nice|great|lovely|wonderful|pleasant|fantastic|excellent|beautiful|happy|good rest of the"
_WISH_EN_WHEN = "day|evening|weekend|night|one|afternoon|morning|week|holiday|holidays|rest of your day|rest of the day"
_WISH = ("enjoy your day|enjoy your evening|enjoy your weekend|enjoy the rest of your day"
         "|bonne journee|bonne soiree|bonne nuit|bon week end|bon weekend|bonne fin de journee|bonne fin de soiree"
         "|bonne apres midi|bonne semaine|bonne fin de semaine|belle journee|belle soiree|excellente journee"
         "|excellente soiree|agreable journee|agreable soiree|bon dimanche|bonne fin d'apres midi")
_DE_WISH = "schonen|schones|schone|angenehmen|angenehmes|erholsamen|erholsames|gutes"
_DE_WISH_WHEN = "tag|abend|wochenende|nachmittag|feierabend|sonntag|resttag|tag noch|abend noch|rest des tages"
_ES_WISH = "que tenga|que tengas|que tengan|que pase|que pases|que pasen|que disfrute|que disfrutes"
_ES_WISH_WHEN = "dia|tarde|noche|fin de semana|finde|jornada|resto del dia"
_DONE = ("that's all|that is all|that's everything|that is everything|that'll be all|that will be all|all i needed"
         "|everything i needed|no more questions|no further questions|all set|i'm all set"
         "|all sorted|sorted|all good|all done|we're done|we are done|i'm good now|problem solved|issue solved"
         "|issue resolved|that solved it|that fixed it|that did it|that did the trick|that worked|that helped"
         "|that helps|very helpful|super helpful|really helpful|you've been very helpful|you've been a great help"
         "|great help|big help|you're a star|helps a lot|hilft mir sehr|das hilft mir|hat mir sehr geholfen"
         "|ca m'aide beaucoup|ca m'aide|me ayuda mucho|got it working"
         "|das wars|das war's|das war es|das war alles|das ist alles|mehr brauche ich nicht|brauche nichts mehr|brauche nichts weiter|alles erledigt|alles geklappt|hat geklappt"
         "|hat funktioniert|problem gelost|alles klar"
         "|alles gut|passt so|sehr hilfreich|super geholfen|hat mir geholfen|sie haben mir geholfen"
         "|c'est tout|ce sera tout|c'est tout ce qu'il me fallait|besoin de rien d'autre|besoin de rien de plus"
         "|c'est regle|c'est resolu|probleme resolu|probleme regle|ca marche maintenant|ca fonctionne maintenant"
         "|c'est bon|tout est bon|tout est ok|ca a marche|ca a fonctionne|c'est parfait"
         "|parfait merci|nickel|impeccable|ca m'a aide|vous m'avez aide|tres utile|super utile"
         "|eso es todo|es todo|eso era todo|ya esta todo|ya esta resuelto|ya esta solucionado"
         "|no necesito nada mas|todo listo|problema resuelto|ya funciona|funciona perfecto"
         "|muy util|perfecto gracias|todo claro|todo bien"
         # satisfaction said as a negated comparative ("I couldn't be happier"; `_IDIOM`)
         "|" + _each("{} be happier|{} be more pleased|{} be more satisfied|{} be more grateful|{} ask for more"
                     "|{} have asked for more|{} ask for better|{} have asked for better|{} have been better"
                     "|{} thank you enough", "couldn't", "could not", "can't", "cannot")
         + "|konnte nicht glucklicher sein|konnte nicht zufriedener sein|konnten nicht zufriedener sein"
         "|konnte nicht zufriedener|konnte nicht glucklicher|kann ihnen nicht genug danken|besser geht es nicht"
         "|besser geht's nicht|ne pourrais pas etre plus satisfait|ne pourrais pas etre plus satisfaite"
         "|ne pourrais pas etre plus heureux|ne pourrais pas etre plus heureuse|ne pourrais pas etre plus content"
         "|ne pourrais pas etre plus contente|n'aurais pas pu rever mieux|on ne peut mieux"
         "|ne saurais trop vous remercier|no podria estar mas contento|no podria estar mas contenta"
         "|no podria estar mas feliz|no podria estar mas satisfecho|no podria estar mas satisfecha"
         "|no puedo pedir mas|no podria pedir mas|no podria pedir nada mejor")

_NOTHING_ELSE = ("nothing else|nothing more|nothing further|sonst nichts|nichts weiter|nichts mehr|mehr nicht"
                 "|rien d'autre|rien de plus|nada mas|nada mas gracias|nada mas por ahora")

# A thanks for what is still to come, said while waiting for an answer: "thanks in advance", "Danke im
# Voraus", "merci d'avance", "gracias de antemano", and French "merci de" + an infinitive, a polite
# request ("Merci de valider la commande" asks to validate it). None is a closing (`pending`).
_ADVANCE = ("in advance|ahead of time|beforehand|im voraus|vorab|vorweg|schon mal|schon einmal|d'avance|par avance"
            "|a l'avance|por adelantado|de antemano|por anticipado|anticipadamente|anticipadas")
_FR_REQUEST = ("valider|confirmer|verifier|envoyer|renvoyer|transmettre|rappeler|recontacter|contacter|traiter"
               "|annuler|rembourser|modifier|corriger|changer|supprimer|effectuer|faire|proceder|regarder|noter"
               "|prendre|repondre|indiquer|dire|preciser|communiquer|informer|tenir|revenir|joindre|fournir|remplir"
               "|ajouter|retirer|mettre|envoyer|expedier|livrer|activer|desactiver|reactiver|debloquer|resilier"
               "|reinitialiser|examiner|etudier|accepter|approuver|signer|relancer|patienter|consulter|verser"
               "|creer|ouvrir|fermer|cloturer|reporter|planifier|programmer|appeler|ecrire|laisser|garder|m'envoyer"
               "|m'indiquer|m'informer|m'appeler|m'ecrire|m'aider|m'expliquer|m'excuser|expliquer|aider|bien vouloir")
_FR_OBJECT = "me|m'|nous|le|la|les|l'|lui|leur|y|en|bien|vite|rapidement|au plus vite"

# --- Give-up ---------------------------------------------------------------------------------------
_EN_CANT = ("can't|cannot|can not|am unable to|'m unable to|are unable to|am not able to|'m not able to"
            "|are not able to|won't be able to|will not be able to|am not in a position to|'m not in a position to"
            "|have no way to|don't have a way to|am not allowed to|'m not allowed to|am not authorized to"
            "|'m not authorized to|don't have the ability to|do not have the ability to")
_EN_DO = ("help|assist|do|complete|process|find|access|fix|resolve|retrieve|change|cancel|proceed|finish|look up"
          "|handle|locate|update|issue|perform|carry out|go further|continue|go on|get|reach|connect|load|open"
          "|pull up|see|view|confirm|verify|read|fetch|check|make|place|apply|book|send|create|reset|track|refund"
          "|modify|edit|remove|delete|add|identify|sort out|figure out|work out|recover|restore|submit|finalize"
          "|finalise|arrange|provide|get through|move forward|take this further|go any further|do anything")
_EN_SYSTEM = ("system|service|server|database|lookup|search|request|query|connection|tool|backend|api|site"
              "|billing system|order system")
_EN_DOWN = ("failed|has failed|is unavailable|isn't available|is not available|is down|isn't responding"
            "|is not responding|not responding|timed out|has timed out|is not working|isn't working|is offline"
            "|returned an error|keeps failing|didn't respond|did not respond|not reachable|is unreachable")

# Out of the assistant's hands: a place outside (or not within) its reach, power or control.
_EN_OUTSIDE = ("out of|beyond|outside|outside of|not in|not within|isn't in|isn't within|is not in|is not within"
               "|not part of|isn't part of")
_EN_REACH = "hands|control|power|remit|reach|authority|scope|competence|capabilities|abilities|responsibility|gift"
_DE_OUTSIDE = "nicht in|nicht im|ausserhalb|jenseits|nicht bei|entzieht sich|nicht mehr in"
_DE_REACH = ("hand|hande|handen|macht|moglichkeiten|befugnis|befugnisse|befugnissen|kompetenz|kompetenzen"
             "|zustandigkeit|zustandigkeitsbereich|kontrolle|einflussbereich|bereich|einfluss|verantwortung")
_FR_OUTSIDE = ("pas entre|plus entre|hors de|au dela de|en dehors de|pas de|pas du|pas dans|pas en|ne releve pas de"
               "|ne releve pas du|ne depend pas de|ne depend plus de|depasse")
_FR_REACH = ("mains|main|controle|pouvoir|pouvoirs|ressort|competence|competences|possibilites|moyens|portee"
             "|attributions|domaine|responsabilite")
_ES_OUTSIDE = ("no esta en|no esta a|no esta bajo|no estan en|no esta dentro de|fuera de|fuera del|escapa a"
               "|escapa de|se escapa de|no entra en|mas alla de|no es de|no depende de|excede")
_ES_REACH = ("manos|mano|alcance|control|poder|competencia|competencias|facultades|posibilidades|atribuciones"
             "|funciones|responsabilidad|ambito")

# --- Idioms ----------------------------------------------------------------------------------------
# A negated comparative or "can only" says the opposite of its words: "I couldn't be happier" is very
# happy, "you couldn't be more wrong" very wrong, "je ne peux que vous remercier" only thanks. Its
# words are read as one filler word by the other rules (`lexicon.IDIOM_MASKED`).
_EN_COULDNT = "couldn't|could not|can't|cannot|can not|could never|couldn't possibly|could not possibly"
_EN_COMPARATIVE = ("happier|better|more|gladder|prouder|nicer|easier|simpler|smoother|quicker|faster|clearer"
                   "|more pleased|more grateful|more thankful|more delighted|more satisfied")
_DE_COULDNT = "konnte|konnten|kann|konnen|hatte|hatten|ware|waren"
_DE_COMPARATIVE = ("glucklicher|zufriedener|froher|besser|dankbarer|begeisterter|schoner|einfacher|erfreuter"
                   "|glucklicher sein|zufriedener sein|besser sein|besser laufen|besser machen")
_IDIOM = (
    f"{_EN_COULDNT} ~ be|have been|feel|get|be any|have been any|possibly be ~ {_EN_COMPARATIVE}",
    f"{_EN_COULDNT} ~ agree more|ask for more|have asked for more|ask for better|have asked for better"
    "|wish for more|have wished for more|have said it better|say it better|have put it better|put it better"
    "|thank you enough|thank you more|wait|help but|help noticing|help thinking|help feeling",
    f"{_DE_COULDNT} ~ nicht|kaum|gar nicht|uberhaupt nicht|nie ~ {_DE_COMPARATIVE}",
    "kann|konnen|konnte ~ nicht ~ beklagen|beschweren|klagen",
    "kann|konnen|konnte ... nicht genug|gar nicht genug|nie genug|kaum genug ~ danken",
    "ne peux|ne pouvons|ne pourrais|ne pourrions|ne peut|ne pouvait ~ que|qu'",
    "ne pourrais|ne pourrions|ne pourrait|n'aurais|n'aurions|n'aurait ~ pas|jamais ~ etre plus|etre mieux|pu etre plus"
    "|pu rever mieux|rever mieux|esperer mieux|pu esperer mieux|demander mieux|pu demander mieux|demander plus"
    "|pu demander plus",
    "on ne peut mieux|on ne peut plus|ne saurais trop|ne saurions trop|ne saurais assez|ne saurions assez",
    "no puedo|no podria|no podemos|no podriamos|no pude|no hubiera podido|no habria podido|no se puede|no se podria"
    " ~ estar mas|ser mas|sentirme mas|pedir mas|pedir nada mejor|pedir algo mejor|haber pedido|estar mejor"
    "|quejarme|quejarnos|mas que|menos que|estar mas de acuerdo|agradecerle lo suficiente|agradecerte lo suficiente"
    "|agradecerles lo suficiente|estar mas contento|estar mas contenta|estar mas feliz|estar mas satisfecho",
)

BUILT_IN: dict[str, tuple[str, ...]] = {
    # A user's message ending the conversation well (also needs to be short: `outcomes.signals`).
    "closing": (
        _THANKS, _BYE, _WISH,
        f"have a|have an ... {_WISH_EN} ... {_WISH_EN_WHEN}",
        f"{_DE_WISH} ~ {_DE_WISH_WHEN} $", f"einen|ein ... {_DE_WISH} ... {_DE_WISH_WHEN}",
        f"{_ES_WISH} ... {_ES_WISH_WHEN}",
        _DONE,
        # "nothing else" and its kin close only opening their clause ("Nothing else, thanks") or after a verb
        # of needing or wanting ("I need nothing else"): "The letter said … and nothing else" reports.
        f"^ {_NOTHING_ELSE}",
        f"need|needed|want|require|brauche|brauchen|will|mochte|besoin de|veux|faut|necesito|quiero|hace falta"
        f" ~ {_NOTHING_ELSE}",
        "works now|working now|it works now|funktioniert jetzt|geht jetzt|klappt jetzt|erledigt|ca marche maintenant $",
        "^ passt|ca marche|ca fonctionne|ya esta|listo|ahora funciona|ya funciona $",
        "^ me sirvio|me ha servido|me ayudo|me ha ayudado|me ayudo mucho",
    ),
    # An assistant giving up or apologising for failing: first person + inability (+ what it could not do).
    "give_up": (
        "i|we ... couldn't|could not|wasn't able to|was not able to|weren't able to|were unable to|was unable to"
        "|failed to|did not manage to|didn't manage to|didn't find|did not find|found no|could find no"
        "|haven't been able to|have not been able to|'ve not been able to|have been unable to|'ve been unable to",
        f"i|we ... {_EN_CANT} ... {_EN_DO}",
        "i can't help|i cannot help|i'm unable to|i am unable to|i'm not able to|i am not able to",
        "i|we ... don't have|do not have|have no|lack|no longer have ... access|permission|permissions|the rights"
        "|a way|the ability|the tools",
        "i|we ... have to|need to|must|'ll have to|will have to|am forced to|'m forced to ... stop|end|give up"
        "|leave it|pause|abort",
            "i m|i am|we re|we are ~ stuck|out of options",
        "i|we ~ give up",
        "there s|there is ~ nothing|nothing more|nothing else ~ i|we ~ can do",
        "nothing else i can do|nothing more i can do|beyond what i can do|no way for me to|not something i can do|not able to help|unable to help"
        "|try again later|try again in a few|please try later|try later|out of options|no other options"
        "|no further options",
        "having|experiencing|facing|wir haben|nous rencontrons|nous avons|tenemos|estamos teniendo ... technical problems"
        "|technical issues|technical difficulties|technische probleme|technische schwierigkeiten|technische storung"
        "|probleme technique|problemes techniques|difficultes techniques|problemas tecnicos|dificultades tecnicas",
        "something went wrong|something's gone wrong|something has gone wrong|technical error|technischer fehler"
        "|erreur technique|error tecnico|m'empeche de|nous empeche de|me impide|nos impide|hindert mich"
        "|an error occurred|an error has occurred|ran into an error|ran into a problem",
        f"the|our|my ... {_EN_SYSTEM} ~ {_EN_DOWN}",
        f"{_EN_OUTSIDE} ~ my|our ~ {_EN_REACH}",
        "not up to me|isn't up to me|not up to us|isn't up to us|not my call|not my decision|not something i control",
        f"{_DE_OUTSIDE} ~ meiner|meinen|meinem|meine|unserer|unseren|unserem|unsere ~ {_DE_REACH}",
        "liegt nicht bei mir|liegt nicht bei uns|habe ich keinen einfluss|haben wir keinen einfluss"
        "|darauf habe ich keinen|darauf haben wir keinen",
        f"{_FR_OUTSIDE} ~ mes|nos|mon|ma|notre ~ {_FR_REACH}",
        "ne depend pas de moi|ne depend pas de nous|ne depend plus de moi|ne depend plus de nous",
        f"{_ES_OUTSIDE} ~ mis|mi|nuestras|nuestra|nuestro|nuestros ~ {_ES_REACH}",
        "no depende de mi|no depende de nosotros|no esta en mi mano|no esta en nuestra mano",
        "sorry|unfortunately|afraid|apologies|regret|regrettably ... not possible|isn't possible|is not possible"
        "|unavailable|not available|failed|went wrong",
        "ich|wir ... kann|konnte|konnen|konnten|war|waren ... nicht|kein|keine|keinen|nichts|nicht in der lage",
        "kann|konnte|konnen|konnten ... ich|wir ... nicht|kein|keine|keinen|nichts",
        "kann|konnte ... nichts ... tun|machen|unternehmen|erreichen",
        "ich|wir ... habe|haben|hatte|hatten ... keinen zugriff|keinen zugang|keine berechtigung|keine berechtigungen"
        "|keine moglichkeit|keine rechte|nichts gefunden|keine daten|keine informationen|keine bestellung",
        "ich|wir ... habe|haben|hatte|hatten ... nicht|keine|keinen|nichts ... gefunden|finden|erreicht|abrufen"
        "|bearbeiten|andern",
        "ich|wir ... finde|finden|fand|fanden ... nicht|kein|keine|keinen|nichts",
        "habe|haben|hatte|hatten ... ich|wir ... keine berechtigung|keinen zugriff|keinen zugang|keine rechte"
        "|keine moglichkeit",
        # particles between the parts of a stop phrase ("Ich komme hier leider nicht weiter"): `filler`
        "komme|kommen|komme ich|kommen wir ~ nicht weiter",
        "muss|mussen ~ abbrechen|aufhoren|aufgeben",
        "bin|sind ~ nicht befugt",
        "ist ~ mir|uns ~ nicht moglich",
        "mir nicht moglich|uns nicht moglich|versuchen sie es spater|spater noch einmal|spater erneut|zu einem spateren zeitpunkt",
        "system|abfrage|suche|anfrage|verbindung|dienst|server|service|datenbank ... fehlgeschlagen|nicht erreichbar"
        "|nicht verfugbar|ausgefallen|gestort|antwortet nicht|reagiert nicht|funktioniert nicht",
        "system|abfrage|suche|anfrage|verbindung|dienst|server|service|datenbank ~ antwortet|reagiert|funktioniert"
        "|lauft ~ nicht",
        "leider nicht moglich|nicht in der lage|etwas ist schiefgelaufen|ist etwas schiefgelaufen"
        "|ein fehler ist aufgetreten|ist ein fehler aufgetreten|es tut mir leid ich konnte nicht|ist fehlgeschlagen"
        "|schlug fehl",
        "je|nous ... ne peux|ne pouvons|ne pourrai|ne pourrons|n'ai pas pu|n'avons pas pu|n'ai pas reussi"
        "|n'avons pas reussi|n'arrive pas|n'arrivons pas|ne parviens pas|ne suis pas en mesure|ne sommes pas en mesure"
        "|ne trouve pas|ne trouvons pas|ne trouve aucun|ne trouve aucune|ne l'ai pas|ne les ai pas|ne la trouve pas"
        "|ne le trouve pas|ne vois pas|ne vois aucun|ne vois aucune|ne suis pas autorise|ne dispose pas|ne sais pas",
        "je|nous ... n'ai|n'avons ... pas pu|pas reussi|pas ete en mesure|pas trouve|rien trouve|trouve aucun"
        "|trouve aucune|pas acces|aucun acces|pas la possibilite|pas l'autorisation|pas les droits|pas localise"
        "|pas les autorisations|aucune information",
        "impossible de|une erreur s'est produite|une erreur est survenue|il m'est impossible|il nous est impossible"
        "|n'est pas possible|pas possible pour le moment|de ne pas pouvoir|de ne pas avoir pu|de ne pas etre en mesure"
        "|reessayer plus tard|reessayez plus tard|veuillez reessayer",
        "je|nous ~ dois|devons ~ m'arreter|nous arreter|arreter|abandonner",
        "je suis|nous sommes ~ bloque|bloquee|bloques|bloquees|coince|coincee|coinces",
        "estoy|estamos ~ bloqueado|bloqueada|bloqueados|atascado|atascada|atascados",
        "systeme|recherche|requete|service|serveur|connexion|base de donnees ... ne repond pas|indisponible"
        "|n'est pas disponible|a echoue|en panne|ne fonctionne pas|n'a pas repondu|est hors service",
        _each("no {}encontre|no {}encuentro|no {}he encontrado|no {}hemos encontrado|no {}encontramos"
              "|no {}localice|no {}localizo|no {}he podido encontrar|no {}pude encontrar", "", "lo ", "la ", "los ",
              "las ", "le "),
        "no puedo|no pude|no he podido|no podemos|no pudimos|no hemos podido|no me es posible|no me fue posible"
        "|no es posible|no fue posible|no logre|no consegui|no he logrado|no he conseguido|ocurrio un error"
        "|se produjo un error|hubo un error|ha ocurrido un error|no logro|no consigo|no tengo acceso|no tenemos acceso"
        "|no tengo permiso|no tengo permisos|no tengo la posibilidad|no dispongo de|no he sido capaz|no fui capaz"
        "|no soy capaz|no somos capaces|no estoy en condiciones|me es imposible|nos es imposible|no se puede"
        "|no poder ayudar|de no poder|no poder|no poderle ayudar"
        "|intentelo mas tarde|intente mas tarde|vuelva a intentarlo mas tarde|pruebe mas tarde|intentelo de nuevo mas tarde",
        "sistema|busqueda|consulta|servicio|servidor|conexion|base de datos ... no responde|no esta disponible"
        "|no disponible|fallo|ha fallado|caido|no funciona|no respondio",
    ),
    # A user asking for a human: a request verb a few words before a person noun.
    "human": (
        f"{_EN_TALK} ... {_EN_PERSON}",
        f"{_EN_WANT} ... {_EN_STAFF}",
        f"{_EN_PERSON} ... {_EN_CALL}",
        f"{_EN_STAFF} ... talk to|speak to|talk with|speak with|chat with|chat to",
        f"is there|are there|gibt es|y a t il|il y a|hay ... {_REAL}",
        "human agent|live agent|real person|real human|actual person|actual human|representative|human being"
        "|live person|your supervisor|call me back|have someone call me|escalate this|escalate my case|escalate it",
        _REAL_STAFF,
        "^ " + _each("{}|{} please|please {}|{} now|{} bitte|bitte {}|{} s'il vous plait|{} svp|{} por favor",
                     *(f"{article}{noun}" for article in ("", "a ", "an ", "your ", "einen ", "ein ", "ihren ", "un ",
                                                          "une ", "votre ", "una ", "su ")
                       for noun in ("operator", "agent", "human", "person", "manager", "supervisor", "representative",
                                    "mensch", "menschen", "mitarbeiter", "vorgesetzten", "humain", "conseiller",
                                    "operateur", "responsable", "humano", "asesor", "operador", "agente", "persona",
                                    "supervisor", "real person", "real human", "echten menschen", "echter mensch",
                                    "vrai humain", "vraie personne", "humano de verdad", "persona real"))) + " $",
        f"mit|an|zu ... {_DE_PERSON} ... {_DE_TALK}",
        f"{_DE_TALK} ... mit|an|zu ... {_DE_PERSON}",
        f"{_DE_WANT} ... {_DE_STAFF}",
        f"{_DE_STAFF} ... {_DE_CALL}",
        "echten menschen|echter mensch|echten mitarbeiter|einen mitarbeiter|einen kundenberater|menschlichen mitarbeiter"
        "|echten berater|ihren vorgesetzten|ihrem vorgesetzten|ihren chef|eine echte person|rufen sie mich zuruck"
        "|ruf mich zuruck|rufen sie mich an|ruft mich an|rappelez moi|rappelle moi|llameme|llamame|llamenme",
        f"{_FR_TALK} ... {_FR_PERSON}",
        f"{_FR_WANT} ... {_FR_STAFF}",
        f"{_FR_STAFF} ... {_FR_CALL}",
        "un vrai conseiller|une vraie personne|un agent humain|un etre humain|un humain|un conseiller humain"
        "|votre responsable|votre superieur|votre superviseur",
        f"{_ES_TALK} ... {_ES_PERSON}",
        f"{_ES_WANT} ... {_ES_STAFF}",
        f"{_ES_STAFF} ... {_ES_CALL}",
        "agente humano|persona real|un representante|un humano|una persona de verdad|asesor humano|su supervisor"
        "|su jefe|su encargado|alguien de verdad",
        f"{_NO_BOT} ~ {_BOT}",
        f"{_TEAM_ASK} ... {_TEAM_WEAK} ~ {_TEAM_FROM} ... {_EN_TEAM}|{_DE_TEAM}|{_FR_TEAM}|{_ES_TEAM}",
        f"{_INSTEAD} ... {_EN_STAFF}|{_DE_STAFF}|{_FR_STAFF}|{_ES_STAFF}",
    ),
    # A user saying the answer is wrong or useless: a reference to the reply and a verdict, in one clause,
    # or a verdict alone, or still failing after the answer.
    "wrong": (
        f"{_EN_REPLY} ~ {_EN_VERDICT}",
        f"answer|answers|reply|replies|response|solution|suggestion|advice|information|info|explanation|that|this"
        f" ~ {_EN_NOT} ~ {_EN_FAILED}",
        f"you ~ {_EN_NOT} ~ help|helping|helpful|listening|listen|listened|understand|understanding|understood"
        f"|answering|answer|answered|address|addressed|look at|looked at|even read|even look at"
        f"|get it|getting it|reading|read|making sense|make sense|useful|right|correct",
        _each("{}", *(f"{a} {n}" for a in _EN_ADJ.split("|") for n in _EN_NOUN.split("|"))),
        f"{_DE_REPLY} ~ {_DE_VERDICT}",
        f"{_DE_REPLY} ~ {_DE_VERB} ~ {_DE_NEG}",
        f"{_DE_REPLY} ~ haben|hat|habt|hast ~ {_DE_OBJ} ~ nicht|nichts|falsch|kaum|nie|nicht einmal ~ {_DE_PARTICIPLE}",
        f"{_DE_REPLY} ~ haben|hat|habt|hast ~ {_DE_OBJ} ~ missverstanden|ignoriert|ubersehen|ubergangen",
        f"^ haben|hat|habt|hast ~ {_DE_REPLY} ~ {_DE_OBJ} ~ nicht|nichts|falsch|kaum|nie|nicht einmal ~ {_DE_PARTICIPLE}",
        f"{_DE_REPLY} ~ haben|hat|habt|hast ~ nicht|nichts|gar nicht|uberhaupt nicht ~ verstanden|geholfen|beantwortet"
        f"|gelesen|gebracht|geandert|gelost",
        f"^ {_DE_VERB} ~ {_DE_NEG} $",
        f"{_FR_REPLY} ~ {_FR_VERDICT}",
        f"{_FR_REPLY} ~ ne|n' ~ {_FR_VERB} ~ {_FR_NEG}",
        f"{_FR_REPLY} ~ ne|n' ~ est|etait|sont ~ pas|toujours pas|plus ~ {_FR_NOT}",
        f"{_FR_REPLY} ~ n' ~ avez|as|a|ont ~ pas|rien|jamais|toujours pas ~ compris|repondu|aide|lu|ecoute|resolu"
        f"|bien compris|bien lu|bien saisi|saisi|vraiment compris|vraiment lu"
        f"|regle|corrige|tenu compte|servi|change|apporte|donne",
        f"{_FR_REPLY} ~ est|etait|sont|{_FR_VERB} ~ pas|toujours pas|plus ~ {_FR_NOT}",
        f"{_ES_REPLY} ~ {_ES_VERDICT}",
        f"{_ES_REPLY} ~ no|nunca|tampoco ~ {_ES_VERB}",
        f"^ no|nunca|tampoco ~ {_ES_VERB} $",
        f"no|nunca|todavia no|aun no|tampoco ~ {_ES_YOU_PAST} ~ {_ES_OBJ}",
        f"^ {_ALONE} $",
        *(f"^ {subject} ~ {_alone(words)} $" for words, subject in _ALONE_SUBJECT.items()),
        "respuesta|solucion|informacion|explicacion|reponse|solution|information|explication|antwort|losung|auskunft"
        " ... inutil|incorrecta|equivocada|erronea|absurda|inutile|fausse|incorrecte|absurde|nulle|falsch|nutzlos"
        "|unbrauchbar|sinnlos",
        "wrong answer|useless answer|incorrect answer|unhelpful answer|wrong information|falsche antwort"
        "|nutzlose antwort|falsche auskunft|mauvaise reponse|reponse fausse|reponse inutile|reponse incorrecte"
        "|respuesta incorrecta|respuesta equivocada|respuesta inutil|respuesta erronea",
        "still ~ doesn't work|does not work|not working|broken|wrong|failing|not fixed|the same|not right",
        "funktioniert immer noch nicht|funktioniert noch immer nicht|geht immer noch nicht|immer noch falsch"
        "|wieder falsch|schon wieder falsch|noch immer falsch|stimmt immer noch nicht|stimmt noch immer nicht"
        "|stimmt wieder nicht",
        "ne marche toujours pas|ne fonctionne toujours pas|marche toujours pas|toujours faux|encore faux"
        "|toujours pas bon|toujours pas correct|toujours pas ca",
        "sigue|sigues|todavia|aun ~ sin funcionar|sin servir|sin resolver|fallando|mal|incorrecto|incorrecta"
        "|equivocado|igual|estando mal|siendo incorrecto|sin responder",
        "you're not listening|you are not listening|you don't understand|you do not understand|n'importe quoi"
        "|thanks for nothing|danke fur nichts|merci pour rien|gracias por nada|se ha equivocado|se equivoco"
        "|te has equivocado|te equivocaste|me ha entendido mal|me entendio mal|vous vous etes trompe|tu t'es trompe",
        "thanks|thank you|thank u|danke|merci|gracias ... for nothing|fur nichts|pour rien|por nada",
    ),
    # A question about what the agent is ("are you a human or a bot?"): one filler word to `human`.
    "identity": (
        f"^ {_ID_OPEN} ~ {_ID_NOUN}",
        f"^ {_ID_OPEN} ~ {_ID_NOUN} ~ {_ID_OR} ~ {_ID_NOUN}",
    ),
    # A thanks for what is still to come: the user waits for an answer, so the message is no closing.
    "pending": (
        f"{_THANKS} ~ {_ADVANCE}",
        f"{_ADVANCE} ~ {_THANKS}",
        f"^ {_ADVANCE} $",
        f"merci|merci bien|merci beaucoup|je vous remercie|je te remercie|nous vous remercions ~ de|d' ~ {_FR_REQUEST}",
        f"merci|merci bien|merci beaucoup|je vous remercie|je te remercie|nous vous remercions ~ de|d' ~ {_FR_OBJECT}"
        f" ~ {_FR_REQUEST}",
    ),
    # Negated comparatives and "can only": one filler word to the other rules ("I couldn't be happier").
    "idiom": _IDIOM,
    # Words that, just before a match or between its parts, take its meaning back (or make it hypothetical).
    "negation": (
        "no", "not", "don't", "dont", "never", "without", "no need", "if", "nicht", "kein", "keine", "ohne", "nie",
        "wenn", "falls", "ob", "keinen", "keinem", "keiner", "pas", "sans", "jamais", "ne", "n", "si", "sin", "nunca", "ni",
        "nadie", "tampoco", "personne ne",
    ),
    # Words allowed between the parts of a `~` pattern: verbs "to be", intensifiers, "still", "again".
    "filler": (
        "is", "s", "are", "re", "was", "were", "just", "completely", "totally", "so", "really", "absolutely", "very",
        "still", "again", "simply", "plain", "all", "also", "utterly", "entirely", "quite", "pretty", "honestly",
        "literally", "clearly", "obviously", "ist", "war", "sind", "waren", "ja", "einfach", "vollig", "total",
        "komplett", "echt", "wirklich", "leider", "schon", "wieder", "auch", "absolut", "ganz", "immer", "noch",
        "doch", "so", "halt", "eben", "mal", "jetzt", "gar", "uberhaupt", "mir", "uns", "mich", "dich", "est", "c", "etait",
        "vraiment", "completement", "totalement", "encore", "tout", "du", "a", "fait", "juste", "absolument",
        "toujours", "franchement", "carrement", "es", "esta", "fue", "era", "estan", "son", "totalmente",
        "completamente", "muy", "realmente", "de", "nuevo", "otra", "vez", "simplemente", "todavia", "sigue", "aun",
        "tambien", "absolutamente", "me", "even", "strictement", "currently", "temporarily", "derzeit", "gerade", "momentan",
        "aktuell", "zurzeit", "actuellement", "temporairement", "meme", "actualmente", "temporalmente",
        # place, time and regret: "Ich komme hier leider nicht weiter", "je suis malheureusement bloqué"
        "here", "now", "unfortunately", "sadly", "hier", "da", "dabei", "damit", "ici", "maintenant",
        "malheureusement", "helas", "aqui", "ahora", "lamentablemente", "desafortunadamente",
    ),
    # A turn after a closing or a give-up: "thanks, but …", "I couldn't find it at first, but here it is".
    # `^`: only opening a clause or right after the match ("das ging aber schnell" holds a particle).
    "contrast": (
        "^ but", "however", "though", "although", "except", "^ yet", "one more thing", "another thing",
        "another question", "^ still", "by the way", "btw", "^ also i|also can|also could|also my",
        "^ aber", "jedoch", "allerdings", "^ doch", "trotzdem", "^ sondern", "noch eine frage", "eine frage noch",
        "^ noch etwas", "^ nur", "^ immer noch", "ubrigens", "^ mais", "cependant", "pourtant", "toutefois", "par contre",
        "sauf que", "en revanche", "autre chose", "une autre question", "encore une chose", "^ toujours", "au fait",
        "^ pero", "sin embargo", "no obstante", "aunque", "otra cosa", "otra pregunta", "una cosa mas", "^ sigo",
        "^ todavia", "por cierto",
        # a question without its question mark opens a new request
        "^ where|when|why|how do|how can|how long|how much|what about|what is|can you|could you",
        "^ wo|wann|warum|wie lange|wie kann|konnen sie|konnten sie",
        "^ ou est|ou en est|quand|comment je|comment faire|pourquoi|pouvez vous",
        "^ donde|cuando|por que|como puedo|como hago|puede|podria",
    ),
    # What an assistant says when it delivers after all: a give-up followed by a contrast and one of these
    # is not a give-up ("I couldn't find it at first, but here it is: …").
    "recovered": (
        "here it is|here they are|here is|here are|here you go|found it|i found|i've found|i have found|i did find"
        "|i managed to|i was able to|i've now found|i now found|i eventually found|i got it|i've got it|it worked"
        "|it went through|has been|have been|is now|are now|now shows",
        "hier ist|hier sind|hier bitte|bitte schon|gefunden|ich habe es|ich habe sie|ich habe ihn|ist erledigt|erledigt"
        "|hat geklappt|hat funktioniert|konnte ich|wurde|wurden|ist jetzt|sind jetzt",
        "le voici|la voici|les voici|voici|voila|j'ai trouve|je l'ai trouve|je les ai trouves|je l'ai retrouve|trouve"
        "|c'est fait|ca a marche|ca a fonctionne|j'ai pu|j'ai reussi|a ete|ont ete|est maintenant",
        "aqui esta|aqui estan|aqui tiene|aqui lo tiene|aqui la tiene|lo encontre|la encontre|los encontre|encontre"
        "|lo he encontrado|ya esta|pude|he podido|logre|consegui|ha sido|han sido|ya aparece|ahora aparece",
    ),
}
