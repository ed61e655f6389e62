"""The one registry of facts: every declaration of every source, collected and checked.

Each source declares the facts it produces next to the code that produces them, as a
``FACTS`` tuple of :class:`~gpudoctor.facts.spec.FactSpec`: the snapshot
(:mod:`gpudoctor.facts.machine`), the compatibility verdicts (:mod:`gpudoctor.facts.compat`),
the exit status and the run timeline (:mod:`gpudoctor.runner.exit_status`,
:mod:`gpudoctor.runner.timeline`) and every structure reader listed in
:data:`gpudoctor.logs.structure.READERS` (each reader module has its own ``FACTS``). This
module only collects them: ``rules lint`` asks it which names exist, and ``gpudoctor rules
facts`` prints it as documentation.

One name may be declared by several sources (``driver_version`` comes from a pasted
``nvidia-smi`` banner as well as from the snapshot) as long as they agree on its type; a
source whose fact may be missing says ``str|None`` where another always has it says ``str``,
and that is the same type.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from types import ModuleType

from gpudoctor.facts.spec import FactSpec


class FactConflict(ValueError):
    """Two sources declare one fact name with different types."""


@dataclass(frozen=True)
class RegisteredFact:
    """A fact name with every declaration of it, in source order."""

    name: str
    specs: tuple[FactSpec, ...]

    @property
    def type(self) -> str:
        """The widest declared type (``str|None`` over ``str``)."""
        return max((s.type for s in self.specs), key=lambda t: (_base_type(t) != t, len(t)))

    @property
    def unit(self) -> str:
        """The first declared unit other than ``-``, else ``-``."""
        return next((s.unit for s in self.specs if s.unit != "-"), "-")

    @property
    def sources(self) -> tuple[str, ...]:
        """Every source that can produce it."""
        return tuple(dict.fromkeys(s.source for s in self.specs))


def _base_type(type_text: str) -> str:
    """The type without its ``|None`` (optional and always-present are the same type)."""
    parts = [p.strip() for p in type_text.split("|")]
    return "|".join(p for p in parts if p != "None") or "None"


def source_modules() -> tuple[ModuleType, ...]:
    """Every module that declares facts: the snapshot, the compat verdicts, the readers, the run."""
    from gpudoctor.facts import compat, machine
    from gpudoctor.logs.structure import READERS
    from gpudoctor.runner import exit_status, timeline

    return (machine, compat, *READERS, exit_status, timeline)


def collect(specs: Iterable[FactSpec]) -> dict[str, RegisteredFact]:
    """Group declarations by name, in first-declared order.

    Raises :class:`FactConflict` when two declarations of one name disagree on its type,
    or when a name is not an identifier a condition could use.
    """
    grouped: dict[str, list[FactSpec]] = {}
    for spec in specs:
        if not spec.name.isidentifier():
            raise FactConflict(f'fact "{spec.name}" ({spec.source}) is not an identifier')
        grouped.setdefault(spec.name, []).append(spec)
    for name, group in grouped.items():
        types = {_base_type(s.type) for s in group}
        if len(types) > 1:
            declared = ", ".join(f"{s.type} ({s.source})" for s in group)
            raise FactConflict(f'fact "{name}" is declared with conflicting types: {declared}')
    return {name: RegisteredFact(name, tuple(group)) for name, group in grouped.items()}


def declarations(modules: Sequence[ModuleType] | None = None) -> list[FactSpec]:
    """Every ``FACTS`` entry of ``modules`` (default: :func:`source_modules`), in order."""
    found: list[FactSpec] = []
    for module in source_modules() if modules is None else modules:
        found.extend(module.FACTS)
    return found


@cache
def registry() -> dict[str, RegisteredFact]:
    """Every fact of every source, checked (see :func:`collect`)."""
    return collect(declarations())


def known_fact_names() -> frozenset[str]:
    """Every fact name some source can produce (what ``rules lint`` accepts)."""
    return frozenset(registry())
