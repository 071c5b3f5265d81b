"""Tool schemas for the model, generated from the tool registry, and parsing of its answers.

Each tool is declared once (``agent.tools.registry.TOOLS``); its JSON schema here is the pydantic
input model's, with ``$ref`` inlined and titles dropped (smaller, and some self-hosted servers do
not resolve references). For servers without tool calling the same actions are asked for as a
JSON object under a JSON-schema response format. An answer that is no action raises
``InvalidAnswer``, whose message becomes the critique of the next prompt.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

from agent.llm.client import Completion
from agent.state import AgentAction
from agent.tools.registry import TOOLS

__all__ = ["InvalidAnswer", "action_from", "response_format", "tool_definitions"]

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


def input_schema(name: str) -> dict[str, Any]:
    raw = TOOLS[name].input_model.model_json_schema()
    schema: dict[str, Any] = _inline(raw, raw.get("$defs", {}))
    schema.setdefault("properties", {})["reasoning"] = _REASONING
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


def _object(text: str, what: str) -> dict[str, Any]:
    try:
        value = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise InvalidAnswer(f"{what} is not valid JSON ({exc.msg} at character {exc.pos}); send one JSON "
                            f"object") from None
    if not isinstance(value, dict):
        raise InvalidAnswer(f"{what} must be a JSON object, not {type(value).__name__}")
    return value


def _action(name: str, arguments: dict[str, Any], reasoning: str) -> AgentAction:
    if name not in TOOLS:
        raise InvalidAnswer(f"there is no tool {name!r}; call one of: {', '.join(TOOLS)}")
    why = arguments.pop("reasoning", None)
    text = reasoning or (why if isinstance(why, str) else "")
    return AgentAction(action=name, action_input=arguments, reasoning=text[:1000])


_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def action_from(completion: Completion) -> AgentAction:
    """The action in a completion: its first tool call, else a JSON object in its text."""
    content = (completion.content or "").strip()
    if completion.tool_calls:
        call = completion.tool_calls[0]
        return _action(call.name, _object(call.arguments, f"the arguments of {call.name}"), content)
    if not content:
        if completion.finish_reason == "length":
            raise InvalidAnswer("the answer was cut off at the output token limit; answer with one short tool call")
        raise InvalidAnswer("the answer was empty; call exactly one tool")
    fenced = _FENCE.match(content)
    data = _object(fenced.group(1) if fenced else content, "the answer")
    name = data.get("action")
    if not isinstance(name, str):
        raise InvalidAnswer("the answer has no \"action\"; call exactly one tool")
    arguments = data.get("action_input", {})
    if not isinstance(arguments, dict):
        raise InvalidAnswer("\"action_input\" must be a JSON object")
    reasoning = data.get("reasoning")
    return _action(name, dict(arguments), reasoning if isinstance(reasoning, str) else "")
