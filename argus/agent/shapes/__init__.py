"""Document shapes: polymorphic collections (a discriminator and its shapes), polymorphic
fields and arrays that mix types, and renamed fields, found from the sample
(``argus.agent.shapes.discover``), judged per shape by the heuristic planner (``argus.agent.shapes.scoping``)."""

from argus.agent.shapes.models import Rename, Shape, ShapePath, Shapes, TypeMix

__all__ = ["Rename", "Shape", "ShapePath", "Shapes", "TypeMix"]
