"""``gpudoctor explain``: a crash explained from its logs alone."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from gpudoctor.cli.app import EXIT_USAGE, fail, load_book
from gpudoctor.cli.inputs import load_snapshot_file, log_inputs, snapshot_files
from gpudoctor.cli.options import OutputSettings, output_options, print_report_and_exit
from gpudoctor.pipeline import diagnose

if TYPE_CHECKING:
    from gpudoctor.jobs.snapshots import NodeSnapshot


def _exit_status(code: int | None, signal_text: str | None) -> dict[str, object] | None:
    """The exit facts of ``--exit-code``/``--signal`` (None when neither is given)."""
    from gpudoctor.runner.exit_status import exit_facts, parse_signal

    if code is None and signal_text is None:
        return None
    try:
        number = None if signal_text is None else parse_signal(signal_text)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--signal") from None
    return exit_facts(code=code, signal_number=number, reporter="user")


def _snapshots(names: tuple[str, ...]) -> list[NodeSnapshot]:
    """The snapshots given with --snapshot, each with its node (none: nothing imported)."""
    if not names:
        return []
    from gpudoctor.jobs.snapshots import NodeSnapshot

    return [NodeSnapshot(str(path), load_snapshot_file(path)) for path in snapshot_files(names)]


@click.command()
@click.argument("files", nargs=-1)
@click.option(
    "--snapshot",
    "snapshot_names",
    multiple=True,
    metavar="FILE",
    help="Add the facts of a snapshot taken on the crashed machine (gpudoctor snapshot -o "
    "FILE); repeatable, one per node of a job (a directory or a glob stands for the "
    "snapshots in it).",
)
@click.option(
    "--exit-code",
    type=int,
    default=None,
    help="The job's exit status, as you saw it (137: killed by SIGKILL).",
)
@click.option(
    "--signal",
    "signal_text",
    metavar="N|NAME",
    default=None,
    help="The signal that ended the job: 9, KILL or SIGKILL, 11 or SEGV...",
)
@output_options
def explain(
    files: tuple[str, ...],
    snapshot_names: tuple[str, ...],
    exit_code: int | None,
    signal_text: str | None,
    **options: Any,
) -> None:
    """Explain a crash from its logs alone (no GPU needed).

    FILES are log files (plain, compressed or archived), directories (every file below) or
    globs; with none, or "-", the log is read from standard input: `python train.py 2>&1 |
    gpudoctor explain`. Give the exit status you saw with --exit-code (or --signal) when the
    log does not show it. The logs of every rank of a job (and --snapshot once per node) are
    read as one job: its first failure comes first.
    """
    out = OutputSettings(**options)
    if not files:
        if sys.stdin is None or sys.stdin.isatty():
            fail(
                "no input: give log files, or pipe a log in (python train.py 2>&1 | "
                "gpudoctor explain)",
                EXIT_USAGE,
            )
        files = ("-",)
    logs = log_inputs(files)
    book = load_book(out.rule_dirs, verbose=out.verbose, examples=False)
    snapshots = _snapshots(snapshot_names)
    observed = _exit_status(exit_code, signal_text)
    if len(snapshots) == 1:
        only = snapshots[0]
        report = diagnose(book, logs, only.snapshot, only.name, observed_facts=observed)
    else:
        report = diagnose(book, logs, observed_facts=observed, snapshots=snapshots)
    print_report_and_exit(report, out, snapshot=bool(snapshots))
