"""Support vocabulary across languages: the words of English, German, French and Spanish that
name one concept ("refund", "Rückerstattung", "remboursement", "reembolso"), so a topic's
questions meet across languages even when the agent calls no tool, or one tool for two subjects.

Each concept lists its words per language. A word is written as its texts write it (it is
normalised like the questions: casefolded, accents stripped); `*` at its end matches any word
it begins ("rembours*": "rembourser", "remboursement"); several words ("mot de passe") match
those words in a row, function words left out ("mot passe"). A German compound meets the
concepts of its parts: a word ending in a concept's word of 5 or more letters holds that
concept too ("Lieferadresse": `liefer*` delivery and `adress*` address).

A user table (`load_concepts`) is a TOML or JSON file of concept → list of words (any
language); its concepts are added to the built-in ones (a concept of the same name gets
the words too), or replace them all with `replace = true`.

>>> built_in().concepts(["ruckerstattung", "bestellung"])
['=refund', '=order']
>>> built_in().concepts(["lieferadresse"])
['=delivery', '=address']
>>> built_in().concepts(["mot", "passe", "oublie"])
['=password', '=reset']
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from analytics import jsontext, tomltable
from analytics.conversation_outcomes.lexicon import normalise
from analytics.errors import BadRequest
from analytics.user_files import read_user_text
from analytics.topic_mining.stopwords import STOPWORDS
from analytics.topic_mining.tokens import terms

#: A word of at least this many letters found at the end of a longer word, after at least
#: `COMPOUND_HEAD` letters (a compound's head: "lieferADRESSE", not "adDRESS"), counts.
COMPOUND_TAIL, COMPOUND_HEAD = 5, 4
_WORD = re.compile(r"\w+")
#: Words whose concepts are remembered (then forgotten all at once and remembered anew).
SEEN_WORDS = 500_000
#: A prefix (`word*`) needs at least this many letters: a shorter one would match unrelated words.
MIN_PREFIX = 3

# concept: English | German | French | Spanish (words written plainly; normalised when read)
_TABLE = """
order: order* purchase* | bestell* auftrag* | commande* achat* | pedido* compra*
refund: refund* reimburs* | rückerstatt* erstatt* rückzahl* | rembours* | reembols*
return: return* send back | rücksend* retoure* zurücksend* zurückschick* | retour* renvoy* | devol* retorn*
money: money cash | geld | argent | dinero
payment: pay paid paying payment* | zahlung* bezahl* zahlen gezahlt | paiement* payer payé | pago* pagar* pagué pagad*
charge: charged overcharg* debited | abgebucht abbuch* belastet | débit* prélev* | cobr* cargo*
invoice: invoice* bill billing receipt* | rechnung* quittung* beleg | factur* | factura* recibo*
address: address* street* postcode* zip city | adress* anschrift* straße* postleitzahl* | adress* domicile rue code postal ville | direcci* domicilio* calle* código postal ciudad
moving: moved moving relocat* | umgezogen umzug* umziehen | déménag* | mudé mudado mudanza* mudarme
delivery: deliver* shipping shipment* ship shipped | liefer* versand* zustell* verschick* | livr* expédi* envoi* | entreg* envío* envio enviad* despach*
parcel: parcel* package* packet* | paket* päckchen sendung* | colis paquet* | paquete* bulto*
tracking: track* trace | verfolg* tracking | suivi* suivre tracking | seguimiento rastre* localiz*
delay: late delay* overdue | verspät* verzöger* | retard* | retras* tarde demora*
arrival: arrive* arrival* | angekommen ankunft* eingetroffen | arriv* | lleg*
password: password* passcode passphrase | passwort* kennwort* | mot de passe mdp | contraseña* clave
login: login log in sign in logon signin | anmeld* einlogg* login | connexion connecter identifi* | iniciar sesión sesión acceder acceso
account: account* profile | konto* kundenkonto* profil* | compte* profil* | cuenta* perfil*
locked: lock* blocked block* | gesperrt sperr* blockiert | bloqué* verrouill* | bloque* bloquead*
reset: reset* forgot* forgotten recover* | zurücksetz* vergessen wiederherstell* | réinitialis* oubli* récupér* | restablec* olvid* recuper*
email: email* mail* inbox | mail* | courriel* mail* | correo* mail*
phone: phone* telephone* mobile | telefon* handy* | téléphon* portable | teléfono* móvil celular
code: code codes | code | code codes | código* codigo*
discount: discount* coupon* voucher* promo* | rabatt* gutschein* promo* | réduction* remise* coupon* promo* | descuento* cupón* cupon* promo*
loyalty: loyalty reward* points | treue* punkte* prämie* | fidélité points | fidelidad puntos recompensa*
cancel: cancel* terminate* | kündig* storn* abbestell* | annul* résili* | cancel* anul* baja
subscription: subscri* membership* | abo abos abonnement* mitgliedschaft* | abonnement* adhésion* souscri* | suscrip* membresía* abono*
warranty: warrant* guarantee* | garantie* gewährleist* | garantie* | garantía*
broken: broken broke defect* damag* faulty | kaputt defekt* beschädigt* zerbroch* | cassé* défectueu* endommag* abîmé* | roto rota defectuos* dañad* estropead*
exchange: exchang* swap* replace* replacement* | umtausch* austausch* ersatz* | échang* remplac* | intercambi* reemplaz* sustitu*
change: change changing changed modify* update* edit* | ändern änderung* geändert aktualisier* | changer chang* modifi* | cambi* modific* actualiz*
size: size* | größe* | taille* | talla*
price: price* cost* | preis* kosten | prix tarif* coût* | precio* coste* costo*
availability: stock availab* | verfügbar* lager* vorrätig | disponib* stock | disponib* existencia* stock
product: product* item* article* | produkt* artikel* | produit* article* | producto* artículo*
cart: cart basket checkout | warenkorb* kasse | panier* | carrito* cesta
app: app apps application website site | app webseite website | appli* site | aplicación app web página
error: error* bug* crash* | fehler* absturz* stürzt | erreur* bug* plante* | error* fallo*
delete: delete* remove* erase* | lösch* entfern* | supprim* effac* | elimin* borr*
privacy: privacy gdpr personal data | datenschutz* dsgvo daten | rgpd données confidentialité | privacidad rgpd datos
name: name | name namen | nom | nombre
newsletter: newsletter* unsubscri* | newsletter* abmeld* | newsletter* désinscri* désabonn* | boletín* desuscrib* darme de baja
booking: book booked booking* reservation* | buchung* gebucht reservier* | réserv* | reserv*
flight: flight* | flug* flüge* | vol vols | vuelo*
hotel: hotel* room* | hotel* zimmer* | hôtel* chambre* | hotel* habitación*
appointment: appointment* | termin* | rendez vous | cita*
card: card* creditcard | karte* kreditkarte* | carte* | tarjeta*
transfer: transfer* bank* | überweis* bank* | virement* banque* bancaire* | transferencia* banco* bancari*
credit: credit* balance | gutschrift* guthaben | avoir crédit* solde | crédito* saldo
missing: missing lost | fehlt fehlend* verloren | manqu* perdu* | falta* perdid* extravi*
status: status | status | statut état | estado
confirmation: confirm* | bestätig* | confirm* | confirm*
install: install* | installier* | install* | instal*
download: download* | herunterlad* download* | télécharg* | descarg*
verification: verif* verify | verifizier* | vérifi* | verific*
notification: notif* alert* | benachrichtig* | notif* alerte* | notific* aviso*
courier: courier* carrier* driver* | kurier* zusteller* fahrer* paketbote* | livreur* transporteur* | repartidor* mensajero* transportista*
label: label* | etikett* | étiquette* | etiqueta*
print: print* | druck* ausdruck* | imprim* | imprim*
tax: tax* vat | steuer* mwst | tva taxe* | iva impuesto*
contract: contract* | vertrag* verträge | contrat* | contrato*
renewal: renew* | verlänger* | renouvel* | renov*
trial: trial | testphase* probeabo* | essai* | prueba*
twice: twice duplicate* double* | doppelt* zweimal | deux fois doublon* | dos veces duplicad* doble*
battery: batter* charger* | akku* batterie* ladegerät* | batterie* chargeur* | batería* cargador*
screen: screen* display* | bildschirm* display* | écran* | pantalla*
colour: colour* color* | farbe* | couleur* | color*
gift: gift* | geschenk* | cadeau* | regalo*
language: language* | sprache* | langue* | idioma*
hours: opening hours | öffnungszeit* | horaire* | horario*
contact: contact* support | kontakt* kundendienst* kundenservice* | contact* assistance | contacto* soporte atención
complaint: complain* complaint* | beschwer* reklamation* | réclamation* plainte* | reclamación* queja*
shop: store shop* | laden geschäft* filiale* | magasin* boutique* | tienda*
pickup: pickup pick up collect* | abhol* | retrait retirer point relais | recog* recoger
week: week* | woche* | semaine* | semana*
wrong: wrong incorrect | falsch* | mauvais* erroné* | equivocad* incorrect*
quantity: quantity | menge* anzahl | quantité* | cantidad*
upgrade: upgrade* downgrade* premium | upgrade* premium | premium | premium mejora*
work: work working works worked | funktioniert funktionieren geht | fonctionne* marche | funciona*
open: open opening | öffnen öffnet | ouvrir ouvre | abrir abre
wait: wait* | warte* | attend* | esper*
number: number | nummer* | numéro* | número*
date: date | datum termin | date | fecha*
customer: customer* client* | kunde* | client* | cliente*
user: username user* | benutzer* nutzer* | utilisateur* identifiant* | usuario*
clothes: clothes shirt* jacket* shoe* dress* | kleid* jacke* schuh* hemd* | vêtement* veste* chaussure* robe* | ropa chaqueta* zapato* camisa* vestido*
signup: register* registration* signup | registrier* | inscri* | registr*
authentication: authenticat* | authentifizier* | authentifi* | autentic*
customs: customs duty duties | zoll* | douane* | aduana*
abroad: country abroad international | ausland* | étranger pays | extranjero país
financing: financ* | finanzier* ratenzahlung* | financ* | financ*
review: review* feedback rating* | bewertung* | avis évaluation* | reseña* opinión valoración*
repair: repair* | reparatur* | répar* | repar*
spare_part: part parts spare* | ersatzteil* | pièce* | pieza* repuesto*
manual: manual instruction* | anleitung* handbuch* | notice mode d'emploi | manual instrucciones
setup: setup configur* | einricht* konfigur* | configur* paramétr* | configur*
network: wifi internet network connection | wlan internet netzwerk verbindung* | wifi internet réseau | wifi internet red conexión
software: software firmware version* | software firmware version* | logiciel* version* | software versión*
sync: sync* | synchronis* | synchronis* | sincroniz*
ticket: ticket* | ticket* | billet* | entrada* boleto* billete*
luggage: luggage baggage suitcase* | gepäck* koffer* | bagage* valise* | equipaje* maleta*
insurance: insur* | versicher* | assurance* | aseguradora póliza*
fraud: fraud* scam* unauthori* | betrug* | fraude* arnaque* | fraude* estafa*
security: secur* hack* | sicherheit* gehackt | sécurité piraté* | seguridad hacke*
stolen: stolen theft | gestohlen diebstahl* | volé volée | robad* robo
deadline: deadline | frist* | délai* | plazo*
history: history | verlauf* historie | historique | historial
quote: quote estimate | angebot* kostenvoranschlag* | devis | presupuesto* cotizaci*
company: company business | firma* unternehmen* | entreprise* société | empresa*
copy: copy duplicate | kopie* | copie* duplicata | copia* duplicado*
"""


@dataclass(frozen=True)
class Concepts:
    """Words → concepts: exact words, prefixes (`word*`) and phrases of several words."""

    exact: dict[str, tuple[str, ...]] = field(default_factory=dict)
    prefixes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    phrases: dict[tuple[str, ...], tuple[str, ...]] = field(default_factory=dict)
    _seen: dict[str, tuple[str, ...]] = field(default_factory=dict, compare=False, repr=False)

    def fingerprint(self) -> str:
        """A short hash of the table (a stored topic table is read only when it was made by this one)."""
        text = repr((sorted(self.exact.items()), sorted(self.prefixes.items()), sorted(self.phrases.items())))
        return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()

    def of_word(self, word: str) -> tuple[str, ...]:
        """The concepts of one normalised word: the word itself, a prefix of it, or (a compound) its end."""
        known = self._seen.get(word)
        if known is None:
            if len(self._seen) >= SEEN_WORDS:  # (a long-lived process meets every word of every load)
                self._seen.clear()
            known = self._seen[word] = self._find(word)
        return known

    def _find(self, word: str) -> tuple[str, ...]:
        found = list(self.exact.get(word, ()))
        lengths = range(MIN_PREFIX, len(word) + 1)
        for n in lengths:
            found += self.prefixes.get(word[:n], ())
        for i in range(COMPOUND_HEAD, len(word) - COMPOUND_TAIL + 1):  # (a compound's head: "lieferADRESSE")
            tail = word[i:]
            head = list(self.exact.get(tail, ()))
            for n in range(COMPOUND_TAIL, len(tail) + 1):
                head += self.prefixes.get(tail[:n], ())
            if head:  # (the longest only: "adresse", not also "dresse")
                found += head
                break
        return tuple(dict.fromkeys(found))

    def concepts(self, wording: list[str]) -> list[str]:
        """Each concept of `wording` (normalised words without function words), `=` before it,
        in order of first occurrence; the words of a matched phrase count only as that phrase."""
        out: dict[str, None] = {}
        i = 0
        while i < len(wording):
            for size in (3, 2):
                if tuple(wording[i:i + size]) in self.phrases:
                    for c in self.phrases[tuple(wording[i:i + size])]:
                        out["=" + c] = None
                    i += size
                    break
            else:
                for c in self.of_word(wording[i]):
                    out["=" + c] = None
                i += 1
        return list(out)


def _entry(word: str) -> tuple[str, bool] | tuple[tuple[str, ...], bool]:
    prefix = word.endswith("*")
    parts = tuple(p for p in terms(normalise(word.rstrip("*"))) if p not in STOPWORDS)
    return (parts if len(parts) > 1 else (parts[0] if parts else "")), prefix


def build(table: dict[str, list[str]]) -> Concepts:
    """A `Concepts` from concept → words (`*` a prefix, spaces a phrase)."""
    exact: dict[str, list[str]] = {}
    prefixes: dict[str, list[str]] = {}
    phrases: dict[tuple[str, ...], list[str]] = {}
    for concept in sorted(table):
        for word in table[concept]:
            key, prefix = _entry(word)
            if not key:
                continue
            if isinstance(key, tuple):
                phrases.setdefault(key, []).append(concept)
            elif prefix and len(key) >= MIN_PREFIX:
                prefixes.setdefault(key, []).append(concept)
            else:
                exact.setdefault(key, []).append(concept)

    def frozen(d: dict) -> dict:
        return {k: tuple(dict.fromkeys(v)) for k, v in d.items()}

    return Concepts(frozen(exact), frozen(prefixes), frozen(phrases))


def _parse_table(text: str) -> dict[str, list[str]]:
    table: dict[str, list[str]] = {}
    for line in text.strip().splitlines():
        concept, _, rest = line.partition(":")
        # (a phrase's words are joined by single spaces inside a language; words by spaces too:
        # a phrase is a run of words none of which ends in `*`, listed in `_PHRASES`)
        for language in rest.split("|"):
            table.setdefault(concept.strip(), []).extend(_split_words(language))
    return table


#: The phrases of the built-in table (several words naming one concept).
_PHRASES = ("send back", "log in", "sign in", "mot de passe", "iniciar sesión", "personal data", "darme de baja",
            "rendez vous", "deux fois", "dos veces", "opening hours", "pick up", "point relais", "code postal",
            "código postal", "mode d'emploi")


def _split_words(language: str) -> list[str]:
    text = " ".join(language.split())
    found: list[str] = []
    for phrase in _PHRASES:
        if f" {phrase} " in f" {text} ":
            found.append(phrase)
            text = f" {text} ".replace(f" {phrase} ", " ").strip()
    return found + text.split()


_BUILT_IN: Concepts | None = None


def built_in() -> Concepts:
    """The built-in table (read once)."""
    global _BUILT_IN
    if _BUILT_IN is None:
        _BUILT_IN = build(_parse_table(_TABLE))
    return _BUILT_IN


def concept_table(table: Concepts | str | Path | None) -> Concepts | None:
    """`table` as a `Concepts`: a path is read (`load_concepts`); None stays None (the built-in
    table, or for a reader the one the load used)."""
    if table is None or isinstance(table, Concepts):
        return table
    return load_concepts(table)


def load_concepts(path: str | Path) -> Concepts:
    """The built-in table with a user table's concepts added (or instead, `replace = true`):
    a TOML or JSON file of concept → list of words. Read bounded (`analytics.user_files`); a bad
    file is one `BadRequest` line naming the file and the line: `concepts.toml:3: …`.

    >>> load_concepts("concepts.toml").of_word("licuadoras")  # doctest: +SKIP
    ('blender',)
    """
    path = Path(path)
    try:
        text = read_user_text(path, "concept table")
    except UnicodeDecodeError as exc:
        raise BadRequest(f"{path}:{_line_at(exc.object, exc.start)}: the concept table is not UTF-8 text") from None
    except OSError as exc:
        raise BadRequest(f"{path}: the concept table cannot be read ({exc.strerror or exc})") from None
    try:
        if path.suffix.lower() == ".toml":
            data = tomltable.loads(text)
        else:
            data = jsontext.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = _TOML_AT.search(str(exc))
        reason = _TOML_AT.sub("", str(exc)).strip()
        raise BadRequest(f"{path}:{line.group(1) if line else 1}: not TOML: {reason}") from None
    except json.JSONDecodeError as exc:
        raise BadRequest(f"{path}:{exc.lineno}: not JSON: {exc.msg}") from None
    except ValueError as exc:  # (jsontext's limits: nesting, elements)
        raise BadRequest(f"{path}:1: not JSON: {exc}") from None
    return concepts_from(data, str(path), text)


#: tomllib's position: "… (at line 3, column 7)".
_TOML_AT = re.compile(r"\(at line (\d+), column \d+\)|\(at end of document\)")


def concepts_from(data, where: str = "concept table", text: str = "") -> Concepts:
    """A table from a mapping of concept → words (`replace = true`: instead of the built-in ones);
    `text`, the file it was read from, lets an error name the line of the concept."""
    if not isinstance(data, dict):
        raise BadRequest(f"{where}:1: expected a table of concept = [words], got {type(data).__name__}")
    data = dict(data)
    replace = data.pop("replace", False)
    if not isinstance(replace, bool):
        raise BadRequest(f"{where}:{_line_of(text, 'replace')}: replace must be true or false")
    table = {} if replace else _parse_table(_TABLE)
    for concept, words in data.items():
        at = f"{where}:{_line_of(text, concept)}"
        if not _WORD.search(normalise(concept)):
            raise BadRequest(f"{at}: a concept needs a name of letters or digits, got {concept!r}")
        if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
            raise BadRequest(f"{at}: concept {concept!r} must be a list of words (strings)")
        for word in words:
            key, prefix = _entry(word)
            if not key:
                raise BadRequest(f"{at}: concept {concept!r}: {word!r} has no word but function words or punctuation")
            if prefix and isinstance(key, str) and len(key) < MIN_PREFIX:
                raise BadRequest(f"{at}: concept {concept!r}: the prefix {word!r} needs {MIN_PREFIX} letters or more")
        table.setdefault(concept, []).extend(words)
    return build(table)


def _line_of(text: str, key: str) -> int:
    """The 1-based line of `text` where `key` is first named as a key (`key =`, `"key":`), else 1."""
    bare, quoted = re.escape(key), re.escape(json.dumps(key)[1:-1])
    toml_key = rf"""^\s*(?:{bare}|"{quoted}"|'{bare}')\s*="""
    found = re.search(rf"""{toml_key}|"{quoted}"\s*:""", text, re.MULTILINE)
    return _line_at(text, found.start()) if found else 1


def _line_at(text: str | bytes, offset: int) -> int:
    return text[:offset].count("\n" if isinstance(text, str) else b"\n") + 1
