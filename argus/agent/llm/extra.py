"""The language-model client is an extra (``pip install 'argus-dq[llm]'``): the default heuristic
planner needs no model, so a user who never plans with one does not install the ``openai`` package.
A planner that needs it (``llm``, ``hybrid``) asks here first and gets an error naming the extra,
not an ImportError from deep inside the client."""

from __future__ import annotations

from collections.abc import Mapping

from argus.agent.errors import ArgusError

__all__ = ["INSTALL", "LLMExtraMissing", "require_llm_extra", "require_llm_extra_for"]

INSTALL = "pip install 'argus-dq[llm]'"


class LLMExtraMissing(ArgusError):
    """A planner that asks a model was chosen, but the LLM client (the ``llm`` extra) is not installed."""


def _installed() -> bool:
    try:
        import openai  # noqa: F401  (the import is the check: the client needs it, nothing less)
    except ImportError:
        return False
    return True


def require_llm_extra(kind: str) -> None:
    """Raise ``LLMExtraMissing`` when planner ``kind`` needs a model and ``openai`` cannot be imported."""
    if kind != "heuristic" and not _installed():
        raise LLMExtraMissing(f"planner {kind!r} needs the LLM client, which is not installed: {INSTALL}")


def require_llm_extra_for(planners: Mapping[str, str]) -> None:
    """The same for a schedules file (schedule name -> planner), naming the schedules that need a model."""
    needing = sorted(name for name, kind in planners.items() if kind != "heuristic")
    if needing and not _installed():
        raise LLMExtraMissing(f"schedule {', '.join(needing)} uses a planner that needs the LLM client, which is "
                              f"not installed: {INSTALL}")
