"""Rule conditions: Python-like expressions over facts and captures, evaluated safely.

Expressions are evaluated by `simpleeval <https://github.com/danthedeckie/simpleeval>`_, which
walks Python's own AST with a whitelist of operators and no access to attributes starting
with ``_``, builtins, imports or assignment. There is never an ``eval``.

Semantics rule authors rely on:

* a name is a fact (``driver_version``), a capture of the rule's pattern (``requested``) or a
  ``derived`` value of the rule; unknown facts are ``None``;
* a name nobody measured reads as ``None``: ``x == None`` holds, ``x > 3`` cannot be
  evaluated;
* a condition that cannot be evaluated (``None`` compared with a number, a division by zero)
  is **false**, never an error at run time;
* every expression is bounded in size, depth, the methods it may call and the values it may
  build (:mod:`gpudoctor.rulebook.expression_limits`); one that goes past a limit is refused
  by the loader and false at run time;
* functions: ``version(x)`` (numeric version comparison), ``matched("pattern_id")`` and
  ``count("pattern_id")`` (did, and how often did, one of the rule's patterns match),
  ``first("pattern_id", "capture")`` and ``last("pattern_id", "capture")`` (a capture of the
  first or last line that pattern matched, e.g. the epoch a job had reached),
  ``followed_by("pattern_a", "pattern_b")`` (a line of ``pattern_b`` comes right after one of
  ``pattern_a``, on the next line), ``at_end("pattern_id")`` (a line of that pattern is among
  the last five lines of its input: the log ended there),
  ``gib(n)``/``mib(n)`` (bytes), ``tensor_device(type_name)`` (the device a PyTorch tensor
  type names), ``arch_native(capability, arch_list)`` (whether those architectures include a
  cubin that runs on that GPU), ``str``, ``int``, ``float``, ``round``, ``len``, ``min``,
  ``max``, ``abs``, ``any``, ``all``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

from gpudoctor.rulebook.expression_limits import (
    LimitExceeded,
    bounded_evaluator,
    expression_problem,
    parsed,
    syntax_tree,
)
from gpudoctor.units import format_size
from gpudoctor.version_numbers import Version, parse_version


def _version(value: object) -> Version | None:
    if value is None:
        return None
    if isinstance(value, Version):
        return value
    return parse_version(str(value))


TENSOR_DEVICES = ("cuda", "xpu", "mps", "hip")
"""Device kinds a PyTorch tensor type can name besides the CPU, as they appear in its name."""


def tensor_device(type_name: object) -> str | None:
    """The device a PyTorch tensor type names: ``"cuda"`` for ``torch.cuda.HalfTensor`` or
    ``CUDABFloat16Type``, ``"xpu"`` for ``XPUFloatType``, ``"mps"``, ``"hip"``, and ``"cpu"``
    for ``torch.FloatTensor`` or ``CPUFloatType``; ``None`` for no type."""
    if not isinstance(type_name, str):
        return None
    lowered = type_name.lower()
    return next((device for device in TENSOR_DEVICES if device in lowered), "cpu")


def arch_native(capability: object, arch_list: object) -> bool | None:
    """Whether ``arch_list`` (``"sm_60 sm_70 compute_70"``) holds a cubin that runs on a GPU of
    ``capability`` (``"75"``, ``"sm_75"``, ``"7.5"``): one of the same major version and a
    minor no higher (sm_70 runs on 7.5). PTX does not count: a build's PTX is often only for its
    oldest architecture, and its libraries' kernels may have none. ``None`` when either is
    missing or not an architecture."""
    if not isinstance(capability, str | int) or not isinstance(arch_list, str):
        return None
    from gpudoctor.compat.archs import ArchList, ArchStatus, arch_supported

    archs = ArchList.from_strings(arch_list)
    if not archs.all:
        return None
    try:
        return arch_supported(str(capability), archs).status is ArchStatus.NATIVE
    except ValueError:
        return None


BASE_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "version": _version,
    "gib": lambda n: n * (1 << 30),
    "mib": lambda n: n * (1 << 20),
    "size": format_size,  # bytes as text, "2.00 GiB", for derived values
    "tensor_device": tensor_device,
    "arch_native": arch_native,
    "str": str,
    "int": int,
    "float": float,
    "round": round,
    "len": len,
    "min": min,
    "max": max,
    "abs": abs,
    "any": any,
    "all": all,
}


PATTERN_FUNCTIONS = ("matched", "count", "only", "first", "last", "followed_by", "at_end")
"""Functions the engine adds for a rule with patterns; each takes pattern ids of the rule
(``only`` one or more, ``first`` and ``last`` one and a capture name, ``followed_by`` two, the
others one)."""

COMPOUND_FUNCTIONS = ("list", "tuple", "dict", "set")
"""Constructors the evaluator adds for its compound types."""


def syntax_error(expression: str) -> str | None:
    """Return why ``expression`` is not a valid condition, or ``None`` when it is.

    Besides Python syntax, the limits of :mod:`gpudoctor.rulebook.expression_limits` apply
    (size, depth, allowed methods and format specs).
    """
    return expression_problem(expression)


@cache
def names_in(expression: str) -> frozenset[str]:
    """The bare names an expression reads (functions it calls left out)."""
    import ast

    try:
        tree = syntax_tree(expression)
    except (SyntaxError, RecursionError, MemoryError, ValueError):
        return frozenset()
    called = {
        node.func.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    bound = {  # names bound by comprehensions are not facts
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.comprehension)
        for target in ast.walk(node.target)
        if isinstance(target, ast.Name)
    }
    return frozenset({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - called - bound)


class _UnknownIsNone(dict[str, object]):
    """A namespace in which a name nobody measured reads as ``None``."""

    def __init__(self, backing: dict[str, object]) -> None:
        super().__init__()
        self._backing = backing

    def __getitem__(self, key: str) -> object:
        return self._backing.get(key)

    def __contains__(self, key: object) -> bool:
        return True


class Evaluator:
    """Evaluates expressions against one namespace of facts and captures."""

    def __init__(
        self,
        names: Mapping[str, object],
        functions: Mapping[str, Callable[..., Any]] | None = None,
    ) -> None:
        self._names = dict(names)
        self._functions = {**BASE_FUNCTIONS, **(functions or {})}
        self._engine: Any = None  # simpleeval is imported on first use

    def set(self, name: str, value: object) -> None:
        """Add or replace one name in the namespace."""
        self._names[name] = value

    def value(self, expression: str) -> object | None:
        """The expression's value, or ``None`` when it cannot be evaluated or goes past a
        limit of :mod:`gpudoctor.rulebook.expression_limits`."""
        from simpleeval import InvalidExpression

        tree = parsed(expression)
        if tree is None:
            return None
        if self._engine is None:
            self._engine = bounded_evaluator(_UnknownIsNone(self._names), self._functions)
        try:
            result: object = self._engine.eval(expression, previously_parsed=tree)
        except (InvalidExpression, LimitExceeded, TypeError, ValueError, ArithmeticError):
            return None
        except (AttributeError, KeyError, IndexError, RecursionError):
            return None
        return result

    def holds(self, expression: str) -> bool:
        """Whether the condition is true; unknown or failing conditions are false."""
        return bool(self.value(expression))
