"""``gpudoctor run -- CMD``: run a job, pass its output through, diagnose its death.

The job's output is copied through unchanged as it comes; gpudoctor exits with the job's
exit code (128 + N when signal N ended it). On a failure (or with ``--always``) the diagnosis
goes to standard error after the job's output, from one core call,
:func:`gpudoctor.pipeline.diagnose`: the job's last lines, a snapshot taken at once after
its death (kernel log since its start), its exit status and the facts of its timeline.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

import click

from gpudoctor.cli.app import EXIT_USAGE, fail, load_book
from gpudoctor.cli.output import use_colour, write_file
from gpudoctor.errors import GpudoctorError

if TYPE_CHECKING:
    from gpudoctor.report import Report
    from gpudoctor.runner.job import JobOutcome
    from gpudoctor.snapshot.model import Snapshot

EXIT_NOT_FOUND, EXIT_NOT_EXECUTABLE = 127, 126  # as a shell reports them
KERNEL_LOG_MARGIN_S = 5.0
"""The kernel log is read from this long before the job started (clocks differ a little)."""


@click.command(
    short_help="Run a job; on failure, diagnose it from its output and the machine.",
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
)
@click.option(
    "--interval",
    type=click.FloatRange(0.05, 3600),
    default=1.0,
    show_default=True,
    help="Seconds between samples of the GPUs and of memory.",
)
@click.option(
    "--keep-lines",
    type=click.IntRange(10, 1_000_000),
    default=5000,
    show_default=True,
    help="How many of the job's last output lines to keep.",
)
@click.option(
    "--log",
    "log_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write all of the job's output to FILE.",
)
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the report with the timeline to FILE when diagnosing: JSON, or Markdown "
    "with a chart per GPU when FILE ends in .md.",
)
@click.option("--always", is_flag=True, help="Diagnose even when the job succeeds.")
@click.option(
    "--color/--no-color",
    default=None,
    help="Colour the diagnosis (default: when standard error is a terminal).",
)
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="A one-line summary on success; explanations in the diagnosis.",
)
@click.option(
    "--rules",
    "rule_dirs",
    multiple=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="A directory of your own rules, added to the bundled pack (repeatable).",
)
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def run(
    interval: float,
    keep_lines: int,
    log_path: Path | None,
    report_path: Path | None,
    always: bool,
    color: bool | None,
    verbose: bool,
    rule_dirs: tuple[Path, ...],
    command: tuple[str, ...],
) -> None:
    """Run COMMAND unchanged, passing its output through, and exit with its exit code.

    On a failure, print the diagnosis on standard error after the job's output:
    `gpudoctor run -- python train.py --epochs 10`. While the job runs, GPU memory,
    temperature and throttling, and the memory of the job's processes are sampled. SIGINT,
    SIGTERM and SIGHUP sent to gpudoctor are passed on to the job (a second SIGINT kills
    it); in a terminal, the keyboard reaches the job as without gpudoctor (what is typed,
    Ctrl-C, Ctrl-Z).
    """
    from gpudoctor.runner.job import JobSettings, run_job

    log = _open_log(log_path)
    try:
        outcome = run_job(command, JobSettings(interval=interval, keep_lines=keep_lines), log=log)
    except FileNotFoundError:
        fail(f"{command[0]}: command not found", EXIT_NOT_FOUND)
    except PermissionError:
        fail(f"{command[0]}: permission denied", EXIT_NOT_EXECUTABLE)
    except GpudoctorError as exc:  # an unknown GPUDOCTOR_FAKE_NVML scenario
        fail(str(exc), EXIT_USAGE)
    finally:
        if log is not None:
            log.close()
    code = outcome.exit.exit_code
    if code != 0 or always:
        report = _diagnose(command, outcome, rule_dirs, verbose)
        for note in outcome.notes:
            click.echo(f"gpudoctor: {note}", err=True)
        _print_diagnosis(report, command, outcome, color, verbose)
        if report_path is not None:
            _write_report(report, report_path)
    elif verbose:
        for note in outcome.notes:
            click.echo(f"gpudoctor: {note}", err=True)
        click.echo(f"gpudoctor: {summary_line(command, outcome)}", err=True)
    sys.exit(code)


def _open_log(path: Path | None) -> BinaryIO | None:
    if path is None:
        return None
    try:
        return open(path, "wb")
    except OSError as exc:
        fail(f"cannot write {path}: {exc.strerror or exc}", EXIT_USAGE)


def _diagnose(
    command: tuple[str, ...], outcome: JobOutcome, rule_dirs: tuple[Path, ...], verbose: bool
) -> Report:
    from gpudoctor.pipeline import LogInput, diagnose
    from gpudoctor.runner.exit_status import exit_facts
    from gpudoctor.runner.timeline import timeline_facts

    ended = outcome.exit
    snapshot = _snapshot_since(ended.started_at)
    observed = exit_facts(code=ended.exit_code, reporter="gpudoctor run")
    observed.update(
        timeline_facts(
            outcome.timeline,
            duration_s=ended.ended_at - ended.started_at,
            gpu_sampled=outcome.gpu_sampled,
            cgroup_limit_bytes=snapshot.host.cgroup_memory_limit_bytes if snapshot else None,
        )
    )
    book = load_book(rule_dirs, verbose=verbose, examples=False)
    kept = outcome.kept.text()
    # A job that printed nothing leaves no log to read, which is no warning worth showing.
    logs = [LogInput.from_text(f"output of {command_text(command)}", kept)] if kept else []
    report = diagnose(book, logs, snapshot, "after the run", observed_facts=observed)
    return dataclasses.replace(report, timeline=tuple(outcome.timeline.samples()))


def _snapshot_since(started_at: float) -> Snapshot | None:
    """The machine right after the death, with the kernel log since the job started."""
    from gpudoctor.snapshot import collect_snapshot

    window = timedelta(seconds=time.time() - started_at + KERNEL_LOG_MARGIN_S)
    try:
        return collect_snapshot(since=window)
    except GpudoctorError:
        return None


def _print_diagnosis(
    report: Report,
    command: tuple[str, ...],
    outcome: JobOutcome,
    color: bool | None,
    verbose: bool,
) -> None:
    from gpudoctor.cli.output import render
    from gpudoctor.render.registry import REPORT, RenderOptions, get_renderer

    renderer = get_renderer(REPORT, "text")
    colour = use_colour(color, os.environ, to_terminal=sys.stderr.isatty()) and renderer.colour
    import shutil

    width = min(shutil.get_terminal_size((100, 24)).columns, 120)
    text = render(renderer, report, RenderOptions(width=width, verbose=verbose), colour)
    click.echo(f"\ngpudoctor: {summary_line(command, outcome)}", err=True)
    click.echo(text, err=True, nl=False, color=colour)


def _write_report(report: Report, path: Path) -> None:
    """JSON, or Markdown (redacted, as ``explain --format markdown``) for a ``.md`` file."""
    from gpudoctor.render.registry import REPORT, RenderOptions, get_renderer

    kind = "markdown" if path.suffix.lower() in (".md", ".markdown") else "json"
    text = get_renderer(REPORT, kind).render(report, RenderOptions()).plain()
    try:
        write_file(path, text)
    except GpudoctorError as exc:
        click.echo(f"gpudoctor: {exc}", err=True)


def command_text(command: tuple[str, ...]) -> str:
    """The command as a shell would show it, on one line, shortened to 60 characters."""
    text = " ".join(shlex.join(command).split())
    return text if len(text) <= 60 else text[:57] + "..."


def summary_line(command: tuple[str, ...], outcome: JobOutcome) -> str:
    """One line: how the job ended, after how long, and its peaks."""
    from gpudoctor.render.escape import for_terminal
    from gpudoctor.runner.exit_status import signal_name
    from gpudoctor.units import format_size

    ended = outcome.exit
    how = (
        f"killed by {signal_name(ended.signal)} (exit {ended.exit_code})"
        if ended.signal is not None
        else f"exited with {ended.exit_code}"
    )
    parts = [f"{command_text(command)} {how} after {ended.ended_at - ended.started_at:.1f} s"]
    rss = outcome.timeline.rss_peak_bytes
    if rss is not None:
        parts.append(f"peak RSS {format_size(rss)}")
    peaks = outcome.timeline.gpu_peaks.values()
    used = max((p.memory_used_bytes or 0 for p in peaks), default=0)
    if used:
        parts.append(f"peak GPU memory {format_size(used)}")
    return for_terminal("; ".join(parts))
