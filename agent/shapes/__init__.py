"""Document shapes: polymorphic collections (a discriminator and its shapes), polymorphic
fields and arrays that mix types, and renamed fields, found from the sample
(``agent.shapes.discover``), judged per shape by the heuristic planner (``agent.shapes.scoping``)."""

from agent.shapes.models import Rename, Shape, ShapePath, Shapes, TypeMix

__all__ = ["Rename", "Shape", "ShapePath", "Shapes", "TypeMix"]
