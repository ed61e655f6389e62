"""The text renderer: the ranked diagnoses for a person at a terminal."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping

from gpudoctor.render.escape import one_line
from gpudoctor.render.job_wording import consequence_line, job_lines, who
from gpudoctor.render.styled import Styled
from gpudoctor.report import Diagnosis, Report
from gpudoctor.wording import count_of

EVIDENCE_CHARS = 400
"""Evidence lines longer than this are shortened in text output (JSON keeps them whole)."""

_SEVERITY_STYLE = {
    "critical": "bold red",
    "error": "red",
    "warning": "yellow",
    "info": "cyan",
}


def render_text(report: Report, width: int = 100, *, verbose: bool = False) -> Styled:
    """The report for people: each cause with its confidence, evidence and fix steps."""
    out = Styled()
    causes = report.causes
    advice = [d for d in report.diagnoses if not d.is_cause]
    out.line(_heading(report, len(causes)), "bold")
    for warning in (w for i in report.inputs for w in i.warnings):
        out.line(f"  ! {one_line(warning)}", "yellow")
    for item in report.inputs:
        if item.error:
            out.line(
                f"  ! {one_line(item.name)}: could not be read: {one_line(item.error)}", "yellow"
            )
    if report.job is not None:
        for sentence in job_lines(report.job, report.diagnoses):
            _wrapped(out, one_line(sentence), width, "", "bold", hang=2)
    if not causes:
        out.line()
        out.line(_nothing_found_hint(report))
    collapsed = False
    for diagnosis in causes:
        if diagnosis.consequence_of and not verbose:
            if not collapsed:
                out.line()
            collapsed = True
            _consequence(out, report, diagnosis, width)
            continue
        collapsed = False
        out.line()
        _diagnosis(out, diagnosis, width, verbose, report.fact_nodes)
    if advice:
        out.line()
        out.line("Hints", "bold")
        for hint in advice:
            _wrapped(out, f"- {hint.title}: {hint.summary}", width, "  ", hang=2)
            for step in hint.fix:
                _wrapped(out, f"· {step}", width, "    ", hang=2)
    return out


def _consequence(out: Styled, report: Report, d: Diagnosis, width: int) -> None:
    """A consequence of the job's first failure, in one line (``-v`` shows it whole)."""
    out.add(f"#{d.rank} ", "bold")
    text = one_line(consequence_line(report, d))
    room = max(40, width - len(str(d.rank)) - 2)
    first, *rest = textwrap.wrap(text, width=room, break_on_hyphens=False) or [""]
    out.line(first, "dim")
    for line in rest:
        out.line("   " + line, "dim")


def _nothing_found_hint(report: Report) -> str:
    if any(i.kind == "snapshot" for i in report.inputs) and not any(
        i.kind in ("log", "stdin") for i in report.inputs
    ):
        return (
            "No known failure signature was found in the machine's state. If the job did "
            "fail, give its logs too: gpudoctor diagnose --log FILE (repeatable, globs "
            "allowed: --log 'rank*.log')."
        )
    return (
        "No known failure signature was found. If the job did fail, the error may be "
        "outside the text given: pass the full stderr (2>&1), the other ranks' logs, or "
        "run `gpudoctor diagnose` on the machine where it ran."
    )


def _heading(report: Report, count: int) -> str:
    logs = [i for i in report.inputs if i.kind in ("log", "stdin")]
    lines = sum(i.lines or 0 for i in logs)
    parts = []
    if logs:
        names = ", ".join(one_line(i.name) for i in logs[:3]) + (" …" if len(logs) > 3 else "")
        parts.append(f"{names} ({count_of(lines, 'line')})")
    if any(i.kind == "kernel" for i in report.inputs):
        parts.append("the kernel log")
    snapshots = [i.name for i in report.inputs if i.kind == "snapshot"]
    if len(snapshots) > 1:
        parts.append(count_of(len(snapshots), "snapshot"))
    elif snapshots:
        parts.append(
            "the live snapshot" if snapshots[0] == "live" else f"snapshot {one_line(snapshots[0])}"
        )
    read = " and ".join(parts) if parts else "no input"
    noun = "cause" if count == 1 else "causes"
    return f"gpudoctor: {count} possible {noun} found in {read}"


def _diagnosis(
    out: Styled, d: Diagnosis, width: int, verbose: bool, fact_nodes: Mapping[str, str]
) -> None:
    tag = f"#{d.rank} "
    out.add(tag, "bold")
    out.add(d.title, "bold " + _SEVERITY_STYLE.get(d.severity, ""))
    out.add(f"  [{d.cause}, {d.role}]", "dim")
    out.line(f"  confidence {d.confidence:.2f}", _confidence_style(d.confidence))
    indent = " " * 4
    _wrapped(out, d.summary, width, indent)
    if d.ranks or d.nodes:
        _wrapped(out, one_line(f"From {who(d.ranks, d.nodes)}"), width, indent, "dim")
    if d.explained_by:
        out.line(f"{indent}Likely a consequence of: {', '.join(d.explained_by)}", "dim")
    for note in d.notes:
        _wrapped(out, f"note: {note}", width, indent, "dim")
    if verbose and d.explanation:
        _wrapped(out, d.explanation, width, indent)
    out.line(f"{indent}Evidence:", "bold")
    for ev in d.evidence:
        if ev.fact is not None:
            node = f" (on {one_line(fact_nodes[ev.fact])})" if ev.fact in fact_nodes else ""
            out.line(f"{indent}  {ev.fact} = {one_line(str(ev.value))}{node}", "cyan")
        else:
            where = f"{one_line(ev.source)}:{ev.line}"
            text = one_line(ev.text.strip())
            if len(indent) + len(where) + len(text) + 4 <= width:
                out.add(f"{indent}  {where}  ", "cyan").line(text)
            else:
                out.line(f"{indent}  {where}", "cyan")
                shown = text if verbose else _shorten(text, EVIDENCE_CHARS)
                _wrapped(out, shown, width, indent + "    ")
    if d.matches > sum(1 for ev in d.evidence if ev.fact is None) > 0:
        count = f"{d.matches}+" if d.matches_at_least else str(d.matches)
        out.line(f"{indent}  ({count} matching lines in all)", "dim")
    out.line(f"{indent}Fix:", "bold")
    for number, step in enumerate(d.fix, start=1):
        _wrapped(out, f"{number}. {step}", width, indent + "  ", hang=3)
    if d.references:
        out.line(f"{indent}See: {d.references[0]}", "dim")
        if verbose:
            for ref in d.references[1:]:
                out.line(f"{indent}     {ref}", "dim")


def _confidence_style(confidence: float) -> str:
    if confidence >= 0.8:
        return "bold green"
    if confidence >= 0.5:
        return "green"
    return "dim"


def _shorten(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _wrapped(
    out: Styled, text: str, width: int, indent: str, style: str = "", hang: int = 0
) -> None:
    for paragraph in text.splitlines() or [""]:
        lines = textwrap.wrap(
            paragraph,
            width=max(40, width),
            initial_indent=indent,
            subsequent_indent=indent + " " * hang,
            break_long_words=False,
            break_on_hyphens=False,
        )
        for line in lines or [indent]:
            out.line(line, style)
