"""``gpudoctor check --explain-data``: which compatibility tables the verdicts rest on.

Renders the ``(name, version, sources)`` triples of
:func:`gpudoctor.compat.table_versions` as text or JSON.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence

TableVersion = tuple[str, str, tuple[str, ...]]


def render_data_text(tables: Sequence[TableVersion], width: int) -> str:
    """One block per table: ``name  version`` then its sources, wrapped to ``width``."""
    lines = ["gpudoctor compatibility tables (name, version, sources):"]
    for name, version, sources in tables:
        lines.append(f"  {name} {version}")
        for source in sources:
            lines.extend(
                textwrap.wrap(
                    source,
                    max(20, width),
                    initial_indent="    - ",
                    subsequent_indent="      ",
                    break_on_hyphens=False,
                    break_long_words=False,
                )
            )
    return "\n".join(lines) + "\n"


def render_data_json(tables: Sequence[TableVersion]) -> str:
    """``{"schema": "gpudoctor.check-data/1", "tables": [{"name", "version", "sources"}]}``."""
    data = {
        "schema": "gpudoctor.check-data/1",
        "tables": [
            {"name": name, "version": version, "sources": list(sources)}
            for name, version, sources in tables
        ],
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
