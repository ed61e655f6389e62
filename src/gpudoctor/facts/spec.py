"""How a fact is declared: its name, type, unit, source and meaning.

Every source of facts (the structure readers, the snapshot, the compatibility verdicts)
declares each fact it can produce once, as a :class:`FactSpec`; ``rules lint`` checks rule
conditions against these declarations and the documentation is generated from them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FactSpec:
    """One fact rules can test.

    Attributes:
        name: the identifier used in conditions and templates (``exception_type``).
        type: its Python type as text (``str``, ``int|None``, ``list[str]``).
        unit: the unit of a number (``bytes``, ``°C``, ``ratio``), ``-`` for none.
        source: where it comes from (``log structure``, ``pasted text``, ``snapshot``,
            ``compat verdict``).
        doc: what it means, in one or two sentences.
    """

    name: str
    type: str
    unit: str
    source: str
    doc: str
