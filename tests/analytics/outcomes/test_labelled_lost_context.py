"""`lost_context` finds the restarts of the labelled set (storegen/labelled.py) that rebuilt a window
without the older turns, and none of its decoys: a long pause with the whole history kept, a long
conversation never restarted, a restart before the history grew past the window, a graph that trims
its own state."""

from __future__ import annotations

import pytest

import analytics
import transcript_lens
from storegen.labelled import RESTART_COUNTS, build_labelled_store


@pytest.fixture(scope="module")
def labelled(tmp_path_factory):
    folder = tmp_path_factory.mktemp("labelled")
    labels = build_labelled_store(folder / "set.sqlite", seed=1, scale=0.05)
    transcript_lens.load(folder / "set.sqlite", folder / "set.duckdb", workers=1)
    return labels["threads"], analytics.outcomes(folder / "set.duckdb").set_index("thread_id")


def test_every_lost_context_label_is_found_and_no_other(labelled):
    threads, frame = labelled
    assert {t["pattern"] for t in threads.values()} >= set(RESTART_COUNTS)
    assert any(t["lost_context"] for t in threads.values())
    for thread_id, want in threads.items():
        assert bool(frame.at[thread_id, "lost_context"]) == want["lost_context"], (thread_id, want["pattern"])


def test_lost_context_points_at_the_first_message_the_restart_rebuilt(labelled):
    threads, frame = labelled
    for thread_id, want in threads.items():
        if want["lost_context"]:
            assert list(frame.at[thread_id, "lost_context_ordinals"]) == want["ordinals"]["lost_context"], thread_id
