"""Shapes found from the sample: the discriminator from values, each shape's share and paths."""

from __future__ import annotations

from argus.agent.shapes.discover import discover
from tests.agent.shapes.collections import payments, renamed_orders


def test_the_discriminator_is_the_field_whose_value_predicts_the_other_paths() -> None:
    shapes = discover(payments(1000))

    assert shapes.discriminator == "method"
    assert [(s.label, s.sampled, s.specific) for s in shapes.shapes] == [
        ("card", 600, ["card", "card.brand", "card.last4"]), ("iban", 370, ["bic", "iban"]), ("cash", 30, [])]
    assert shapes.summary() == ("3 shapes by `method`: card 60% (card, card.brand, card.last4), "
                                "iban 37% (bic, iban), cash 3%")


def test_the_discriminator_is_found_whatever_its_name_and_values() -> None:
    docs = payments(1000)
    for doc in docs:
        doc["k"] = {"card": 7, "iban": 8, "cash": 9}[doc.pop("method")]

    shapes = discover(docs)

    assert shapes.discriminator == "k"
    assert [(s.value, s.sampled) for s in shapes.shapes] == [(7, 600), (8, 370), (9, 30)]


def test_a_shape_keeps_each_path_with_its_presence_and_types() -> None:
    shapes = discover(payments(1000, missing_iban=37))

    iban = shapes.shapes[1]
    assert {p.path: (p.presence, p.types) for p in iban.paths if p.path in ("iban", "bic", "amount")} == {
        "iban": (0.9, {"string": 333}), "bic": (1.0, {"string": 370}), "amount": (1.0, {"number": 370})}


def test_a_low_cardinality_field_that_predicts_nothing_is_no_discriminator() -> None:
    shapes = discover(renamed_orders(1000, at=1000))  # status takes three values, every order the same paths

    assert shapes.discriminator is None and shapes.shapes == []
    assert shapes.summary() == "one shape"


def test_geojson_geometry_types_are_shapes_by_how_deep_coordinates_nest() -> None:
    docs = []
    for i in range(300):
        kind = ("Point", "LineString", "Polygon")[i % 3]
        coordinates = {"Point": [4.9, 52.3], "LineString": [[4.9, 52.3], [4.91, 52.31]],
                       "Polygon": [[[4.9, 52.3], [4.91, 52.3], [4.91, 52.31], [4.9, 52.3]]]}[kind]
        docs.append({"type": "Feature", "geometry": {"type": kind, "coordinates": coordinates},
                     "properties": {"id": i}})

    shapes = discover(docs)

    assert shapes.discriminator == "geometry.type"
    assert [(s.label, s.sampled, s.specific) for s in shapes.shapes] == [
        ("LineString", 100, ["geometry.coordinates: array<array<number>>"]),
        ("Point", 100, ["geometry.coordinates: array<number>"]),
        ("Polygon", 100, ["geometry.coordinates: array<array<array<number>>>"])]
