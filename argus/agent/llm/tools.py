"""Tool schemas for the model, generated from the tool registry, and parsing of its answers.

Each tool is declared once (``argus.agent.tools.registry.TOOLS``); its JSON schema here is the pydantic
input model's, with ``$ref`` inlined and titles dropped (smaller, and some self-hosted servers do
not resolve references). For servers without tool calling the same actions are asked for as a
JSON object under a JSON-schema response format. An answer that is no action raises
``InvalidAnswer``, whose message becomes the critique of the next prompt.

Servers without a tool parser (a model's own chat template on llama.cpp, Ollama, vLLM without
``--tool-call-parser``) put the call in the text. The common shapes are accepted:
``{"name": ..., "arguments": {...}}`` (or ``"parameters"``), the same inside
``<tool_call>…</tool_call>`` or a ``[TOOL_CALLS]`` list, ``functions.NAME:`` or ``NAME`` followed
by the arguments, and ``{"action": ..., "action_input": {...}}`` (the JSON modes).
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

from argus.agent.ejson import MAX_NESTING, NestedTooDeep, parse_json
from argus.agent.llm.client import Completion
from argus.agent.privacy import Masker
from argus.agent.state import AgentAction
from argus.agent.text import clean
from argus.agent.tools.registry import TOOLS

__all__ = ["ANSWER_CHARS", "InvalidAnswer", "action_from", "answer_schema", "masked_answer", "response_format",
           "strip_fence", "tool_definitions"]

ANSWER_CHARS = 600  # of a failed answer kept in the trace and logs

_REASONING = {"type": "string", "description": "one or two sentences: why this step, what you expect"}


class InvalidAnswer(ValueError):
    """The model's answer is not one valid action; the message says what to do instead."""


def _inline(schema: Any, defs: dict[str, Any]) -> Any:
    if isinstance(schema, dict):
        if "$ref" in schema:
            name = schema["$ref"].rsplit("/", 1)[-1]
            return _inline(defs[name], defs)
        return {k: _inline(v, defs) for k, v in schema.items() if k not in ("title", "$defs")}
    if isinstance(schema, list):
        return [_inline(v, defs) for v in schema]
    return schema


# What a model needs to know about each input, where the pydantic models speak to programmers.
_FOR_MODEL: dict[str, dict[str, str]] = {
    "run_query": {
        "filter": "a MongoDB query document on the collection's fields, in relaxed Extended JSON: dates as "
                  "{\"$date\": \"2024-01-01T00:00:00Z\"}, never as a plain string; limit and projection go beside "
                  "it, not inside it",
    },
    "write_finding": {
        "field": "the field path the defect is in, as in the Schema section (e.g. address.zip)",
        "category": "the kind of defect",
        "severity": "critical needs at least 1% of documents affected and consumers breaking",
        "description": "one sentence a data owner understands: what is wrong, in how many documents",
        "hypothesis": "the likely cause, if you have one",
        "evidence_query": "the exact filter of the run_query that counted the affected documents",
        "affected_count": "that run_query's matched_count",
        "affected_pct": "affected_count divided by the collection size: a fraction between 0 and 1",
        "sample_values": "optional: up to five values you saw in the evidence query's result",
        "confirmed": "true when the count is exact",
    },
}


# Inputs only Argus itself fills in: a finding's declared rule is written by the contract stage.
_NOT_FOR_MODEL: dict[str, tuple[str, ...]] = {"write_finding": ("rule",)}


def input_schema(name: str) -> dict[str, Any]:
    raw = TOOLS[name].input_model.model_json_schema()
    schema: dict[str, Any] = _inline(raw, raw.get("$defs", {}))
    schema.pop("description", None)  # the model's docstring is for programmers; the tool has its own purpose
    properties = schema.setdefault("properties", {})
    for hidden in _NOT_FOR_MODEL.get(name, ()):
        properties.pop(hidden, None)
    for field, text in _FOR_MODEL.get(name, {}).items():
        if field in properties:
            properties[field]["description"] = text
    properties["reasoning"] = _REASONING
    return schema


@cache
def _definitions() -> str:
    return json.dumps([{"type": "function", "function": {"name": spec.name, "description": spec.purpose,
                                                          "parameters": input_schema(spec.name)}}
                       for spec in TOOLS.values()])


def tool_definitions() -> list[dict[str, Any]]:
    """The OpenAI ``tools`` list: one function per registry entry."""
    result: list[dict[str, Any]] = json.loads(_definitions())
    return result


def response_format() -> dict[str, Any]:
    """A JSON-schema response format for one action, for servers without tool calling."""
    return {"type": "json_schema", "json_schema": {"name": "agent_action", "schema": {
        "type": "object", "additionalProperties": False, "required": ["reasoning", "action", "action_input"],
        "properties": {"reasoning": _REASONING, "action": {"type": "string", "enum": list(TOOLS)},
                       "action_input": {"type": "object", "description": "the tool's input, as its schema says"}}}}}


def answer_schema() -> str:
    """The tools' inputs as compact JSON, for prompts of servers that take no schema (json_object, text)."""
    return json.dumps({name: input_schema(name) for name in TOOLS}, separators=(",", ":"))


def _object(text: str, what: str) -> dict[str, Any]:
    try:
        value = parse_json(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise InvalidAnswer(f"{what} is not valid JSON ({exc.msg} at character {exc.pos}); send one JSON "
                            f"object") from None
    except NestedTooDeep:
        raise InvalidAnswer(f"{what} is nested deeper than {MAX_NESTING} levels; send a flat query (MongoDB "
                            f"refuses deeper documents)") from None
    if not isinstance(value, dict):
        raise InvalidAnswer(f"{what} must be a JSON object, not {type(value).__name__}")
    return value


def _action(name: str, arguments: dict[str, Any], reasoning: str) -> AgentAction:
    if name not in TOOLS:
        raise InvalidAnswer(f"there is no tool {name!r}; call one of: {', '.join(TOOLS)}")
    why = arguments.pop("reasoning", None)
    text = reasoning or (why if isinstance(why, str) else "")
    return AgentAction(action=name, action_input=arguments, reasoning=text[:1000])


_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_NAMED = re.compile(r"^(?:functions\.)?([A-Za-z_][A-Za-z0-9_]*)\s*:?\s*(.*)$", re.DOTALL)
_PREFIXES = ("[TOOL_CALLS]", "<|python_tag|>")


def strip_fence(text: str) -> str:
    r"""The body of a reply fenced as ```json … ```, else the reply, stripped. String operations, not a
    regex: ``^```(?:json)?\s*(.*?)\s*```$`` took minutes on a reply of a few thousand spaces."""
    text = text.strip()
    if len(text) >= 6 and text.startswith("```") and text.endswith("```"):
        body = text[3:-3]
        return body.removeprefix("json").strip()
    return text


def _unwrap(content: str) -> str:
    """The JSON of a text answer, without code fences, tool-call tags or prefixes."""
    text = strip_fence(content)
    tagged = _TAGGED.search(text)
    if tagged:
        text = tagged.group(1).strip()
    for prefix in _PREFIXES:
        text = text.removeprefix(prefix).strip()
    return text


def _from_named(data: dict[str, Any]) -> AgentAction | None:
    """``{"name": ..., "arguments"|"parameters": ...}``, the arguments as an object or as JSON text."""
    name = data.get("name")
    if not isinstance(name, str) or "action" in data:
        return None
    arguments = data.get("arguments", data.get("parameters", {}))
    if isinstance(arguments, str):
        arguments = _object(arguments, f"the arguments of {name}")
    if not isinstance(arguments, dict):
        raise InvalidAnswer(f"the arguments of {name} must be a JSON object")
    return _action(name, dict(arguments), "")


def _from_text(content: str) -> AgentAction:
    text = _unwrap(content)
    if text.startswith("["):  # a list of calls ([TOOL_CALLS] style): take the first
        try:
            calls = parse_json(text)
        except NestedTooDeep:
            raise InvalidAnswer(f"the answer is nested deeper than {MAX_NESTING} levels; send a flat query "
                                f"(MongoDB refuses deeper documents)") from None
        except json.JSONDecodeError:
            calls = None
        if isinstance(calls, list) and calls and isinstance(calls[0], dict):
            text = json.dumps(calls[0])
    if not text.startswith("{"):
        named = _NAMED.match(text)
        if named is None or (named.group(1) not in TOOLS and not text.startswith("functions.")):
            raise InvalidAnswer("the answer is neither a tool call nor a JSON object; call exactly one tool")
        name, rest = named.group(1), named.group(2).strip()
        if not rest:
            raise InvalidAnswer(f"the call to {name} came without its arguments; send the tool call with a JSON "
                                f"object of arguments")
        return _action(name, _object(rest, f"the arguments of {name}"), "")
    data = _object(text, "the answer")
    named_call = _from_named(data)
    if named_call is not None:
        return named_call
    name = data.get("action")
    if not isinstance(name, str):
        raise InvalidAnswer("the answer has no \"action\"; call exactly one tool")
    arguments = data.get("action_input", {})
    if not isinstance(arguments, dict):
        raise InvalidAnswer("\"action_input\" must be a JSON object")
    reasoning = data.get("reasoning")
    return _action(name, dict(arguments), reasoning if isinstance(reasoning, str) else "")


def action_from(completion: Completion) -> AgentAction:
    """The action in a completion: its first tool call, else a tool call or JSON object in its text.
    Every string of it is cleaned of unpaired surrogates (``argus.agent.text``), the refusal's words too."""
    try:
        action = _action_from(completion)
    except InvalidAnswer as exc:
        raise InvalidAnswer(clean(str(exc))) from None
    return action.model_copy(update={"action": clean(action.action), "reasoning": clean(action.reasoning),
                                     "action_input": clean(action.action_input)})


def _action_from(completion: Completion) -> AgentAction:
    content = (completion.content or "").strip()
    if completion.tool_calls:
        call = completion.tool_calls[0]
        return _action(call.name, _object(call.arguments, f"the arguments of {call.name}"), content)
    if not content:
        if completion.finish_reason == "length":
            raise InvalidAnswer("the answer was cut off at the output token limit; answer with one short tool call")
        raise InvalidAnswer("the answer was empty; call exactly one tool")
    return _from_text(content)


_LITERAL = re.compile(r'"(?:[^"\\]|\\.)*"(\s*:)?|(?<![\w.$])-?\d+(?:\.\d+)?(?![\w.])')


def _mask_literal(match: re.Match[str]) -> str:
    token = match.group(0)
    if not token.startswith('"'):
        return "<number>"
    if match.group(1) is not None:  # a key: a field name or an operator
        return token
    inner = token[1:-1]
    return token if inner in TOOLS or inner.startswith("$") else '"<string>"'


def masked_answer(completion: Completion, masker: Masker) -> str:
    """A failed answer for the trace and logs: the text (or first call) with its values masked outside
    ``full`` privacy (keys, operators and tool names kept), cut to ``ANSWER_CHARS``."""
    if completion.tool_calls:
        call = completion.tool_calls[0]
        text = f"{call.name} {call.arguments}"
    else:
        text = completion.content or ""
    if masker.mode != "full":
        text = _LITERAL.sub(_mask_literal, text)
    text = clean(" ".join(text.split()))
    return text if len(text) <= ANSWER_CHARS else text[:ANSWER_CHARS] + "…"
