"""Trigram signatures (`loaders.grams`): the C loop (`_scan.grams`) gives the twin's bytes on
texts of many scripts, sliced and wide-offset columns and malformed UTF-8, and refuses bad
buffers the same way; the bits are those of the documented hash."""

from __future__ import annotations

from array import array

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loaders import _native, grams

ALPHABET = list("abcsSſkKiIİıeEé\u0301 σΣςµμдᲁ日本語返金ไทย😀.-")
FOLDS = array("I", [0xB5, 0x3BC, 0x17F, ord("s"), 0x3C2, 0x3C3]).tobytes()
needs_c = pytest.mark.skipif(_native.scan is None, reason="the C extension is not built")


def _both(offsets, data, n, width, folds=FOLDS):
    return _native.scan.grams(offsets, data, n, width, folds), grams.grams_py(offsets, data, n, width, folds)


@needs_c
@settings(max_examples=300, deadline=None)
@given(texts=st.lists(st.one_of(st.text(max_size=60), st.text(alphabet=ALPHABET, max_size=60)), max_size=20),
       cut=st.integers(0, 5), large=st.booleans())
def test_c_signatures_equal_the_twins(texts, cut, large):
    column = pa.array(texts, type=pa.large_string() if large else pa.string()).slice(min(cut, len(texts)))
    expected = [grams.signature([ord(c) for c in t.replace("ſ", "s").replace("ς", "σ").replace("µ", "μ")])
                for t in column.to_pylist()]
    got = grams.signatures(column, FOLDS).to_pylist()
    assert [tuple(got[i:i + grams.WORDS]) for i in range(0, len(got), grams.WORDS)] == expected


@needs_c
@settings(max_examples=300, deadline=None)
@given(chunks=st.lists(st.binary(max_size=40), max_size=8))
def test_malformed_utf8_reads_the_same_both_ways(chunks):
    ends = array("i", [0])
    for chunk in chunks:
        ends.append(ends[-1] + len(chunk))
    c, py = _both(ends.tobytes(), b"".join(chunks), len(chunks), 4)
    assert c == py


@needs_c
def test_bad_buffers_are_refused_both_ways():
    for offsets, data, n, width in [(array("i", [0, 5]).tobytes(), b"abc", 1, 4),  # past the data
                                    (array("i", [2, 1]).tobytes(), b"abc", 1, 4),  # going back
                                    (array("i", [0]).tobytes(), b"abc", 1, 4),  # too few offsets
                                    (array("q", [0, 3]).tobytes(), b"abc", 1, 2)]:  # no such width
        for fn in (_native.scan.grams, grams.grams_py):
            with pytest.raises(ValueError):
                fn(offsets, data, n, width, b"")


def test_a_trigram_sets_its_hashed_bit_and_a_wide_pair_its_own():
    assert grams.signature([ord(c) for c in "ab"]) == (0, 0, 0, 0)
    bit = grams.trigram_bit(*map(ord, "abc"))
    words = grams.signature([ord(c) for c in "abc"])
    assert words[bit >> 6] == 1 << (bit & 63) and sum(bin(w).count("1") for w in words) == 1
    assert sum(bin(w).count("1") for w in grams.signature([ord(c) for c in "返金"])) == 1
    twin = grams.grams_py(array("i", [0, 3]).tobytes(), b"abc", 1, 4, b"")
    assert tuple(array("Q", twin)) == words
