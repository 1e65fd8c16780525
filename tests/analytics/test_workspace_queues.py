"""Review queues and saved views over a real loaded store (`loaded`: every storegen scenario)."""

from __future__ import annotations

import shutil

import pytest

import analytics
from analytics import metrics
from analytics import workspace as ws_api
from analytics.errors import BadRequest, NotFound
from analytics.filters import Filters
from analytics.scope import ThreadConditions


@pytest.fixture()
def db(loaded, tmp_path):
    """A private copy of the loaded store (its workspace beside it, in tmp_path)."""
    return shutil.copyfile(loaded, tmp_path / "lens.duckdb")


def _view(db, conditions, sort="last_ts", descending=True):
    return metrics.conversation_list(db, conditions, sort=sort, descending=descending)["thread_id"].tolist()


def test_a_queue_holds_the_threads_of_the_view_in_its_order(db):
    conditions = ThreadConditions(tenants=("acme",), min_user_turns=1, turns_from_table=True)
    expected = _view(db, conditions, sort="messages", descending=False)
    assert len(expected) >= 3
    q = ws_api.create_queue(db, "acme by size", conditions=conditions, sort="messages", descending=False,
                            view={"tenant": ["acme"], "sort": ["messages"]}, author="lead")
    items = ws_api.queue_items(db, q.queue_id)
    assert items["thread_id"].tolist() == expected
    assert items["position"].tolist() == list(range(1, len(expected) + 1))
    assert (q.items, q.done, q.matching, q.sample_size, q.seed) == (len(expected), 0, len(expected), None, None)
    assert q.view == {"tenant": ["acme"], "sort": ["messages"]} and q.created_by == "lead"
    assert set(items["status"]) == {"pending"} and items["assignee"].isna().all()


def test_a_sample_is_seeded_kept_in_view_order_and_dealt_round_robin(db):
    everything = _view(db, Filters())
    a = ws_api.create_queue(db, "s1", sample=5, seed=42, assignees=("ana", "ben"), author="lead")
    b = ws_api.create_queue(db, "s2", sample=5, seed=42, author="lead")
    c = ws_api.create_queue(db, "s3", sample=5, seed=43, author="lead")
    picked = ws_api.queue_items(db, a.queue_id)["thread_id"].tolist()
    assert picked == ws_api.queue_items(db, b.queue_id)["thread_id"].tolist()  # same view, size, seed
    assert picked != ws_api.queue_items(db, c.queue_id)["thread_id"].tolist()
    assert len(picked) == 5 and picked == [t for t in everything if t in picked]  # the view's order
    assert (a.matching, a.sample_size, a.seed) == (len(everything), 5, 42)
    assert ws_api.queue_items(db, a.queue_id)["assignee"].tolist() == ["ana", "ben", "ana", "ben", "ana"]
    drawn = ws_api.create_queue(db, "s4", sample=3, author="lead")
    assert isinstance(drawn.seed, int)  # drawn, and recorded so the queue can be made again
    again = ws_api.create_queue(db, "s5", sample=3, seed=drawn.seed, author="lead")
    assert (ws_api.queue_items(db, again.queue_id)["thread_id"].tolist()
            == ws_api.queue_items(db, drawn.queue_id)["thread_id"].tolist())
    whole = ws_api.create_queue(db, "s6", sample=10_000, seed=1, author="lead")
    assert whole.items == len(everything)


def test_walking_a_queue_next_previous_mine_pending_and_done(db):
    q = ws_api.create_queue(db, "walk", sample=6, seed=3, assignees=("ana", "ben"), author="lead")
    items = ws_api.queue_items(db, q.queue_id)
    first = ws_api.step(db, q.queue_id, 0)
    assert (first.position, first.thread_id) == (1, items["thread_id"][0])
    assert ws_api.step(db, q.queue_id, 1).position == 2
    assert ws_api.step(db, q.queue_id, 2, -1).position == 1
    assert ws_api.step(db, q.queue_id, 1, -1) is None and ws_api.step(db, q.queue_id, 6) is None
    assert [ws_api.step(db, q.queue_id, p, assignee="ben").position for p in (0, 2, 4)] == [2, 4, 6]
    done = ws_api.mark(db, q.queue_id, 2, by="ben")
    assert (done.status, done.done_by) == ("done", "ben") and done.done_at.endswith("Z")
    assert ws_api.step(db, q.queue_id, 0, assignee="ben", pending_only=True).position == 4
    assert ws_api.step(db, q.queue_id, 1, pending_only=True).position == 3
    progress = ws_api.progress(db, q.queue_id)
    assert progress[["assignee", "items", "done", "pending"]].values.tolist() == [
        ["(all)", 6, 1, 5], ["ana", 3, 0, 3], ["ben", 3, 1, 2]]
    assert progress["done_pct"].tolist() == [16.7, 0.0, 33.3]
    back = ws_api.mark(db, q.queue_id, 2, done=False, by="ben")
    assert (back.status, back.done_by) == ("pending", None)
    assert ws_api.assign(db, q.queue_id, "cy", [1, 2]) == 2
    assert ws_api.queue_items(db, q.queue_id, assignee="cy")["position"].tolist() == [1, 2]
    assert ws_api.get_queue(db, "walk").queue_id == q.queue_id
    assert [x.name for x in ws_api.queues(db)] == ["walk"]
    ws_api.delete_queue(db, q.queue_id)
    assert ws_api.queues(db) == [] and ws_api.progress(db).empty


def test_queue_mistakes_are_refused_by_name(db):
    ws_api.create_queue(db, "taken", sample=1, seed=1, author="lead")
    with pytest.raises(BadRequest, match="a queue named 'taken' exists already"):
        ws_api.create_queue(db, "taken", author="lead")
    with pytest.raises(BadRequest, match="matches no thread"):
        ws_api.create_queue(db, "empty", conditions=Filters(tenants=("nobody",)), author="lead")
    with pytest.raises(BadRequest, match="sample size is an integer >= 1"):
        ws_api.create_queue(db, "zero", sample=0, author="lead")
    with pytest.raises(BadRequest, match="cannot sort by"):
        ws_api.create_queue(db, "badsort", sort="nope", author="lead")
    with pytest.raises(NotFound, match="no review queue 'nope'"):
        ws_api.get_queue(db, "nope")
    with pytest.raises(NotFound, match="has no item 99"):
        ws_api.mark(db, 1, 99, by="x")
    assert [q.name for q in ws_api.queues(db)] == ["taken"]


def test_a_big_view_must_be_sampled(db, monkeypatch):
    from analytics.workspace import queueing as queues

    monkeypatch.setattr(queues, "MAX_ITEMS", 3)
    with pytest.raises(BadRequest, match=r"matches \d+ threads; a queue holds at most 3: take a sample"):
        ws_api.create_queue(db, "too big", author="lead")
    assert ws_api.create_queue(db, "sampled", sample=3, seed=1, author="lead").items == 3


def test_saved_views_keep_a_page_and_its_parameters_exactly(db):
    params = {"tenant": ["acme", "globex"], "q": "refund", "sort": "messages", "order": "asc", "page": 2,
              "db": "lens.duckdb"}
    v = ws_api.save_view(db, "acme refunds", "conversations", params, author="ana")
    assert v.params == {"tenant": ["acme", "globex"], "q": ["refund"], "sort": ["messages"], "order": ["asc"],
                        "page": ["2"]}  # `db` left out: the view belongs to this database's workspace
    assert v.path() == "/conversations?tenant=acme&tenant=globex&q=refund&sort=messages&order=asc&page=2"
    assert ws_api.get_view(db, "acme refunds") == v == ws_api.get_view(db, v.view_id)
    with pytest.raises(BadRequest, match="exists already"):
        ws_api.save_view(db, "acme refunds", "overview", {}, author="ana")
    replaced = ws_api.save_view(db, "acme refunds", "overview", {"tenant": "acme"}, author="ben", replace=True)
    assert (replaced.view_id, replaced.page, replaced.params, replaced.created_at) == (
        v.view_id, "overview", {"tenant": ["acme"]}, v.created_at)
    ws_api.save_view(db, "Beta", "transcript", {"thread": "a:b:c", "speaker": "user"}, author="ana")
    assert [x.name for x in ws_api.saved_views(db)] == ["acme refunds", "Beta"]
    for bad, message in ((("", "overview", {}), "view name"), (("x", "../etc", {}), "page's URL path"),
                         (("x", "overview", {"a": {"b": 1}}), "text or a list of text")):
        with pytest.raises(BadRequest, match=message):
            ws_api.save_view(db, *bad, author="ana")
    ws_api.delete_view(db, "Beta")
    with pytest.raises(NotFound):
        ws_api.get_view(db, "Beta")
    assert analytics.queues is ws_api.queues
