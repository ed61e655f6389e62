"""Run by test_expression_limits in a child process capped in memory: evaluates each
expression read from stdin (a JSON list) and prints, as JSON, each value and how long it took.

Each expression is evaluated twice: through :class:`Evaluator` (parse-time checks, then the
bounded evaluator) and straight through the bounded evaluator, without the parse-time checks,
so that each layer is shown to hold on its own.
"""

from __future__ import annotations

import ast
import json
import resource
import sys
import time

MEMORY_CAP = 768 << 20


def main() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))
    from gpudoctor.rulebook.conditions import BASE_FUNCTIONS, Evaluator
    from gpudoctor.rulebook.expression_limits import bounded_evaluator

    results = []
    for expression in json.loads(sys.stdin.read()):
        started = time.perf_counter()
        checked = Evaluator({"s": "abc"}).value(expression)
        middle = time.perf_counter()
        raw: object = None
        try:
            tree = ast.Expr(value=ast.parse(expression, mode="eval").body)
            raw = bounded_evaluator({"s": "abc"}, BASE_FUNCTIONS).eval(expression, tree)
        except Exception as exc:  # any refusal is what this child reports
            raw = f"refused: {type(exc).__name__}"
        ended = time.perf_counter()
        results.append(
            {
                "checked": repr(checked),
                "raw": raw if isinstance(raw, str) and raw.startswith("refused") else repr(raw),
                "seconds": max(middle - started, ended - middle),
            }
        )
    print(json.dumps(results))


if __name__ == "__main__":
    main()
