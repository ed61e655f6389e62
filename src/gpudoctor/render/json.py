"""The JSON renderer: the versioned report contract (``gpudoctor.report/1``)."""

from __future__ import annotations

import json

from gpudoctor.report import Report


def render_json(report: Report) -> str:
    """The report as indented JSON with a trailing newline."""
    return json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n"
