"""The topic model on documents made here: deterministic, multilingual through the tools, ids never words."""

from __future__ import annotations

import random

import numpy as np

from analytics.topic_mining.cluster import Doc, _assign, _kmeans, cluster, spelled, words

QUESTIONS = {
    "refund": (["I want a refund for my order", "Can I get my money back please", "refund the broken kettle"],
               ["Ich möchte eine Gutschrift für den Wasserkocher", "Erstattung für die Bestellung bitte"], "lookup_order"),
    "parcel": (["Where is my parcel", "my delivery is late, track it", "parcel still not delivered"],
               ["Wo bleibt mein Paket", "Lieferung verspätet, Sendung verfolgen"], "track_parcel"),
    "login": (["I cannot sign in to my account", "password reset link never arrives", "locked out of my account"],
              ["Ich kann mich nicht anmelden", "Passwort zurücksetzen geht nicht"], "find_account"),
}


def _docs(seed: int = 0) -> list[Doc]:
    rng = random.Random(seed)
    docs = []
    for topic, (en, de, tool) in QUESTIONS.items():
        for i in range(24):
            text = rng.choice(en if i % 2 else de) + f" {rng.randint(1000, 9999)}"
            tools = (tool,) if i % 4 else ()  # a quarter of the turns call no tool
            docs.append(Doc(f"{topic}-{i:02d}", text, tools))
    return docs


def _partition(found) -> set[frozenset[str]]:
    groups: dict[int, set[str]] = {}
    for key, topic in found.assignment.items():
        groups.setdefault(topic, set()).add(key.split("-")[0])
    return {frozenset(g) for g in groups.values()}


def test_each_topic_is_found_across_languages():
    docs = _docs()
    found = cluster(docs)
    assert all(len(group) == 1 for group in _partition(found))  # no topic mixes two
    assert len(found.topics) <= 4
    text = {d.key: d.text for d in docs}
    for topic, (en, de, _) in QUESTIONS.items():
        ids = [found.assignment[k] for k in text if k.startswith(topic)]
        main = max(set(ids), key=ids.count)
        asked = {text[k].rsplit(" ", 1)[0] for k in text if k.startswith(topic) and found.assignment[k] == main}
        assert asked & set(en) and asked & set(de), topic  # English and German questions meet


def test_the_same_documents_in_any_order_give_the_same_topics_ids_and_labels():
    docs = _docs()
    first = cluster(docs)
    shuffled = list(docs)
    random.Random(7).shuffle(shuffled)
    again = cluster(shuffled)
    assert again.topics == first.topics
    assert again.assignment == first.assignment


def test_ids_follow_size_and_labels_name_the_topic():
    docs = _docs() + [Doc(f"refund-x{i}", "refund for my order please", ("lookup_order",)) for i in range(10)]
    found = cluster(docs)
    assert [t.size for t in found.topics] == sorted((t.size for t in found.topics), reverse=True)
    top = found.topics[0]
    assert found.assignment["refund-x0"] == top.id
    assert top.size == sum(1 for t in found.assignment.values() if t == top.id)
    assert "refund" in top.terms and top.tools == ("lookup_order",)
    assert len(top.questions) == len(set(top.questions)) <= 3


def test_labels_keep_the_accents_the_questions_write():
    asked = ["Je veux annuler ma réservation d'hôtel", "réservation d'hôtel annulée ?", "Changer la réservation hôtel",
             "Où est mon colis ?", "colis perdu, où est-il", "mon colis n'arrive pas"]
    found = cluster([Doc(f"q{i}-{n}", q) for n in range(3) for i, q in enumerate(asked)])
    labels = {t.label for t in found.topics}
    assert any("réservation" in label and "hôtel" in label for label in labels), labels
    assert not any("reservation" in label or "hotel" in label for label in labels), labels
    assert spelled(("reservation",), ["RESERVATION now", "Réservation", "réservation"]) == ["réservation"]


def test_identifiers_and_numbers_are_never_topic_words():
    assert words("Invoice INV-2037 for user4093@example.com, 3.5 EUR, order #A-1043") == ["invoice", "eur", "order"]
    assert words("Où est mon colis ?") == ["colis"]  # function words of the four languages dropped


def test_no_documents_and_one_document():
    assert cluster([]).topics == []
    one = cluster([Doc("a", "refund please", ())])
    assert one.assignment == {"a": 0} and one.topics[0].size == 1


def test_no_part_of_a_personal_value_becomes_a_topic_word():
    """An address's parts would be topic terms shown to masking sessions, which cannot recognise
    `alice` or `wonder` alone: no spelling of an address gives a word."""
    addresses = ["alice.wonder@ent-mail.com", "alice.wonder&#64;ent-mail.com", "alice.wonder%40ent-mail.com",
                 "alice.wonder\uff20ent-mail.com", '"alice wonder"@ent-mail.com', "alice.wonder\\u0040ent-mail.com",
                 "alice.wonder%EF%BC%A0ent-mail.com", "alice.wonder&commat;ent-mail&period;com"]
    docs = [Doc(f"q{i}-{n}", f"please refund {address} today", ("lookup_order",))
            for n in range(4) for i, address in enumerate(addresses)]
    found = cluster(docs)
    terms = {w for t in found.topics for w in (*t.terms, *t.label.split(", "))}
    assert "refund" in terms and not terms & {"alice", "wonder", "ent", "mail", "com"}, terms
    assert words("write to alice.wonder@ent-mail.com") == ["write"]


def test_an_item_orthogonal_to_every_centroid_joins_no_fine_cluster():
    """A cosine of 0 to every centroid says nothing: the item is left out (-1), not put in the first
    cluster, whose centroid it would drag towards features the cluster's items do not have."""
    x = np.array([[1.0, 0, 0], [0.8, 0.6, 0], [0, 0, 1.0]])
    centres, labels = _kmeans(x, np.array([3.0, 1.0, 2.0]), 1, np.random.default_rng(0))
    assert labels.tolist() == [0, 0, -1]
    assert np.allclose(centres[0], np.array([3.8, 0.6, 0]) / np.hypot(3.8, 0.6))  # (1, 0, 0) * 3 + (0.8, 0.6, 0), unit


def test_an_item_near_no_topic_centre_goes_with_its_nearest_item_or_starts_a_topic():
    centres = np.array([[1.0, 0, 0, 0], [0, 1.0, 0, 0]])
    x = np.array([[1.0, 0, 0, 0],   # topic 0
                  [0, 0.6, 0.8, 0],  # topic 1
                  [0, 0, 1.0, 0],    # orthogonal to both centres; nearest item: the one above
                  [0, 0, 0, 1.0],    # shares nothing with any item: a topic of its own
                  [0, 0, 0, 0]])     # no feature at all: the topic of such items
    labels, sims = _assign(x, centres, np.array([1.0, 2.0, 1.0, 3.0, 1.0]))
    assert labels.tolist() == [0, 1, 1, 3, 2]
    assert sims.shape == (5, 4) and sims[3, 3] == 1.0


def test_words_of_conversation_never_name_a_topic():
    """Questions that share their verbs and adverbs ("keeps", "every", "back") more than their subject: the
    label names the subject, or, with fewer than two words to name it, quotes the most typical question."""
    from analytics.topic_mining.cluster import MIN_LABEL_TERMS
    from analytics.topic_mining.stopwords import CONVERSATIONAL

    asked = {
        "vpn": ["VPN keeps disconnecting every few minutes", "my VPN keeps dropping, back every hour",
                "VPN connection keeps failing every morning"],
        "flaky": ["The printer keeps jamming, I need help every day", "My laptop keeps freezing, need help back",
                  "Outlook keeps crashing every time, help"],
        "refund": ["I need my refund back for the broken kettle", "Refund for the broken blender, I need it back",
                   "Still no refund for the broken toaster, every week I ask"],
    }
    docs = [Doc(f"{topic}-{i}-{n}", q, ()) for topic, qs in asked.items() for i, q in enumerate(qs) for n in range(4)]
    found = cluster(docs)
    for topic in found.topics:
        named = set(topic.terms) | set(topic.label.split(", "))
        assert not named & CONVERSATIONAL, topic
        assert len(topic.terms) >= MIN_LABEL_TERMS or topic.label.startswith("“"), topic
    labels = {t.label for t in found.topics}
    assert any("refund" in label and "broken" in label for label in labels), labels
    assert any("vpn" in label.lower() for label in labels), labels


def test_questions_sharing_a_word_of_conversation_or_an_ending_only_are_no_topic():
    """"help" (a word of conversation) or "-ing" (an ending) in common says nothing of a subject: the
    debugging question and the broken lamp are not one topic for their "help", and the questions
    with nothing else in common are together under a label that says so, not under one of their
    wordings."""
    from analytics.topic_mining.cluster import UNMATCHED_LABEL, Doc, cluster

    docs = [
        Doc("t1", "Run the unit tests and tell me what fails", ("run_tests",)),
        Doc("t2", "Run the integration tests for the payments service", ("run_tests",)),
        Doc("t3", "Can you run the tests of the billing module", ("run_tests",)),
        Doc("d1", "Can you help me debug a failing date test?"),
        Doc("c1", "Hi, my cat knocked the lamp off the shelf, help?"),
        Doc("h1", "What are your opening hours?"),
        Doc("m1", "Do your products have CE marking?"),
        Doc("s1", "How do I stream tokens to my frontend?"),
        Doc("s2", "How do I stream tokens from a graph?"),
    ]
    found = cluster(docs)
    topic = found.assignment
    assert topic["t1"] == topic["t2"] == topic["t3"]
    assert topic["c1"] == topic["h1"] == topic["m1"] != topic["d1"]
    unmatched = found.topics[topic["c1"]]
    assert unmatched.label == UNMATCHED_LABEL and unmatched.terms == () and unmatched.size == 3
    assert found.topics[topic["s1"]].label == "stream, tokens" and topic["s2"] == topic["s1"]
    assert cluster(list(reversed(docs))).topics == found.topics  # the same topics, ids and labels in any order
