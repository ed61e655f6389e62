"""``gpudoctor snapshot`` and ``gpudoctor diagnose``: the machine's state, alone or with logs."""

from __future__ import annotations

import glob
import io
import re
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from gpudoctor.cli.app import EXIT_USAGE, OutputSettings, fail, load_book, output_options
from gpudoctor.errors import GpudoctorError, SnapshotError
from gpudoctor.pipeline import LogInput
from gpudoctor.report import InputSummary

if TYPE_CHECKING:
    from gpudoctor.snapshot import Snapshot

_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_duration(text: str) -> timedelta | None:
    """``"30m"``, ``"2h"``, ``"1d"`` → a timedelta; ``"boot"`` → ``None`` (since boot)."""
    if text.strip().lower() == "boot":
        return None
    match = _DURATION_RE.match(text.lower())
    if match is None:
        raise click.BadParameter(f"{text!r} is not a duration like 30m, 2h, 1d or 'boot'")
    return timedelta(seconds=float(match.group(1)) * _UNITS[match.group(2)])


def _collect(since: timedelta | None) -> Snapshot:
    from gpudoctor.snapshot import collect_snapshot

    try:
        return collect_snapshot(since=since)
    except GpudoctorError as exc:  # e.g. an unknown GPUDOCTOR_FAKE_NVML scenario
        fail(str(exc), EXIT_USAGE)


def load_snapshot_file(path: Path) -> Snapshot:
    """A saved snapshot, or a clear error (exit 2) when it cannot be used."""
    from gpudoctor.snapshot import load_snapshot

    try:
        return load_snapshot(path)
    except SnapshotError as exc:
        fail(str(exc), EXIT_USAGE)


def _warn_about_driver(snapshot: Snapshot) -> None:
    status = snapshot.driver.status
    if status != "ok":
        reason = snapshot.driver.message or snapshot.driver.error or status
        click.echo(f"gpudoctor: NVML unavailable ({status}): {reason}", err=True)


def kernel_log_input(snapshot: Snapshot) -> LogInput | None:
    """The snapshot's kernel log events as one more log to scan (Xid, NVRM, oom-kill lines)."""
    text = "".join(event.line.rstrip("\n") + "\n" for event in snapshot.kernel_log.events)
    if not text:
        return None
    data = text.encode("utf-8")
    source = snapshot.kernel_log.source or "kernel log"
    return LogInput(f"kernel log ({source})", lambda: io.BytesIO(data), "kernel")


def snapshot_inputs(snapshot: Snapshot, name: str) -> list[InputSummary]:
    """How the report lists a snapshot and the sources it could or could not read."""
    summaries = [InputSummary(kind="snapshot", name=name)]
    for source in snapshot.sources:
        summaries.append(
            InputSummary(
                kind="source", name=source.name, error=None if source.ok else source.reason
            )
        )
    return summaries


since_option = click.option(
    "--since",
    default="boot",
    show_default=True,
    help="Kernel log window of the live snapshot: 30m, 2h, 1d, or boot.",
)


@click.command(short_help="Record the GPUs, host, CUDA runtimes and kernel log (JSON).")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the snapshot to this file instead of standard output.",
)
@click.option(
    "--format", "fmt", type=click.Choice(("json", "text")), default="json", show_default=True
)
@since_option
@click.option("--width", type=click.IntRange(40, 400), default=100, show_default=True)
def snapshot(output: Path | None, fmt: str, since: str, width: int) -> None:  # fmt: skip
    """Record the machine's state: GPUs (NVML), host, CUDA runtimes, kernel log.

    Without an NVIDIA driver the snapshot is still written, saying so. Set
    GPUDOCTOR_FAKE_NVML=<scenario> to try it with a simulated GPU machine.
    """
    snap = _collect(parse_duration(since))
    _warn_about_driver(snap)
    if fmt == "text":
        from gpudoctor.render.snapshot_text import render_snapshot_text

        text = render_snapshot_text(snap, width=width)
    else:
        text = snap.to_json()
    if output is None:
        click.echo(text, nl=False)
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write {output}: {exc.strerror or exc}", EXIT_USAGE)
    click.echo(f"gpudoctor: snapshot written to {output}", err=True)


def expand_logs(patterns: tuple[str, ...]) -> list[str]:
    """Log paths from ``--log`` values; shell-style globs are expanded (sorted)."""
    files: list[str] = []
    for pattern in patterns:
        if glob.has_magic(pattern) and not Path(pattern).exists():
            matches = sorted(glob.glob(pattern))
            if not matches:
                click.echo(f"gpudoctor: --log {pattern}: no file matches", err=True)
            files.extend(matches)
        else:
            files.append(pattern)
    return files


@click.command(short_help="Diagnose a crash here: live snapshot, kernel log and logs.")
@click.option(
    "--log",
    "logs",
    multiple=True,
    metavar="FILE",
    help="A log of the job (repeatable; globs allowed: --log 'rank*.log').",
)
@click.option(
    "--snapshot",
    "snapshot_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Use a saved snapshot instead of collecting one now.",
)
@since_option
@output_options
def diagnose(logs: tuple[str, ...], snapshot_path: Path | None, since: str, **options: Any) -> None:
    """Diagnose a crash on the machine where it happened: a live snapshot (GPUs, host, kernel
    log) plus the job's logs.
    """
    from gpudoctor.cli.explain import log_inputs, report_and_exit

    out = OutputSettings(**options)
    book = load_book(out.rule_dirs)
    if snapshot_path is not None:
        snap = load_snapshot_file(snapshot_path)
        name = str(snapshot_path)
    else:
        snap = _collect(parse_duration(since))  # the report lists what could not be read
        name = "live"
    report_and_exit(book, log_inputs(expand_logs(logs)), out, snap, name)
