"""A download's bytes and its export-log row (ui.downloads) whatever the size of a field."""

from __future__ import annotations

import io

import pandas as pd
import pytest

import transcript_lens
from analytics.export_log import exports
from ui import downloads


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("downloads") / "lens.duckdb"
    transcript_lens.load(transcript_lens.demo_store(), path)
    return path


def test_a_field_over_128_kb_downloads_and_is_counted_once(db):
    # A pasted log of 176,902 characters (with line breaks and quotes) in one search hit: the
    # stdlib csv reader's field limit (131,072) made the click fail and hand over nothing.
    pasted = ('ERROR "disk full"\n' * 9_829)[:176_902]
    frame = pd.DataFrame({"thread_id": ["acme:web:s1", "acme:web:s2"], "content": [pasted, "short"]})
    build = downloads.deferred(lambda: frame.to_csv(index=False), "search.csv", downloads.Origin(str(db)))
    data = build()
    assert pd.read_csv(io.BytesIO(data))["content"].tolist() == [pasted, "short"]
    (logged,) = exports(db)[["what", "rows"]].itertuples(index=False)
    assert tuple(logged) == ("search", 2)


@pytest.mark.parametrize(("data", "rows"), [
    (b"a,b\n1,2\n", 1), (b"a,b\n1,2", 1), (b"a\n\"x\ny\"\n\"q\"\"\nr\"\n", 2), (b"a\n", 0), (b"", 0),
])
def test_rows_are_counted_as_the_csv_module_counts_them(data, rows):
    assert downloads.csv_rows(data) == rows
