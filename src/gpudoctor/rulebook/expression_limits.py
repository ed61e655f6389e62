"""Limits on rule expressions: what a condition may contain, and how large its values may grow.

Rule files are other people's data, so an expression must never be able to exhaust memory or
time. Two layers bound it:

* **at parse time** (:func:`expression_problem`, run by the loader and again, cached, before
  every evaluation): the text is at most :data:`MAX_EXPRESSION_CHARS` long, the tree at most
  :data:`MAX_NODES` nodes and :data:`MAX_DEPTH` levels deep; lambdas, walrus, ``await`` and
  ``yield`` are refused; an attribute is allowed only when it is in :data:`ALLOWED_ATTRIBUTES`
  (no ``_`` names, none of the methods that take a size such as ``center``, ``ljust``,
  ``zfill``, ``expandtabs``, ``format``, nothing that changes a fact in place); an f-string's
  format spec must be literal text with no width or precision above :data:`MAX_FORMAT_WIDTH`.
* **at run time** (:class:`BoundedEval`): every arithmetic result, function result and method
  result is checked — integers at most :data:`MAX_INT_BITS` bits (a power is refused *before*
  it is computed), strings and collections at most :data:`MAX_LENGTH` items, ``round`` at
  most :data:`MAX_FORMAT_WIDTH` digits, ``%`` formatting of strings refused; comprehensions
  stop after :data:`MAX_ITERATIONS` items. simpleeval's own limits are set to the same values.

A refused expression is an error in the loader and false at run time.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

MAX_EXPRESSION_CHARS = 4000
MAX_NODES = 400
MAX_DEPTH = 40
MAX_INT_BITS = 4096
"""About 1,200 decimal digits: far above any byte count, far below a slow ``str()``."""
MAX_LENGTH = 10_000
"""Longest string, list, tuple, dict or set an expression may build."""
MAX_ITERATIONS = 1_000
"""Most items all the comprehensions of one evaluation may go through."""
MAX_FORMAT_WIDTH = 100
"""Largest width or precision in an f-string format spec, and largest ``round`` digits."""

ALLOWED_ATTRIBUTES: dict[type, frozenset[str]] = {
    str: frozenset({
        "startswith", "endswith", "lower", "upper", "casefold", "strip", "lstrip", "rstrip",
        "split", "rsplit", "splitlines", "partition", "rpartition", "join", "count", "find",
        "rfind", "index", "rindex", "removeprefix", "removesuffix", "isdigit", "isdecimal",
        "isnumeric", "isalpha", "isalnum", "isspace", "islower", "isupper",
    }),
    dict: frozenset({"get", "keys", "values", "items"}),
    list: frozenset({"count", "index"}),
    tuple: frozenset({"count", "index"}),
}  # fmt: skip
"""Methods an expression may call, per type; every other attribute is refused."""

_ATTRIBUTE_NAMES = frozenset().union(*ALLOWED_ATTRIBUTES.values())
_REFUSED_NODES = (ast.Lambda, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom, ast.Starred)
_FORMAT_NUMBER = re.compile(r"\d+")


class LimitExceeded(Exception):
    """An expression went past one of the limits of this module."""


def expression_problem(expression: str) -> str | None:
    """Why ``expression`` is not an acceptable condition, or ``None`` when it is."""
    return _checked(expression)[1]


def parsed(expression: str) -> ast.Expr | None:
    """The expression's tree as simpleeval takes it, or ``None`` when it is not acceptable."""
    return _checked(expression)[0]


def syntax_tree(expression: str) -> ast.Expression:
    """Python's syntax tree of an expression, the one parse every reader of conditions uses.

    Raises :class:`SyntaxError`; the warnings Python's parser gives about odd literals
    (``1abc``) are not shown: the expression is reported as a whole by lint.
    """
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        return ast.parse(expression.strip(), mode="eval")


@cache
def _checked(expression: str) -> tuple[ast.Expr | None, str | None]:
    text = expression.strip()
    if len(text) > MAX_EXPRESSION_CHARS:
        return None, f"expression longer than {MAX_EXPRESSION_CHARS} characters"
    try:
        tree = syntax_tree(text)
    except SyntaxError as exc:
        return None, f"invalid expression: {exc.msg}"
    except (RecursionError, MemoryError, ValueError):
        return None, "expression too deeply nested"
    problem = _tree_problem(tree)
    if problem:
        return None, problem
    expr = ast.Expr(value=tree.body)
    ast.copy_location(expr, tree.body)
    return expr, None


def _tree_problem(tree: ast.Expression) -> str | None:
    nodes = 0
    stack: list[tuple[ast.AST, int]] = [(tree.body, 1)]
    while stack:
        node, depth = stack.pop()
        nodes += 1
        if nodes > MAX_NODES:
            return f"expression has more than {MAX_NODES} parts"
        if depth > MAX_DEPTH:
            return f"expression nested more than {MAX_DEPTH} levels deep"
        if isinstance(node, _REFUSED_NODES):
            return f"{type(node).__name__.lower()} is not allowed in a condition"
        if isinstance(node, ast.Attribute):
            if node.attr.startswith("_"):
                return f"attribute {node.attr!r} is not allowed"
            if node.attr not in _ATTRIBUTE_NAMES:
                return f"method {node.attr!r} is not allowed (allowed: {_allowed_list()})"
        if isinstance(node, ast.FormattedValue) and node.format_spec is not None:
            problem = _format_spec_problem(node.format_spec)
            if problem:
                return problem
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return None


def _format_spec_problem(spec: ast.expr) -> str | None:
    parts = spec.values if isinstance(spec, ast.JoinedStr) else [spec]
    if not all(isinstance(p, ast.Constant) and isinstance(p.value, str) for p in parts):
        return "an f-string format spec must be literal text"
    text = "".join(str(p.value) for p in parts if isinstance(p, ast.Constant))
    return _format_text_problem(text)


def _format_text_problem(spec: str) -> str | None:
    if any(int(n) > MAX_FORMAT_WIDTH for n in _FORMAT_NUMBER.findall(spec)):
        return f"format width or precision above {MAX_FORMAT_WIDTH}"
    return None


def _allowed_list() -> str:
    return ", ".join(sorted(_ATTRIBUTE_NAMES))


def check_value(value: object) -> object:
    """Return ``value`` when it is within the limits; raise :class:`LimitExceeded` if not."""
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise LimitExceeded(f"integer larger than {MAX_INT_BITS} bits")
    if isinstance(value, (str, bytes, list, tuple, dict, set, frozenset)) and (
        len(value) > MAX_LENGTH
    ):
        raise LimitExceeded(f"value longer than {MAX_LENGTH} items")
    return value


def _bounded(function: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        return check_value(function(*args, **kwargs))

    call.__name__ = getattr(function, "__name__", "function")
    call.__doc__ = function.__doc__
    return call


def _power(base: Any, exponent: Any) -> Any:
    if isinstance(base, (int, float)) and isinstance(exponent, (int, float)):
        magnitude = abs(float(base)) if base else 0.0
        if magnitude > 1 and exponent > 0:
            bits = float(exponent) * math.log2(magnitude)
            if bits > MAX_INT_BITS:
                raise LimitExceeded(f"power larger than {MAX_INT_BITS} bits")
        if isinstance(base, int) and isinstance(exponent, int) and abs(exponent) > MAX_INT_BITS:
            raise LimitExceeded("exponent too large")
    return check_value(operator.pow(base, exponent))


def _multiply(left: Any, right: Any) -> Any:
    for sized, count in ((left, right), (right, left)):
        if hasattr(sized, "__len__") and isinstance(count, int) and count * len(sized) > MAX_LENGTH:
            raise LimitExceeded(f"repetition longer than {MAX_LENGTH} items")
    if (
        isinstance(left, int)
        and isinstance(right, int)
        and left.bit_length() + right.bit_length() > MAX_INT_BITS + 1
    ):
        raise LimitExceeded(f"product larger than {MAX_INT_BITS} bits")
    return check_value(operator.mul(left, right))


def _modulo(left: Any, right: Any) -> Any:
    if isinstance(left, (str, bytes)):
        raise LimitExceeded("%-formatting of strings is not allowed; use an f-string")
    return check_value(operator.mod(left, right))


def _shift(shift: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def call(left: Any, right: Any) -> Any:
        if isinstance(right, int) and abs(right) > MAX_INT_BITS:
            raise LimitExceeded("shift too large")
        return check_value(shift(left, right))

    return call


def _round(number: Any, ndigits: Any = None) -> Any:
    if ndigits is not None and (not isinstance(ndigits, int) or abs(ndigits) > MAX_FORMAT_WIDTH):
        raise LimitExceeded(f"round() to more than {MAX_FORMAT_WIDTH} digits")
    return check_value(round(number, ndigits))


def bounded_functions(functions: Mapping[str, Callable[..., Any]]) -> dict[str, Callable[..., Any]]:
    """``functions`` with every result checked, and ``round`` limited in its digits."""
    wrapped = {name: _bounded(function) for name, function in functions.items()}
    if functions.get("round") is round:
        wrapped["round"] = _round
    return wrapped


def bounded_operators() -> dict[type, Callable[..., Any]]:
    """simpleeval's operators with every arithmetic result checked against the limits."""
    from simpleeval import DEFAULT_OPERATORS

    operators: dict[type, Callable[..., Any]] = dict(DEFAULT_OPERATORS)
    for node in (ast.Add, ast.Sub, ast.Div, ast.FloorDiv, ast.BitOr, ast.BitAnd, ast.BitXor):
        if node in operators:
            operators[node] = _bounded(operators[node])
    operators[ast.Pow] = _power
    operators[ast.Mult] = _multiply
    operators[ast.Mod] = _modulo
    operators[ast.LShift] = _shift(operator.lshift)
    operators[ast.RShift] = _shift(operator.rshift)
    return operators


def _set_library_limits() -> None:
    import simpleeval

    simpleeval.MAX_STRING_LENGTH = MAX_LENGTH
    simpleeval.MAX_COMPREHENSION_LENGTH = MAX_ITERATIONS
    simpleeval.MAX_POWER = MAX_INT_BITS
    simpleeval.MAX_SHIFT = MAX_INT_BITS


@cache
def _evaluator_class() -> Any:
    """The bounded simpleeval class, defined once (simpleeval is imported on first use)."""
    from simpleeval import EvalWithCompoundTypes

    _set_library_limits()

    class BoundedEval(EvalWithCompoundTypes):  # type: ignore[misc]
        """Checks the result of every call and of every f-string field."""

        def _eval_call(self, node: ast.Call) -> Any:
            return check_value(super()._eval_call(node))

        def _eval_formattedvalue(self, node: ast.FormattedValue) -> Any:
            if node.format_spec is not None:
                spec = self._eval(node.format_spec)
                problem = _format_text_problem(str(spec))
                if problem:
                    raise LimitExceeded(problem)
            return check_value(super()._eval_formattedvalue(node))

    return BoundedEval


def bounded_evaluator(names: Mapping[str, object], functions: Mapping[str, Any]) -> Any:
    """A simpleeval evaluator with every limit of this module in force."""
    evaluator = _evaluator_class()(
        operators=_OPERATORS or _operators(),
        functions=dict(functions),
        names=names,
        allowed_attrs=ALLOWED_ATTRIBUTES,
    )
    # EvalWithCompoundTypes adds list/tuple/dict/set: bound them too.
    evaluator.functions = bounded_functions(evaluator.functions)
    return evaluator


_OPERATORS: dict[type, Callable[..., Any]] = {}


def _operators() -> dict[type, Callable[..., Any]]:
    _OPERATORS.update(bounded_operators())
    return _OPERATORS
