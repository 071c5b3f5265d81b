"""Prompts: within budget, deterministic with a stable prefix, trimmed history, hints, privacy modes."""

from __future__ import annotations

from typing import Any

from argus.agent.llm.options import LLMOptions
from argus.agent.llm.tokens import estimate_messages, estimate_tokens
from argus.agent.loop import run_audit
from argus.agent.options import AuditOptions
from argus.agent.planners.factory import make_planner
from argus.agent.privacy import Masker
from tests.doubles.explorer import Explorer
from tests.doubles.model_server import LocalChatServer

WIDE = [{**{f"attr_{k:03d}": (i * k) % 97 for k in range(120)},
         **{f"text_{k:02d}": f"value-{i}-{k}" for k in range(60)},
         "mixed": str(i) if i % 10 == 0 else i, "status": ["paid", "shipped", "Piad"][i % 3 if i % 50 else 2]}
        for i in range(300)]
PEOPLE = [{"email": f"user{i}@mail.org", "status": ["paid", "shipped"][i % 2], "age": 20 + i % 50}
          for i in range(200)]


def _prompts(target: Any, server: LocalChatServer, *, budget: int = 8000, privacy: str = "shapes") -> list[str]:
    setup = make_planner("llm", llm=LLMOptions(model="gpt-4o-mini", base_url=server.base_url,
                                               prompt_token_budget=budget))
    run_audit(target, setup.planner, gates=setup.gates, llm=setup.account,
              options=AuditOptions(privacy=privacy))  # type: ignore[arg-type]
    return [r.body["messages"][1]["content"] for r in server.requests if "tools" in r.body]


def test_every_prompt_fits_its_budget_on_a_wide_collection(make_target: Any, chat_server: Any) -> None:
    server = chat_server(Explorer([f"attr_{k:03d}" for k in range(0, 120, 7)], steps=16))
    _prompts(make_target(WIDE), server, budget=4000)
    sizes = [estimate_messages(r.body["messages"], r.body.get("tools")) for r in server.requests]
    assert len(sizes) > 16 and max(sizes) <= 4000
    first = server.requests[0].body["messages"][1]["content"]
    assert "182 field paths" in first and "Other fields, fewer signals" in first and "more (any path" in first


def test_suspicious_fields_rank_first(make_target: Any, chat_server: Any) -> None:
    server = chat_server(Explorer(["status"], steps=1))
    [first, *_] = _prompts(make_target(WIDE), server, budget=4000)
    schema = first.split("# Schema", 1)[1]
    assert schema.index("- mixed: int 270, string 30") < schema.index("attr_001")


def test_the_same_audit_gives_the_same_prompts_and_a_stable_prefix(make_target: Any, chat_server: Any) -> None:
    runs = [_prompts(make_target(PEOPLE, name="people"), chat_server(Explorer(["email", "status", "age"], steps=6)))
            for _ in range(2)]
    assert runs[0] == runs[1]
    prefixes = {p.split("# Progress", 1)[0] for p in runs[0]}
    assert len(prefixes) == 1


def test_older_actions_are_summarised_outside_the_window(make_target: Any, chat_server: Any) -> None:
    prompts = _prompts(make_target(PEOPLE), chat_server(Explorer(["email", "status", "age"], steps=16)))
    last = prompts[-1]
    assert "Iterations 0-" in last and "(summarised)" in last and "#0 schema_sample" not in last
    assert sum(1 for line in last.splitlines() if line.startswith("#") and line[1:2].isdigit()) <= 10


def test_a_refused_regex_comes_back_as_the_critique_of_the_next_prompt(make_target: Any, chat_server: Any) -> None:
    prompts = _prompts(make_target(PEOPLE), chat_server(Explorer(["email", "status", "age"], steps=8)))
    after = next(p for p in prompts if "$regex in a filter is refused" in p)
    assert "# Critique of your last step (fix this)\n$regex in a filter is refused: the pattern is not a valid " \
           "regular expression (missing ), unterminated subpattern)" in after


def test_strict_prompts_hold_types_and_statistics_only(make_target: Any, chat_server: Any) -> None:
    text = "\n".join(_prompts(make_target(PEOPLE), chat_server(Explorer(["email", "status"], steps=5)),
                              privacy="strict"))
    assert "@mail.org" not in text and "paid" not in text and "shape:" not in text and "a+9+@" not in text
    assert "- email: string 200" in text and "age: int 200" in text


def test_shapes_prompts_show_shapes_and_categorical_values(make_target: Any, chat_server: Any) -> None:
    text = "\n".join(_prompts(make_target(PEOPLE), chat_server(Explorer(["email", "status"], steps=5))))
    assert "@mail.org" not in text and "a+9+@a+.a+" in text and '"paid"' in text


def test_full_prompts_may_show_raw_values(make_target: Any, chat_server: Any) -> None:
    text = "\n".join(_prompts(make_target(PEOPLE), chat_server(Explorer(["email", "status"], steps=5)),
                              privacy="full"))
    assert "@mail.org" in text


def test_filters_from_other_planners_are_masked() -> None:
    masker = Masker("shapes", {"status": frozenset({"paid"})})
    masked = masker.filter({"status": {"$in": ["paid", "Piad"]}, "email": {"$regex": "^x", "$options": "i"},
                            "age": {"$gt": 130}, "zip": {"$exists": True, "$type": "string"}})
    assert masked == {"status": {"$in": ["paid", "shape:Aa+"]}, "email": {"$regex": "<pattern>", "$options": "i"},
                      "age": {"$gt": "3-digit number"}, "zip": {"$exists": True, "$type": "string"}}
    assert Masker("strict").filter({"status": "paid"}) == {"status": "<string>"}


def test_token_estimates_are_deterministic_and_count_symbols() -> None:
    text = '{"age":{"$gt":130}}'
    assert estimate_tokens(text) == estimate_tokens(text) >= 10
    assert estimate_tokens("the quick brown fox") >= 4


def _payments() -> list[dict[str, Any]]:
    from tests.agent.shapes.collections import payments

    return payments(400, missing_iban=6)


def test_the_prompt_names_the_shapes_and_the_fields_to_judge_within_them(make_target: Any, chat_server: Any) -> None:
    server = chat_server(Explorer(["iban"], steps=1))
    [first, *_] = _prompts(make_target(_payments()), server, budget=4000)
    assert max(estimate_messages(r.body["messages"], r.body.get("tools")) for r in server.requests) <= 4000
    shapes = first.split("# Shapes\n", 1)[1].split("\n#", 1)[0]
    assert shapes.startswith("3 shapes by `method`: card 60% (card, card.brand, card.last4), iban 37% (bic, iban), "
                             "cash 3%.\nFields of some shapes only (judge their missing values within those shapes, "
                             "with method in the filter): bic in iban; card in card;")


def test_in_strict_mode_the_prompt_names_shapes_by_their_rank(make_target: Any, chat_server: Any) -> None:
    [first, *_] = _prompts(make_target(_payments()), chat_server(Explorer(["iban"], steps=1)), budget=4000,
                           privacy="strict")
    assert "3 shapes by `method`: #1 60% (card, card.brand, card.last4), #2 37% (bic, iban), #3 3%." in first
    assert "card 60%" not in first and "iban in #2" in first
