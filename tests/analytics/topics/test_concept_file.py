"""A user's concept table for the topics: read bounded with one line naming the file and the line on
bad input, taken by the load (`--topic-concepts`) and `report topics`, its hash recorded with the
topic tables so that another table computes them again."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import duckdb
import pytest

import analytics
import transcript_lens
import transcript_lens.cli
from analytics.errors import BadRequest
from analytics.topic_mining import materialize as mat
from analytics.topic_mining.concepts import built_in, load_concepts

#: No built-in concept, and three of the labelled subjects named in two languages only: topics
#: computed with it differ from the built-in table's.
TABLE = 'replace = true\nrefund = ["refund*", "rembours*"]\nparcel = ["parcel*", "paket*"]\n'
OTHER = 'parcel = ["parcel*", "colis"]\n'


def _rows(db, sql="SELECT thread_id, topic_id, topic_label FROM conversation_topics ORDER BY 1"):
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchall()


def _store(labelled, tmp_path) -> Path:
    db, _ = labelled
    store = tmp_path / "store.sqlite"
    shutil.copy(Path(db).with_name("labelled.sqlite"), store)
    return store


def _write(tmp_path, name, text) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("name, text, message", [
    ("syntax.toml", 'a = ["x"]\nb = ["y"\nc = 1\n', r"syntax.toml:3: not TOML: Unclosed array"),
    ("value.toml", '# mine\nblender = ["blender"]\nbad = "oops"\n', r"value.toml:3: concept 'bad' must be a list of words"),
    ("quoted.toml", 'a = ["x"]\n"gift card" = [1]\n', r"quoted.toml:2: concept 'gift card' must be a list"),
    ("prefix.json", '{\n  "blender": ["blender"],\n  "k": ["ab*"]\n}\n', r"prefix.json:3: concept 'k': the prefix 'ab\*' needs 3"),
    ("stop.json", '{"a": ["x"],\n"b": ["the"]}', r"stop.json:2: concept 'b': 'the' has no word but function words"),
    ("syntax.json", '{\n "a": ["x"],\n "b": ["y"\n}\n', r"syntax.json:4: not JSON"),
    ("replace.toml", 'a = ["x"]\nreplace = "yes"\n', r"replace.toml:2: replace must be true or false"),
    ("list.json", '["refund"]', r"list.json:1: expected a table of concept = \[words\]"),
])
def test_a_bad_table_is_one_line_naming_the_file_and_the_line(tmp_path, name, text, message):
    with pytest.raises(BadRequest, match=message) as caught:
        load_concepts(_write(tmp_path, name, text))
    assert "\n" not in str(caught.value) and str(tmp_path / name) in str(caught.value)


def test_the_table_is_read_bounded_like_every_user_file(tmp_path):
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    with pytest.raises(BadRequest, match="fifo.toml: the concept table is not a regular file"):
        load_concepts(fifo)  # (opened without waiting for a writer)
    with pytest.raises(BadRequest, match="the concept table is not a regular file"):
        load_concepts(tmp_path)
    big = tmp_path / "big.toml"
    with open(big, "wb") as fh:
        fh.truncate(5 * 1024 * 1024)
    with pytest.raises(BadRequest, match="big.toml: the concept table is over 4 MiB"):
        load_concepts(big)
    binary = _write(tmp_path, "latin.toml", "")
    binary.write_bytes(b'a = ["x"]\nb = ["\xe9"]\n')
    with pytest.raises(BadRequest, match="latin.toml:2: the concept table is not UTF-8"):
        load_concepts(binary)


def test_a_load_with_a_table_computes_with_it_and_records_its_hash(labelled, tmp_path):
    store = _store(labelled, tmp_path)
    table = _write(tmp_path, "concepts.toml", TABLE)
    db = tmp_path / "with.duckdb"
    assert transcript_lens.cli.main(["load", str(store), "--db", str(db), "--topic-concepts", str(table), "--quiet"]) == 0
    concepts = load_concepts(table)
    with duckdb.connect(str(db), read_only=True) as con:
        assert mat.concepts_hash(con) == concepts.fingerprint() != built_in().fingerprint()
        assert mat.materialized(con) and mat.materialized(con, concepts) and not mat.materialized(con, built_in())
        mine, asked = mat.compute(con, concepts=concepts)
        theirs, _ = mat.compute(con)
    stored = _rows(db)
    assert stored == [(t, mine.assignment[t], mine.topics[mine.assignment[t]].label) for t in sorted(asked)]
    assert stored != [(t, theirs.assignment[t], theirs.topics[theirs.assignment[t]].label) for t in sorted(asked)]
    # A reader given no table reads the load's topics; the app's pages and `report outcomes` do so.
    assert [tuple(r) for r in analytics.topics(str(db))[["thread_id", "topic_id", "topic_label"]].itertuples(index=False)] == stored


def test_a_reader_given_another_table_computes_live_and_the_same_table_reads_the_stored(labelled, tmp_path, monkeypatch):
    store = _store(labelled, tmp_path)
    table, other = _write(tmp_path, "concepts.toml", TABLE), _write(tmp_path, "other.toml", OTHER)
    db = tmp_path / "t.duckdb"
    transcript_lens.load(store, db, topic_concepts=table)
    computed = []
    compute = mat.compute
    monkeypatch.setattr(mat, "compute", lambda *a, **k: computed.append(a[2:] or k) or compute(*a, **k))
    same = analytics.topics(str(db), concepts=_write(tmp_path, "copy.toml", TABLE))  # (another file, the same table)
    assert not computed
    live = analytics.topics(str(db), concepts=other)
    assert len(computed) == 1
    with duckdb.connect(str(db), read_only=True) as con:
        found, _ = compute(con, concepts=load_concepts(other))
    assert list(live["topic_id"]) == [found.assignment[t] for t in live["thread_id"]]
    assert list(same["topic_id"]) != list(live["topic_id"]) or list(same["topic_label"]) != list(live["topic_label"])
    out = tmp_path / "topics.csv"
    assert transcript_lens.cli.main(["report", "topics", "--db", str(db), "--out", str(out),
                                     "--topic-concepts", str(other)]) in (0, None)
    assert len(computed) == 2 and len(out.read_text(encoding="utf-8").splitlines()) > 1


def test_an_incremental_load_given_another_table_computes_the_topics_again(labelled, tmp_path):
    store = _store(labelled, tmp_path)
    table, other = _write(tmp_path, "concepts.toml", TABLE), _write(tmp_path, "other.toml", OTHER)
    db = tmp_path / "inc.duckdb"
    transcript_lens.load(store, db, topic_concepts=table)
    transcript_lens.load(store, db, incremental=True, topic_concepts=other)  # (the source did not change)
    with duckdb.connect(str(db), read_only=True) as con:
        assert mat.concepts_hash(con) == load_concepts(other).fingerprint()
    transcript_lens.load(store, db, incremental=True)
    with duckdb.connect(str(db), read_only=True) as con:
        assert mat.concepts_hash(con) == built_in().fingerprint()


def test_a_bad_table_stops_the_load_and_the_report_before_anything(labelled, tmp_path, capsys):
    store = _store(labelled, tmp_path)
    bad = _write(tmp_path, "bad.toml", 'blender = ["blender"]\nmixer = "Mixer"\n')
    db = tmp_path / "bad.duckdb"
    assert transcript_lens.cli.main(["load", str(store), "--db", str(db), "--topic-concepts", str(bad), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {bad}:2: concept 'mixer' must be a list of words (strings)"]
    assert not db.exists()
    good = tmp_path / "good.duckdb"
    transcript_lens.load(store, good)
    code = transcript_lens.cli.main(["report", "topics", "--db", str(good), "--out", str(tmp_path / "t.csv"),
                                     "--topic-concepts", str(bad)])
    assert code == 2
    assert f"{bad}:2: concept 'mixer'" in capsys.readouterr().err
    assert not (tmp_path / "t.csv").exists()
