"""Function words of English, German, French and Spanish: never a topic's term; and the words
of conversation, which are features of a question but never name its topic, nor make one alone.

Articles, pronouns, prepositions, conjunctions, auxiliaries and politeness words, normalised
as `analytics.conversation_outcomes.lexicon.normalise` does (casefolded, accents stripped).
`CONVERSATIONAL`: verbs any request uses (keep, say, need, help), adverbs and quantifiers of
frequency, place and degree (only, every, back, again), and words of time (week, yesterday):
two questions sharing them and nothing else ("Can you help me debug a test?", "my cat broke the
lamp, help?") ask about nothing in common, and a label made of them ("keeps, back, every") says
nothing of what is asked.

>>> "the" in STOPWORDS and "rechnung" not in STOPWORDS
True
>>> "keeps" in CONVERSATIONAL and "woche" in CONVERSATIONAL and "refund" not in CONVERSATIONAL
True
"""

from __future__ import annotations

from analytics.conversation_outcomes.lexicon import normalise

_WORDS = {
    "en": """a an the and or but if then so to of in on at by for with from about into over after before up out
        is are was were be been being am do does did done have has had having can could will would shall should may
        might must i me my mine we us our you your yours he him his she her it its they them their this that these
        those what which who whom whose when where why how there here not no yes all any some just also too very
        please hi hello thanks thank get got still again""",
    "de": """der die das den dem des ein eine einen einem einer eines und oder aber wenn dann so zu von vom zum zur in im
        an am auf bei mit nach fur uber unter aus um ist sind war waren sein bin bist seid hat haben habe hatte kann
        konnen konnte mochte mochten will wird werden wurde ich mich mir mein meine meinen meinem meiner wir uns unser
        unsere sie ihr ihre ihnen ihren er es sich du dich dir dein deine was wer wie wo wann warum nicht kein keine
        ja nein auch noch schon sehr bitte hallo danke immer""",
    "fr": """le la les l un une des de du d et ou mais si alors a au aux en dans sur par pour avec sans sous est sont
        etait etre ai as avons avez ont eu peux peut pouvez puis pourriez voudrais veux je j me m moi mon ma mes nous
        notre nos vous votre vos il elle ils elles on se s son sa ses leur leurs ce c cet cette ces qui que qu quoi
        quand ou comment pourquoi ne n pas plus y bonjour merci toujours encore tres""",
    "es": """el la los las lo un una unos unas de del y o pero si entonces a al en por para con sin sobre es son era
        ser estar esta estan he ha han hay puedo puede pueden podria quiero yo me mi mis mio nosotros nos nuestro
        nuestra usted ustedes su sus tu te el ella ellos ellas se le les que quien como cuando donde por que no mas
        ya hola gracias muy todavia""",
}

#: The function words of every built-in language, normalised.
STOPWORDS: frozenset[str] = frozenset(normalise(w) for words in _WORDS.values() for w in words.split())

_CONVERSATIONAL = {
    "en": """keep keeps keeping kept use uses using used say says said saying tell tells told help helps helping need
        needs needed want wants wanted get gets getting go goes going went come comes coming came know make makes made
        try tries tried trying see look looks give gives take takes put let lets seems only every each else back ever
        never always already now today yesterday tomorrow week weeks day days morning evening night minute minutes
        hour hours ago since time times way thing things something anything someone anyone one two new same other
        another more much many few lot really actually maybe possible able even well right okay ok sure supposed""",
    "de": """bekomme bekommen bekommt brauche brauchen braucht geht gehen gegangen mache machen macht gemacht helfen
        hilft sagen sagt gesagt gibt geben gebe sehe sehen lassen nur jede jeden jedes jeder wieder seit heute gestern
        morgen woche wochen tag tage tagen stunde stunden minute minuten mal etwas jemand neu neue neuen gleich andere
        anderen mehr viel viele einfach wirklich vielleicht leider gerade""",
    "fr": """faire fais fait aller va vais dire dit aide aider besoin avoir obtenir seulement chaque depuis aujourd
        hui hier demain semaine semaines jour jours heure heures minute minutes fois quelque chose autre autres
        nouveau nouvelle meme beaucoup vraiment deja jamais""",
    "es": """hacer hago hace tener tengo tiene ir voy va decir dice dijo ayuda ayudar necesito necesita obtener solo
        cada siempre desde hoy ayer manana semana semanas dia dias hora horas minuto minutos vez veces algo alguien
        otro otra nuevo nueva mismo mucho muchos realmente ya nunca""",
}

#: Words of conversation of every built-in language, normalised: never a topic's term (`cluster._finish`).
CONVERSATIONAL: frozenset[str] = frozenset(normalise(w) for words in _CONVERSATIONAL.values() for w in words.split())
