"""JSON rendering of a ``gpudoctor check`` report (schema ``gpudoctor.check/1``).

The document::

    {"schema": "gpudoctor.check/1", "gpudoctor_version": "0.1.0",
     "source": {"kind": "live"|"snapshot", "path": ..., "hostname": ..., "nvml_backend": ...},
     "options": {"require_gpu": false, "expect_gpus": null, "min_shm_bytes": ...,
                 "min_nofile": ...},
     "outcome": "pass"|"warn"|"fail"|"skip",
     "summary": {"pass": 7, "warn": 1, "fail": 0, "skip": 2},
     "checks": [{"id", "title", "status", "reason", "fix", "details": [...]}, ...]}

Minor versions only add keys; a consumer must ignore keys it does not know.
"""

from __future__ import annotations

import dataclasses
import json

from gpudoctor import __version__
from gpudoctor.check.model import CHECK_SCHEMA, CheckReport, Status


def check_report_dict(report: CheckReport) -> dict[str, object]:
    """The report as JSON-compatible data (see the module docstring)."""
    return {
        "schema": CHECK_SCHEMA,
        "gpudoctor_version": __version__,
        "source": dataclasses.asdict(report.source),
        "options": dataclasses.asdict(report.options),
        "outcome": report.outcome.value,
        "summary": {status.value: report.count(status) for status in Status},
        "checks": [
            {
                "id": r.id,
                "title": r.title,
                "status": r.status.value,
                "reason": r.reason,
                "fix": r.fix,
                "details": list(r.details),
            }
            for r in report.results
        ],
    }


def render_check_json(report: CheckReport) -> str:
    """The report as indented JSON text ending in a newline."""
    return json.dumps(check_report_dict(report), indent=2, ensure_ascii=False) + "\n"
