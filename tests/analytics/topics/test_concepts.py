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
