"""Function words of English, German, French and Spanish: never a topic's term.

Articles, pronouns, prepositions, conjunctions, auxiliaries and politeness words, normalised
as `analytics.conversation_outcomes.lexicon.normalise` does (casefolded, accents stripped).

>>> "the" in STOPWORDS and "rechnung" not in STOPWORDS
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
