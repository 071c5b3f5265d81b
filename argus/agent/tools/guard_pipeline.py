"""The read-only guard's checks of projections and aggregation pipelines (``check_pipeline``): only the
read stages Argus sends (``PIPELINE_STAGES``), each stage's body checked as ``guard`` checks filters and
expressions, so nothing that writes (``$out``, ``$merge``), runs code or reads another collection passes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bson import Int64

from argus.agent.errors import QueryRefused
from argus.agent.tools.guard import (
    FIELD_SEGMENT,
    GROUP_ACCUMULATORS,
    PIPELINE_STAGES,
    check_expression_value,
    check_field_path,
    check_filter,
    refuse,
    wire_view,
)

__all__ = ["check_pipeline", "check_projection"]


def check_projection(projection: Any) -> None:
    """Only plain inclusion or exclusion of plain paths: ``{"a.b": 1, "_id": 0}``."""
    if projection is None:
        return
    view = wire_view(projection, "a projection")
    if not isinstance(view, Mapping):
        raise QueryRefused("a projection must be a document of path: 0 or 1", operator="shape")
    for path, flag in view.items():
        check_field_path(path)
        if isinstance(flag, bool) or (type(flag) is int and flag in (0, 1)):
            continue
        raise QueryRefused(f"projection of {path!r} must be 0 or 1; computed projections are refused",
                           operator="projection")


def check_pipeline(pipeline: Any) -> None:
    """Refuse any pipeline with a stage outside ``PIPELINE_STAGES`` or a body the stage does not allow."""
    view = wire_view(pipeline, "a pipeline")
    if not isinstance(view, list):
        raise QueryRefused("a pipeline must be a list of stages", operator="shape")
    _check_stages(view, in_facet=False)


def _positive_int(value: Any, *, zero: bool = False) -> bool:
    return isinstance(value, int | Int64) and not isinstance(value, bool) and (value >= 0 if zero else value > 0)


def _check_stages(stages: list[Any], *, in_facet: bool) -> None:
    where = "a $facet sub-pipeline" if in_facet else "a pipeline"
    for stage in stages:
        if not isinstance(stage, Mapping) or len(stage) != 1:
            raise QueryRefused("each pipeline stage must be a document with exactly one stage operator",
                               operator="stage")
        (name, body), = stage.items()
        if name not in PIPELINE_STAGES:
            raise refuse(name, where)
        if name == "$match":
            check_filter(body, where="a $match stage")
        elif name == "$facet":
            if in_facet:
                raise QueryRefused("$facet cannot stand inside another $facet", operator="$facet")
            if not isinstance(body, Mapping) or not body:
                raise QueryRefused("$facet needs a document of sub-pipelines", operator="$facet")
            for output, sub in body.items():
                _check_output_name(output, "$facet")
                if not isinstance(sub, list):
                    raise QueryRefused("each $facet output needs a list of stages", operator="$facet")
                _check_stages(sub, in_facet=True)
        elif name in ("$limit", "$skip"):
            if not _positive_int(body, zero=name == "$skip"):
                raise QueryRefused(f"{name} needs a {'non-negative' if name == '$skip' else 'positive'} integer",
                                   operator=name)
        elif name == "$count":
            _check_output_name(body, "$count")
        elif name == "$sample":
            if not isinstance(body, Mapping) or set(body) != {"size"} or not _positive_int(body["size"]):
                raise QueryRefused("$sample needs exactly {size: N} with a positive integer N", operator="$sample")
        elif name == "$sort":
            if not isinstance(body, Mapping) or not body:
                raise QueryRefused("$sort needs a document of path: 1 or -1", operator="$sort")
            for path, direction in body.items():
                check_field_path(path)
                if type(direction) is not int or direction not in (1, -1):
                    raise QueryRefused(f"$sort of {path!r} must be 1 or -1", operator="$sort")
        elif name == "$unwind":
            _check_unwind(body)
        elif name == "$group":
            _check_group(body)
        elif name in ("$project", "$addFields"):
            if not isinstance(body, Mapping) or not body:
                raise QueryRefused(f"{name} needs a document of fields", operator=name)
            for path, expr in body.items():
                check_field_path(path)
                check_expression_value(expr, f"a {name} stage")
        else:  # $sortByCount
            check_expression_value(body, f"a {name} stage")


def _check_output_name(name: Any, stage: str) -> None:
    if not isinstance(name, str) or not FIELD_SEGMENT.match(name):
        raise QueryRefused(f"{stage} needs a plain output field name", operator=stage)


def _check_unwind(body: Any) -> None:
    spec = {"path": body} if isinstance(body, str) else body
    if not isinstance(spec, Mapping) or not set(spec) <= {"path", "includeArrayIndex", "preserveNullAndEmptyArrays"}:
        raise QueryRefused("$unwind needs a $path or {path, includeArrayIndex, preserveNullAndEmptyArrays}",
                           operator="$unwind")
    path = spec.get("path")
    if not isinstance(path, str) or not path.startswith("$") or path.startswith("$$"):
        raise QueryRefused("$unwind needs a field path written as $path", operator="$unwind")
    check_field_path(path[1:])
    if "includeArrayIndex" in spec:
        _check_output_name(spec["includeArrayIndex"], "$unwind")
    if not isinstance(spec.get("preserveNullAndEmptyArrays", False), bool):
        raise QueryRefused("$unwind preserveNullAndEmptyArrays must be true or false", operator="$unwind")


def _check_group(body: Any) -> None:
    if not isinstance(body, Mapping) or "_id" not in body:
        raise QueryRefused("$group needs a document with _id", operator="$group")
    for output, spec in body.items():
        if output == "_id":
            check_expression_value(spec, "a $group stage")
            continue
        _check_output_name(output, "$group")
        if not isinstance(spec, Mapping) or len(spec) != 1:
            raise QueryRefused(f"$group output {output!r} needs exactly one accumulator", operator="$group")
        (accumulator, expr), = spec.items()
        if accumulator not in GROUP_ACCUMULATORS:
            raise refuse(accumulator, "a $group stage")
        check_expression_value(expr, "a $group stage")
