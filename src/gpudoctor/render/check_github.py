"""GitHub Actions rendering of a ``gpudoctor check`` report: workflow commands.

A failed check becomes ``::error title=...::message``, a warning ``::warning``, a passing
check with advice (persistence mode off) ``::notice``; other passes and skips are plain log
lines, so a CPU-only runner is not covered in annotations. The message is
the reason and the fix, escaped as :mod:`gpudoctor.render.workflow_commands` says.
"""

from __future__ import annotations

from gpudoctor.check.model import CheckReport, CheckResult, Status
from gpudoctor.render.workflow_commands import escape_data, escape_property, workflow_command

__all__ = ["escape_data", "escape_property", "render_check_github"]

_COMMANDS = {Status.FAIL: "error", Status.WARN: "warning"}


def _line(result: CheckResult) -> str:
    command = _COMMANDS.get(result.status)
    if command is None and result.status is Status.PASS and result.fix:
        command = "notice"
    if command is None:
        return f"{result.status.value}: {result.id}: {result.reason}"
    title = f"gpudoctor check {result.id}: {result.title}"
    message = result.reason + (f"\nFix: {result.fix}" if result.fix else "")
    return workflow_command(command, title, message)


def render_check_github(report: CheckReport) -> str:
    """The report as GitHub workflow commands, one per line, and a summary line."""
    lines = [_line(r) for r in report.results]
    lines.append(f"gpudoctor check: {report.summary()}")
    return "\n".join(lines) + "\n"
