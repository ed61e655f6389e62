"""``gpudoctor diagnose``: a crash diagnosed on its machine, from a snapshot and the logs."""

from __future__ import annotations

from typing import Any

import click

from gpudoctor.cli.app import load_book
from gpudoctor.cli.inputs import collect_live, load_snapshot_file, log_inputs, snapshot_files
from gpudoctor.cli.options import (
    OutputSettings,
    output_options,
    parse_duration,
    print_report_and_exit,
    since_option,
)
from gpudoctor.jobs.snapshots import NodeSnapshot
from gpudoctor.pipeline import diagnose as diagnose_core

NO_LOGS_HINT = (
    "gpudoctor: no logs given: diagnosing from the machine's state and kernel log alone; "
    "add the job's logs: gpudoctor diagnose train.log, a directory, or --log 'logs/**/*.log'"
)


@click.command(short_help="Diagnose a crash here: live snapshot, kernel log and logs.")
@click.argument("files", nargs=-1)
@click.option(
    "--log",
    "logs",
    multiple=True,
    metavar="FILE",
    help="A log of the job (repeatable; a directory or a glob: --log 'logs/**/*.log').",
)
@click.option(
    "--snapshot",
    "snapshot_names",
    multiple=True,
    metavar="FILE",
    help="Use a saved snapshot instead of collecting one now (repeatable, one per node; a "
    "directory or a glob stands for the snapshots in it).",
)
@since_option
@output_options
def diagnose(
    files: tuple[str, ...],
    logs: tuple[str, ...],
    snapshot_names: tuple[str, ...],
    since: str,
    **options: Any,
) -> None:
    """Diagnose a crash on the machine where it happened: a live snapshot (GPUs, host, kernel
    log) plus the job's logs (FILES or --log: files, directories, globs).
    """
    out = OutputSettings(**options)
    book = load_book(out.rule_dirs, verbose=out.verbose, examples=False)
    saved = [
        NodeSnapshot(str(path), load_snapshot_file(path)) for path in snapshot_files(snapshot_names)
    ]
    if not saved:
        # the report lists what could not be read
        saved = [NodeSnapshot("live", collect_live(parse_duration(since)))]
    if not logs and not files:
        click.echo(NO_LOGS_HINT, err=True)
    inputs = log_inputs([*files, *logs])
    if len(saved) == 1:
        report = diagnose_core(book, inputs, saved[0].snapshot, saved[0].name)
    else:
        report = diagnose_core(book, inputs, snapshots=saved)
    print_report_and_exit(report, out, snapshot=True)
