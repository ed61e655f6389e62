"""Structure readers: the shape of a log turned into facts, in the scanner's single pass.

A rule's patterns recognise a message by its words. A structure reader recognises what a log
*is made of* — a pasted ``nvidia-smi`` table, a Python traceback, the line where a launcher
reports how a process ended — and turns it into typed facts that rules test like any other
(``exception_type``, ``exit_signal``, ``smi_processes_count``).

Each reader is a module with two members:

- ``PATTERNS``: the :class:`~gpudoctor.logs.scanner.PatternSpec` lines it needs, scanned in
  the same pass as the rules' patterns (their keys start with ``facts/``, which no rule id
  can, since rule ids have no ``/``);
- ``facts(hits, input_lines)``: the facts it reads from the scanner's hits of those patterns
  (``input_lines`` gives each input's line count, where it is known, for a reader that asks
  where a line stands in its input).

:data:`READERS` lists them; the pipeline asks for :func:`structure_patterns` when it builds
the scanner and for :func:`structure_facts` when it assembles the facts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import ModuleType

from gpudoctor.logs.scanner import PatternHits, PatternSpec
from gpudoctor.logs.structure import endings, errors, pasted, series, tracebacks

READERS: tuple[ModuleType, ...] = (pasted, tracebacks, endings, series, errors)
"""Every structure reader, in the order their facts are merged (an earlier one wins)."""


def structure_patterns() -> list[PatternSpec]:
    """The patterns of every structure reader."""
    return [spec for reader in READERS for spec in reader.PATTERNS]


def structure_facts(
    hits: Mapping[str, PatternHits], input_lines: Sequence[int | None] = ()
) -> dict[str, object]:
    """The facts every structure reader finds in ``hits``; an earlier reader wins a name.
    ``input_lines`` gives each input's line count (``None`` where it is not known)."""
    found: dict[str, object] = {}
    for reader in READERS:
        for name, value in reader.facts(hits, input_lines).items():
            found.setdefault(name, value)
    return found


def structure_fact_names() -> frozenset[str]:
    """Every fact name some structure reader can produce (for ``rules lint``)."""
    names: set[str] = set()
    for reader in READERS:
        names |= reader.fact_names()
    return frozenset(names)
