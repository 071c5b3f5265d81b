"""Queries that match nothing for a reason the model can fix come back with a hint in its next prompt."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

from argus.agent.llm.options import LLMOptions
from argus.agent.loop import run_audit
from argus.agent.planners.factory import make_planner
from argus.agent.report import AuditReport
from argus.agent.tools.target import AuditTarget
from tests.doubles.model_server import tool_reply

START = datetime(2024, 6, 1, tzinfo=UTC)
DOCS = [{"age": 20 + i % 50, "signup_date": START + timedelta(days=i)} for i in range(120)]
CONCLUDE = tool_reply("conclude", {"summary": "done"})


def _audit(target: AuditTarget, server: Any) -> AuditReport:
    settings = LLMOptions(model="m", base_url=server.base_url, timeout_s=5.0, max_retries=0)
    setup = make_planner("llm", llm=settings, sleep=lambda _s: None)
    return run_audit(target, setup.planner, gates=setup.gates, llm=setup.account)


def test_a_filter_on_tool_options_is_told_the_fields_do_not_exist(make_target: Any, chat_server: Any) -> None:
    # what the recorded 0.5B model sent, over and over
    server = chat_server([tool_reply("run_query", {"filter": {"sample_size": 1000, "limit": 50}}), CONCLUDE])
    report = _audit(make_target(DOCS), server)
    hint = ("no sampled document has the fields limit, sample_size: a filter on a missing field matches nothing "
            "(options such as limit go beside filter, not inside it)")
    assert report.trace[1].observation == f"matched 0 documents, returned 0; hint: {hint}"
    assert f"matched 0 (hint: {hint})" in server.requests[1].body["messages"][1]["content"]


def test_a_date_field_compared_with_a_string_is_told_how_to_write_a_date(make_target: Any,
                                                                         chat_server: Any) -> None:
    server = chat_server([tool_reply("run_query", {"filter": {"signup_date": {"$lt": "2024-01-01T00:00:00Z"}}}),
                          CONCLUDE])
    report = _audit(make_target(DOCS), server)
    assert report.trace[1].observation.endswith(
        'hint: signup_date holds dates, compared here with a string, which never matches a date: write the bound '
        'as {"$date": "2024-01-01T00:00:00Z"}')


def test_a_query_that_rightly_matches_nothing_gets_no_hint(make_target: Any, chat_server: Any) -> None:
    server = chat_server([tool_reply("run_query", {"filter": {"signup_date": {"$lt": {"$date": "2024-01-01T00:00:00Z"}},
                                                              "age": {"$gt": 130}}}), CONCLUDE])
    report = _audit(make_target(DOCS), server)
    assert report.trace[1].observation == "matched 0 documents, returned 0"


def test_hidden_operands_in_the_sweeps_steps_do_not_look_like_strings(make_target: Any, chat_server: Any) -> None:
    docs = [{**d, "age": 999 if i % 40 == 0 else d["age"]} for i, d in enumerate(DOCS)]
    docs += [{"age": 30, "signup_date": datetime(1901, 1, 1, tzinfo=UTC)}]
    server = chat_server([CONCLUDE])
    settings = LLMOptions(model="m", base_url=server.base_url, timeout_s=5.0, max_retries=0)
    setup = make_planner("hybrid", llm=settings, sleep=lambda _s: None)
    run_audit(make_target(docs), setup.planner, gates=setup.gates, llm=setup.account)
    prompt = server.requests[0].body["messages"][1]["content"]
    assert re.search(r'"\$(?:lt|gt|lte|gte)":<[^>"]+>', prompt), prompt  # e.g. {"$gt":<3-digit number>}
    assert not re.search(r'"\$(?:lt|gt|lte|gte)":"(?:<|shape:|\d-digit)', prompt)
    system = server.requests[0].body["messages"][0]["content"]
    assert 'dates as {"$date": "2024-01-01T00:00:00Z"}; a date compared with a plain string matches nothing' in system


def test_the_last_result_shows_two_masked_rows_not_fifty(make_target: Any, chat_server: Any) -> None:
    server = chat_server([tool_reply("run_query", {"filter": {"age": {"$gte": 20}}, "limit": 50}), CONCLUDE])
    _audit(make_target(DOCS), server)
    last = server.requests[1].body["messages"][1]["content"].split("# Last result", 1)[1]
    assert "run_query matched 120 documents; returned 50" in last
    assert [line.split()[0] for line in last.splitlines() if line.startswith("  #")] == ["#1", "#50"]
