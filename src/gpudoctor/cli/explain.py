"""``gpudoctor explain``: a crash explained from its logs alone."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, NoReturn

import click

from gpudoctor.cli.app import (
    EXIT_NO_INPUT,
    EXIT_USAGE,
    OutputSettings,
    emit_report,
    exit_for,
    fail,
    load_book,
    output_options,
)
from gpudoctor.pipeline import LogInput, build_report, make_scanner, scan_logs
from gpudoctor.report import InputSummary
from gpudoctor.rulebook.book import RuleBook

if TYPE_CHECKING:
    from gpudoctor.snapshot import Snapshot


def log_inputs(files: Sequence[str]) -> list[LogInput]:
    inputs: list[LogInput] = []
    for name in files:
        if name == "-":
            inputs.append(LogInput("<stdin>", _stdin_opener, kind="stdin"))
            continue
        path = Path(name)
        if path.is_dir():
            fail(f"{name} is a directory; give the log files in it", EXIT_USAGE)
        inputs.append(LogInput(name, _file_opener(path)))
    return inputs


def _stdin_opener() -> BinaryIO:
    # Do not close the real stdin when the reader is done with it.
    return os.fdopen(os.dup(sys.stdin.fileno()), "rb") if _has_fileno() else sys.stdin.buffer


def _has_fileno() -> bool:
    try:
        sys.stdin.fileno()
    except (OSError, ValueError, AttributeError):
        return False
    return True


def _file_opener(path: Path) -> Callable[[], BinaryIO]:
    def opener() -> BinaryIO:
        return open(path, "rb")

    return opener


def report_and_exit(
    book: RuleBook,
    inputs: list[LogInput],
    out: OutputSettings,
    snapshot: Snapshot | None = None,
    snapshot_name: str = "",
) -> NoReturn:
    """Scan the logs (and the snapshot's kernel log), add the snapshot's facts, print the
    report and exit with its code."""
    if snapshot is not None:
        from gpudoctor.cli.machine import kernel_log_input

        kernel = kernel_log_input(snapshot)
        inputs = [*inputs, kernel] if kernel else inputs
    scan = scan_logs(inputs, make_scanner(book))
    for item in scan.inputs:
        if item.error:
            click.echo(f"gpudoctor: cannot read {item.name}: {item.error}", err=True)
    if inputs and scan.readable == 0 and snapshot is None:
        fail("none of the inputs could be read", EXIT_NO_INPUT)
    facts = None
    extra: list[InputSummary] = []
    if snapshot is not None:
        from gpudoctor.cli.machine import snapshot_inputs
        from gpudoctor.facts.machine import snapshot_facts

        facts = snapshot_facts(snapshot)
        extra = snapshot_inputs(snapshot, snapshot_name)
    report = build_report(book, scan, facts, extra)
    emit_report(report, out)
    sys.exit(exit_for(report, out))


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

    FILES are log files (plain or gzip); with none, or "-", the log is read from standard
    input: `python train.py 2>&1 | gpudoctor explain`.
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
    inputs = log_inputs(files)
    book = load_book(out.rule_dirs)
    snapshot = None
    if snapshot_path is not None:
        from gpudoctor.cli.machine import load_snapshot_file

        snapshot = load_snapshot_file(snapshot_path)
    report_and_exit(book, inputs, out, snapshot, str(snapshot_path))
