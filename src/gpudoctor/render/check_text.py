"""Text rendering of a ``gpudoctor check`` report, for people and plain CI logs.

:func:`render_check_text` is pure: it returns :class:`~gpudoctor.render.styled.Styled`
pieces, which the CLI prints plain (pipes, files, golden tests) or coloured on a terminal.
One line per check (status, id, reason, wrapped to the width); a warning, failure or advice
adds its fix, and its details; ``verbose`` shows the details of every check.
"""

from __future__ import annotations

import textwrap

from gpudoctor.check.model import CheckReport, CheckResult, Status
from gpudoctor.render.styled import Styled

_STYLES = {
    Status.PASS: "green",
    Status.WARN: "bold yellow",
    Status.FAIL: "bold red",
    Status.SKIP: "dim",
}


def _wrap(text: str, width: int, indent: int) -> list[str]:
    return textwrap.wrap(
        text,
        max(20, width - indent),
        break_on_hyphens=False,
        break_long_words=False,
    ) or [""]


def _source_line(report: CheckReport) -> str:
    source = report.source
    where = "this machine" if source.kind == "live" else f"snapshot {source.path or '?'}"
    host = f" ({source.hostname})" if source.hostname else ""
    fake = source.kind == "live" and (source.nvml_backend or "").startswith("fake:")
    backend = f", NVML {source.nvml_backend}" if fake else ""
    return f"gpudoctor check: {where}{host}{backend}"


def _result(out: Styled, result: CheckResult, width: int, id_width: int, verbose: bool) -> None:
    indent = 5 + id_width + 1
    pad = " " * indent
    lines = _wrap(result.reason, width, indent)
    out.add(f"{result.status.value.upper():<4} ", _STYLES[result.status])
    out.add(f"{result.id:<{id_width}} ", "bold")
    out.line(lines[0])
    for line in lines[1:]:
        out.line(pad + line)
    noteworthy = result.status in (Status.WARN, Status.FAIL)
    if result.fix and (noteworthy or result.status is Status.PASS):
        fix_lines = _wrap(f"fix: {result.fix}", width, indent + 2)
        out.line(pad + fix_lines[0], "cyan")
        for line in fix_lines[1:]:
            out.line(pad + "  " + line, "cyan")
    if result.details and (noteworthy or verbose):
        for detail in result.details:
            detail_lines = _wrap(f"- {detail}", width, indent + 2)
            out.line(pad + detail_lines[0], "dim")
            for line in detail_lines[1:]:
                out.line(pad + "  " + line, "dim")


def render_check_text(report: CheckReport, width: int, *, verbose: bool = False) -> Styled:
    """Render ``report`` as styled text at ``width`` columns."""
    out = Styled()
    out.line(_source_line(report), "bold")
    out.line()
    id_width = max((len(r.id) for r in report.results), default=4)
    for result in report.results:
        _result(out, result, width, id_width, verbose)
    out.line()
    verdict = (
        "FAILED"
        if report.count(Status.FAIL)
        else "nothing could be checked"
        if report.all_skipped
        else "OK"
    )
    style = "bold red" if verdict == "FAILED" else "bold green" if verdict == "OK" else "bold"
    out.add(f"{report.summary()}: ")
    out.line(verdict, style)
    return out
