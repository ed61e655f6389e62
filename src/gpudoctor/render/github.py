"""GitHub Actions rendering of a report (``explain``, ``diagnose``): workflow commands.

Every diagnosis becomes one annotation: ``::error`` for a cause that counts as a failure
under the threshold (``--fail-on`` and ``--min-confidence``; with ``--fail-on never``, every
cause at or over ``--min-confidence``), ``::warning`` for a less certain cause, ``::notice``
for a hint (advice). An input that could not be read, or was empty, is a ``::warning``.
The message is the summary, the evidence and the fix steps; escaping follows
:mod:`gpudoctor.render.workflow_commands`, so no text from a log can start a command.
A last plain line counts the causes.
"""

from __future__ import annotations

from gpudoctor.render.workflow_commands import workflow_command
from gpudoctor.report import Diagnosis, Report, Threshold


def _message(diagnosis: Diagnosis) -> str:
    lines = [diagnosis.summary]
    if diagnosis.explained_by:
        lines.append(f"Likely a consequence of: {', '.join(diagnosis.explained_by)}")
    if diagnosis.evidence:
        lines.append("Evidence:")
    for ev in diagnosis.evidence:
        if ev.fact is not None:
            lines.append(f"  {ev.fact} = {ev.value}")
        else:
            lines.append(f"  {ev.source}:{ev.line}: {ev.text.strip()}")
    if diagnosis.fix:
        lines.append("Fix:")
    lines.extend(f"  {n}. {step}" for n, step in enumerate(diagnosis.fix, start=1))
    return "\n".join(lines)


def _annotation(diagnosis: Diagnosis, threshold: Threshold) -> str:
    if not diagnosis.is_cause:
        command = "notice"
        title = f"gpudoctor hint: {diagnosis.title}"
    else:
        command = "error" if threshold.counts(diagnosis) else "warning"
        title = (
            f"gpudoctor #{diagnosis.rank}: {diagnosis.title} "
            f"({diagnosis.cause}, confidence {diagnosis.confidence:.2f})"
        )
    return workflow_command(command, title, _message(diagnosis))


def render_github(report: Report, threshold: Threshold | None = None) -> str:
    """The report as GitHub workflow commands, one per line, and a summary line."""
    threshold = threshold or Threshold()
    lines = []
    for item in report.inputs:
        if item.error is not None:
            lines.append(workflow_command("warning", "gpudoctor: input not read", item.error))
        for warning in item.warnings:
            lines.append(workflow_command("warning", "gpudoctor: input", warning))
    lines.extend(_annotation(d, threshold) for d in report.diagnoses)
    causes = report.causes
    failing = sum(1 for d in causes if threshold.counts(d))
    noun = "cause" if len(causes) == 1 else "causes"
    if causes:
        lines.append(
            f"gpudoctor: {len(causes)} possible {noun} found, {failing} reported as errors"
        )
    else:
        lines.append("gpudoctor: no known failure signature was found")
    return "\n".join(lines) + "\n"
