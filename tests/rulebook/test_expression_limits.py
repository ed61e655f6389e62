"""Rule expressions are bounded: hostile ones are refused, quickly, within a memory cap."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gpudoctor.rulebook.conditions import Evaluator, syntax_error
from gpudoctor.rulebook.expression_limits import MAX_DEPTH, MAX_NODES

CHILD = Path(__file__).with_name("hostile_eval_child.py")
SECONDS = 1.0
"""Each refusal takes milliseconds; without the limits these take minutes or gigabytes."""

HOSTILE = [
    "'a'.center(3000000000)",
    "'a'.ljust(3000000000)",
    "'a'.rjust(3000000000)",
    "'1'.zfill(3000000000)",
    "('\\t' * 100).expandtabs(100000000)",
    "'{:>999999999}'.format(1)",
    "f'{1:>999999999}'",
    "f'{1:>{10**9}}'",
    "'%999999999d' % 1",
    "10**10**10",
    "9**9**9 > 0",
    "(2**4000) * (2**4000) * (2**4000)",
    "'a' * 10**9",
    "[0] * 10**9",
    "(s * 3000) * 3000",
    "1 << 10**9",
    "str(10**100000)",
    "gib(gib(gib(gib(10**1200))))",
    "gib(10**10**10)",
    "mib(2**4095)",
    "round(1, -10**9)",
    "round(1.5, 10**9)",
    "(1).to_bytes(10**9, 'big')",
    "[[x for x in s * 3000] for y in s * 3000]",
    "len([s * 3333 for x in s * 3000 for y in s * 3000])",
    "max(x for x in s * 3000 for y in s * 3000 for z in s * 3000)",
]


@pytest.fixture(scope="module")
def outcomes() -> dict[str, dict[str, Any]]:
    completed = subprocess.run(
        [sys.executable, str(CHILD)],
        input=json.dumps(HOSTILE),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    return dict(zip(HOSTILE, json.loads(completed.stdout), strict=True))


@pytest.mark.parametrize("expression", HOSTILE)
def test_hostile_expressions_are_refused_quickly_in_both_layers(
    expression: str, outcomes: dict[str, dict[str, Any]]
) -> None:
    outcome = outcomes[expression]
    assert outcome["checked"] == "None"  # Evaluator.value: cannot be evaluated, so false
    assert outcome["raw"].startswith("refused"), outcome["raw"]
    assert "MemoryError" not in outcome["raw"] and "RecursionError" not in outcome["raw"]
    assert outcome["seconds"] < SECONDS


@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        ("'a'.center(10)", "method 'center' is not allowed"),
        ("'a'.ljust(10)", "method 'ljust' is not allowed"),
        ("'a'.zfill(10)", "method 'zfill' is not allowed"),
        ("'a'.expandtabs(10)", "method 'expandtabs' is not allowed"),
        ("'{}'.format(1)", "method 'format' is not allowed"),
        ("x.append(1)", "method 'append' is not allowed"),
        ("x.__class__", "attribute '__class__' is not allowed"),
        ("x._hidden", "attribute '_hidden' is not allowed"),
        ("(lambda: 1)()", "lambda is not allowed"),
        ("(y := 1)", "namedexpr is not allowed"),
        ("f'{x:>999}'", "format width or precision above 100"),
        ("f'{x:{w}}'", "an f-string format spec must be literal text"),
        ("import os", "invalid expression"),
        ("[" + ",".join(["1"] * MAX_NODES) + "]", f"more than {MAX_NODES} parts"),
        ("-" * (MAX_DEPTH + 1) + "1", f"more than {MAX_DEPTH} levels deep"),
        ("1 + " * 2000 + "1", "longer than 4000 characters"),
    ],
)
def test_refused_at_parse_time_with_a_reason(expression: str, reason: str) -> None:
    problem = syntax_error(expression)
    assert problem is not None and reason in problem


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("gib(2) + mib(512)", 2 * 1024**3 + 512 * 1024**2),
        ("', '.join(str(v) for v in [1, 2])", "1, 2"),
        ("f'{total / gib(1):.1f} GiB'", "2.0 GiB"),
        ("size(total) + ' free'", "2.00 GiB free"),
        ("any(x in [79, 48] for x in codes)", True),
        ("name.lower().startswith('tesla')", True),
        ("round(1.2345, 2)", 1.23),
        ("2 ** 64", 1 << 64),
        ("d.get('k', 0) + 1", 2),
    ],
)
def test_ordinary_expressions_still_work(expression: str, value: object) -> None:
    names = {"total": 2 * 1024**3, "codes": [13, 79], "name": "Tesla V100", "d": {"k": 1}}
    assert syntax_error(expression) is None
    assert Evaluator(names).value(expression) == value


def test_an_expression_cannot_change_a_fact() -> None:
    facts: dict[str, object] = {"codes": [1]}
    evaluator = Evaluator(facts)
    assert evaluator.value("codes.append(2) or codes") is None
    assert evaluator.value("codes") == [1]
