"""Rules to JSON data and back: every field survives, and nothing unexpected is accepted."""

from __future__ import annotations

import dataclasses
import json

import pytest

from gpudoctor.rulebook.book import load_rulebook
from gpudoctor.rulebook.codec import (
    ADJUSTMENT_FIELDS,
    EXAMPLE_FIELDS,
    PATTERN_FIELDS,
    RULE_FIELDS,
    CodecError,
    rule_from_data,
    rule_to_data,
)
from gpudoctor.rulebook.model import Adjustment, Example, Pattern, Rule


@pytest.mark.parametrize(
    ("model", "order"),
    [(Rule, RULE_FIELDS), (Pattern, PATTERN_FIELDS), (Adjustment, ADJUSTMENT_FIELDS),
     (Example, EXAMPLE_FIELDS)],
)  # fmt: skip
def test_records_list_every_field_of_the_model(model: type, order: tuple[str, ...]) -> None:
    assert [f.name for f in dataclasses.fields(model)] == list(order)


def test_the_bundled_pack_round_trips_through_json() -> None:
    rules = load_rulebook().rules
    back = tuple(rule_from_data(json.loads(json.dumps(rule_to_data(r)))) for r in rules)
    assert back == rules
    # Locations do not take part in equality; compare them apart.
    for old, new in zip(rules, back, strict=True):
        assert [(p.location, p.captures) for p in old.patterns] == [
            (p.location, p.captures) for p in new.patterns
        ]
        examples = (*old.examples_match, *old.examples_no_match)
        again = (*new.examples_match, *new.examples_no_match)
        assert [e.location for e in examples] == [e.location for e in again]
        assert all(e.location is not None for e in again)


def test_records_are_lists_in_field_order() -> None:
    rule = load_rulebook().rules[0]
    data = rule_to_data(rule)
    assert data[RULE_FIELDS.index("id")] == rule.id
    assert data[RULE_FIELDS.index("severity")] == rule.severity.value
    assert data[RULE_FIELDS.index("path")] == rule.path


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("id", 7),
        ("severity", "fatal"),
        ("role", None),
        ("confidence", True),
        ("confidence", "0.5"),
        ("fix", "one step"),
        ("fix", ["ok", 3]),
        ("derived", {"x": 1}),
        ("patterns", [["p", "x", "no", {}, None]]),
        ("patterns", [["p", "x", False, {"n": "bytes"}, None]]),
        ("patterns", [["p", "x", False, {}]]),
        ("adjust", [["a > 1", "0.1", "why"]]),
        ("examples_match", [["text", [], None]]),
        ("examples_match", [["text", {}, [1, 2, 3]]]),
        ("examples_no_match", [["text", {}, ["1", 2]]]),
    ],
)
def test_wrong_values_are_refused(field: str, value: object) -> None:
    data = rule_to_data(load_rulebook().rules[0])
    data[RULE_FIELDS.index(field)] = value
    with pytest.raises(CodecError):
        rule_from_data(data)


@pytest.mark.parametrize("data", [None, {}, [], "rule", [None] * len(RULE_FIELDS)])
def test_wrong_shapes_are_refused(data: object) -> None:
    with pytest.raises(CodecError):
        rule_from_data(data)


def test_an_extra_field_is_refused() -> None:
    data = rule_to_data(load_rulebook().rules[0])
    with pytest.raises(CodecError):
        rule_from_data([*data, "extra"])
