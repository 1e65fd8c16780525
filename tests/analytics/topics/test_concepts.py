"""The concept table: one subject's words in four languages meet without any tool; a user table adds concepts."""

from __future__ import annotations

import random

from analytics.topic_mining.cluster import Doc, cluster
from analytics.topic_mining.concepts import built_in, load_concepts

#: One subject per key, asked in English, German, French and Spanish; no turn calls a tool.
SUBJECTS = {
    "refund": ["When will I receive the refund for my return?", "Wann bekomme ich die Rückerstattung für meine Retoure?",
               "Quand vais-je recevoir le remboursement de mon retour ?", "¿Cuándo recibo el reembolso de mi devolución?"],
    "invoice": ["Please send me the invoice as PDF", "Bitte schicken Sie mir die Rechnung als PDF",
                "Envoyez-moi la facture en PDF s'il vous plaît", "Envíenme la factura en PDF por favor"],
    "password": ["I forgot my password and cannot log in", "Ich habe mein Passwort vergessen",
                 "J'ai oublié mon mot de passe", "Olvidé mi contraseña"],
}


def _docs() -> list[Doc]:
    rng = random.Random(7)
    return [Doc(f"{subject}-{i:02d}", rng.choice(texts) + f" {rng.randint(1000, 9999)}")
            for subject, texts in SUBJECTS.items() for i in range(20)]


def test_built_in_concepts_name_one_subject_across_languages_and_compounds():
    table = built_in()
    assert {table.of_word(w) for w in ("refund", "ruckerstattung", "remboursement", "reembolso")} == {("refund",)}
    assert table.of_word("lieferadresse") == ("delivery", "address")  # (a compound: both parts)
    assert table.of_word("address") == ("address",)  # (not also a "dress" inside it)
    assert table.concepts(["mot", "passe", "oublie"]) == ["=password", "=reset"]


def test_one_subject_in_four_languages_is_one_topic_without_tools():
    found = cluster(_docs())
    groups: dict[int, set[str]] = {}
    for key, topic in found.assignment.items():
        groups.setdefault(topic, set()).add(key.split("-")[0])
    assert len(found.topics) == 3
    assert all(len(g) == 1 for g in groups.values())


def test_a_user_table_adds_concepts(tmp_path):
    path = tmp_path / "concepts.toml"
    path.write_text('blender = ["blender", "Mixer", "mixeur", "licuadora*"]\nrefund = ["moneyback"]\n', encoding="utf-8")
    table = load_concepts(path)
    assert table.of_word("licuadoras") == ("blender",) and table.of_word("mixer") == ("blender",)
    assert table.of_word("moneyback") == ("refund",) and table.of_word("reembolso") == ("refund",)
    assert table.fingerprint() != built_in().fingerprint()
    only = tmp_path / "only.json"
    only.write_text('{"replace": true, "blender": ["blender"]}', encoding="utf-8")
    assert load_concepts(only).of_word("refund") == ()


#: Two subjects the agent answers with one tool (`lookup_order`), three with a tool each.
SHARED_TOOL = {
    "refund": (["I sent the shoes back, where is my refund?", "Ich habe die Schuhe zurückgeschickt, wo bleibt die Erstattung?",
                "J'ai renvoyé les chaussures, où est mon remboursement ?", "Devolví los zapatos, ¿dónde está mi reembolso?"],
               "lookup_order"),
    "address": (["Please change the delivery address of my order to my new street",
                 "Bitte ändern Sie die Lieferadresse meiner Bestellung, ich bin umgezogen",
                 "Merci de changer l'adresse de livraison de ma commande, j'ai déménagé",
                 "Cambien la dirección de entrega de mi pedido, me mudé"], "lookup_order"),
    "invoice": (SUBJECTS["invoice"], "get_invoice"),
    "password": (SUBJECTS["password"], "reset_password"),
    "tracking": (["Where is my parcel right now?", "Wo ist mein Paket gerade?", "Où se trouve mon colis ?",
                  "¿Dónde está mi paquete?"], "track_parcel"),
}


def test_two_subjects_answered_by_one_tool_stay_two_topics():
    rng = random.Random(11)
    docs = [Doc(f"{subject}-{i:02d}", rng.choice(texts) + f" A-{rng.randint(1000, 9999)}", (tool,))
            for subject, (texts, tool) in SHARED_TOOL.items() for i in range(24)]
    found = cluster(docs)
    topic_of: dict[str, set[int]] = {}
    for key, topic in found.assignment.items():
        topic_of.setdefault(key.split("-")[0], set()).add(topic)
    assert topic_of["refund"].isdisjoint(topic_of["address"])
    assert all(len(topics) == 1 for topics in topic_of.values())


def test_the_words_remembered_are_bounded(monkeypatch):
    from analytics.topic_mining import concepts

    table = concepts.build({"refund": ["refund*"]})
    monkeypatch.setattr(concepts, "SEEN_WORDS", 3)
    for word in ("refunds", "abc", "abd", "abe", "abf", "refunded"):
        table.of_word(word)
    assert len(table._seen) <= 3 and table.of_word("refunded") == ("refund",)
