"""The ReAct loop: propose, gate, act, observe, until a conclusion is accepted or a budget runs out.

The loop is the only code that mutates ``AgentState``. It always returns an ``AuditReport``:
``succeeded`` when the run gate accepted a conclusion and every check the planner planned
(``count_many``) was answered, ``partial`` when a planned check went unanswered (refused, timed
out, not asked within the budgets: named in the notes) or the iteration, wall-clock, request unit
or LLM (tokens, USD) budget ran out first, ``failed`` when the database became unreachable or the
planner broke. A tool error (bad query, timeout) is an observation, not a failure.
"""

from argus.agent.loop.run import AuditObserver, run_audit

__all__ = ["AuditObserver", "run_audit"]
