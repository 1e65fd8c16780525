"""Topic terms by Unicode word rules: a letter's marks stay with it, unspaced scripts give short terms."""

from __future__ import annotations

import unicodedata

from analytics.topic_mining.cluster import Doc, cluster, words

HINDI = {
    "refund": ["मुझे रिफंड चाहिए", "रिफंड कब मिलेगा", "टूटे सामान का रिफंड"],
    "parcel": ["मेरा पार्सल कहाँ है", "पार्सल अभी तक नहीं आया", "पार्सल देर से"],
}
JAPANESE = {
    "refund": ["返金してください", "商品の返金をお願いします", "返金はいつですか"],
    "parcel": ["荷物が届きません", "荷物の配達状況を教えて", "配達が遅れています"],
}


def _no_cluster_cut(term: str) -> bool:
    """`term` neither starts with a combining mark nor ends with a virama (a grapheme cluster cut apart)."""
    return unicodedata.category(term[0]) not in ("Mn", "Mc") and unicodedata.combining(term[-1]) != 9


def test_devanagari_words_keep_their_vowel_signs_and_viramas():
    assert words("मुझे रिफंड चाहिए, पार्सल कहाँ है?") == ["मुझे", "रिफंड", "चाहिए", "पार्सल", "कहाँ", "है"]
    assert words("क्षमा करें") == ["क्षमा", "करें"]


def test_japanese_and_chinese_give_short_terms_not_sentences():
    japanese = words("注文した商品がまだ届きません。返金してください")
    assert "注文" in japanese and "商品" in japanese and "返金" in japanese
    assert all(len(t) <= 2 for t in japanese), japanese
    chinese = words("我的订单还没有到请退款")
    assert "订单" in chinese and "退款" in chinese and all(len(t) == 2 for t in chinese), chinese


def test_thai_terms_are_pairs_of_whole_clusters():
    thai = words("สินค้ายังไม่มาถึง ขอคืนเงิน")
    assert thai and all(_no_cluster_cut(t) for t in thai), thai
    assert {"สิน", "ค้า", "เงิน"} <= set(thai), thai  # (สินค้า, goods; เงิน, money: their vowel and tone marks kept)


def _docs(questions: dict[str, list[str]]) -> list[Doc]:
    return [Doc(f"{topic}-{i:02d}", texts[i % len(texts)], ()) for topic, texts in questions.items() for i in range(12)]


def test_topics_of_unspaced_and_indic_questions_are_found_and_labelled_with_whole_terms():
    for questions in (HINDI, JAPANESE):
        found = cluster(_docs(questions))
        groups: dict[int, set[str]] = {}
        for key, topic in found.assignment.items():
            groups.setdefault(topic, set()).add(key.split("-")[0])
        assert sorted(map(sorted, groups.values())) == [["parcel"], ["refund"]], groups
        for topic in found.topics:
            assert topic.terms and all(_no_cluster_cut(t) and len(t) <= 8 for t in topic.terms), topic.terms
