"""Aggregation expressions (``$expr``, ``$project``, ``$group``) compiled into Python functions.

``compile_expression(expr, deadline)`` returns ``evaluate(document) -> value``. Field paths
(``"$a.b"``) read as the aggregation framework reads them: through an array of documents they
give the array of the values present; a missing field is ``MISSING``, which the comparison
operators order below null. Every operator on the guard's expression allow-list is here, one
module per family (``logic``, ``arrays``, ``strings``, ``arithmetic``, ``dates``);
arithmetic keeps MongoDB's types (int stays int, any Decimal128 makes Decimal128, ``$divide``
gives a double) and a type the server refuses raises ``OperationFailure``.
"""

from __future__ import annotations

from argus.agent.engine.expressions import arithmetic, arrays, dates, logic, strings
from argus.agent.engine.expressions.compiler import OPERATORS, Evaluate, compile_expression, field_getter

__all__ = ["OPERATORS", "Evaluate", "compile_expression", "field_getter"]

for _family in (logic, arrays, strings, arithmetic, dates):
    OPERATORS.update(_family.OPERATORS)
