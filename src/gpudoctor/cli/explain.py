"""``gpudoctor explain``: a crash explained from its logs alone."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from gpudoctor.cli.app import EXIT_USAGE, fail, load_book
from gpudoctor.cli.inputs import load_snapshot_file, log_inputs
from gpudoctor.cli.options import OutputSettings, output_options, print_report_and_exit
from gpudoctor.pipeline import diagnose


@click.command()
@click.argument("files", nargs=-1)
@click.option(
    "--snapshot",
    "snapshot_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Add the facts of a snapshot taken on the crashed machine (gpudoctor snapshot -o FILE).",
)
@output_options
def explain(files: tuple[str, ...], snapshot_path: Path | None, **options: Any) -> None:
    """Explain a crash from its logs alone (no GPU needed).

    FILES are log files (plain, compressed or archived); with none, or "-", the log is read
    from standard input: `python train.py 2>&1 | gpudoctor explain`.
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
    snapshot = None if snapshot_path is None else load_snapshot_file(snapshot_path)
    report = diagnose(book, logs, snapshot, str(snapshot_path))
    print_report_and_exit(report, out, snapshot=snapshot is not None)
