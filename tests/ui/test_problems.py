"""Every page model reports an analytics error in one shape (`ui.models.problems.Problem`)."""

from __future__ import annotations

import pytest

from analytics.errors import AnalyticsError, BadRequest, NotFound, Unsupported
from ui.models import resume_qa, transcript
from ui.models.problems import Problem, problem_of


@pytest.mark.parametrize("exc, kind", [
    (BadRequest("cap must be"), "bad_request"), (NotFound("no thread"), "not_found"),
    (Unsupported("no such speaker"), "unsupported"), (AnalyticsError("other"), "bad_request"),
])
def test_each_analytics_error_has_its_kind(exc, kind):
    assert problem_of(exc) == Problem(kind, str(exc))


def test_the_transcript_and_resume_qa_models_answer_an_unknown_thread_alike(con):
    a = transcript.transcript_page(con, "no:such:thread").problem
    b = resume_qa.thread_qa(con, "no:such:thread").problem
    assert type(a) is type(b) is Problem and a.kind == b.kind == "not_found"
