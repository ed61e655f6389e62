"""GitHub Actions rendering of a ``gpudoctor check`` report: workflow commands.

A failed check becomes ``::error title=...::message``, a warning ``::warning``, a passing
check with advice (persistence mode off) ``::notice``; other passes and skips are plain log
lines, so a CPU-only runner is not covered in annotations. The message is
the reason and the fix. Escaping follows GitHub's toolkit (``@actions/core`` command.ts):
in the message ``%``, ``\\r``, ``\\n`` become ``%25``, ``%0D``, ``%0A``; in a property value
``:`` and ``,`` also become ``%3A`` and ``%2C``.
"""

from __future__ import annotations

from gpudoctor.check.model import CheckReport, CheckResult, Status

_COMMANDS = {Status.FAIL: "error", Status.WARN: "warning"}


def escape_data(text: str) -> str:
    """Escape a workflow command's message."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a workflow command's property value (``title=...``)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _line(result: CheckResult) -> str:
    command = _COMMANDS.get(result.status)
    if command is None and result.status is Status.PASS and result.fix:
        command = "notice"
    if command is None:
        return f"{result.status.value}: {result.id}: {result.reason}"
    title = f"gpudoctor check {result.id}: {result.title}"
    message = result.reason + (f"\nFix: {result.fix}" if result.fix else "")
    return f"::{command} title={escape_property(title)}::{escape_data(message)}"


def render_check_github(report: CheckReport) -> str:
    """The report as GitHub workflow commands, one per line, and a summary line."""
    lines = [_line(r) for r in report.results]
    lines.append(f"gpudoctor check: {report.summary()}")
    return "\n".join(lines) + "\n"
