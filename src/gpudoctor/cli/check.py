"""``gpudoctor check``: a CI smoke check of this machine's (or a snapshot's) GPU environment.

Exit codes: 0 every check passed (warnings allowed unless ``--strict``); 1 a check failed
(or warned, with ``--strict``); 2 usage error, including an unreadable, invalid or newer
``--snapshot`` file; 3 nothing could be checked (every check was skipped).

The command is registered lazily (``"check": "gpudoctor.cli.check:check"`` in
:data:`gpudoctor.cli.app.COMMANDS`); the check machinery and the renderers are imported
inside it, only for the format asked for.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import click

from gpudoctor.cli.app import EXIT_FINDING, EXIT_NO_INPUT, EXIT_OK, EXIT_USAGE, fail
from gpudoctor.cli.output import (
    render,
    stdout_is_tty,
    text_width,
    use_colour,
    write_file,
    write_stdout,
)
from gpudoctor.render.registry import CHECK, RenderOptions, format_names, get_renderer
from gpudoctor.units import parse_size

if TYPE_CHECKING:
    from gpudoctor.check.model import CheckOptions, CheckReport

CHECK_FORMATS = ("auto", *format_names(CHECK))


def _size(ctx: click.Context, param: click.Parameter, value: str) -> int:
    parsed = parse_size(value)
    if parsed is None:
        raise click.BadParameter(f"{value!r} is not a size (try 1GiB, 512MiB)")
    return parsed


def resolve_format(fmt: str, *, env: Mapping[str, str], to_file: bool) -> str:
    """``auto`` → ``github`` under GitHub Actions (GITHUB_ACTIONS=true), else ``text``."""
    if fmt != "auto":
        return fmt
    if not to_file and env.get("GITHUB_ACTIONS") == "true":
        return "github"
    return "text"


@click.command(short_help="Check that this environment can run a GPU job (CI smoke check).")
@click.option(
    "--snapshot",
    "snapshot_path",
    type=click.Path(path_type=Path),
    default=None,
    help="Check a saved snapshot (gpudoctor snapshot -o FILE) instead of this machine.",
)
@click.option(
    "--require-gpu",
    is_flag=True,
    help="Fail when there is no NVIDIA driver or no GPU (default: skip GPU checks).",
)
@click.option(
    "--expect-gpus",
    type=click.IntRange(min=0),
    default=None,
    metavar="N",
    help="Fail unless NVML sees exactly N usable GPUs.",
)
@click.option(
    "--min-shm",
    "min_shm",
    default="1GiB",
    show_default=True,
    callback=_size,
    metavar="SIZE",
    help="Warn when /dev/shm is smaller (below 256MiB fails).",
)
@click.option(
    "--min-nofile",
    type=click.IntRange(min=1),
    default=4096,
    show_default=True,
    metavar="N",
    help="Warn when ulimit -n is lower (below 1024 fails).",
)
@click.option("--strict", is_flag=True, help="Warnings fail too (exit 1).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(CHECK_FORMATS),
    default="auto",
    show_default=True,
    help="auto: GitHub annotations under GitHub Actions, else text (coloured on a terminal).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the report to FILE instead of standard output.",
)
@click.option(
    "--width",
    type=click.IntRange(40, 400),
    default=None,
    help="Text width (default: the terminal's, at most 120).",
)
@click.option(
    "--color/--no-color",
    default=None,
    help="Colour the text output (default: on a terminal, unless NO_COLOR is set or TERM=dumb).",
)
@click.option("-v", "--verbose", is_flag=True, help="Text: show the details of every check.")
@click.option(
    "--explain-data",
    is_flag=True,
    help="Print the compatibility table versions and their sources, then exit.",
)
def check(
    snapshot_path: Path | None,
    require_gpu: bool,
    expect_gpus: int | None,
    min_shm: int,
    min_nofile: int,
    strict: bool,
    fmt: str,
    output: Path | None,
    width: int | None,
    color: bool | None,
    verbose: bool,
    explain_data: bool,
) -> None:
    """Check that this environment can run a GPU job, before it burns a GPU-hour.

    Runs, in well under a second and without importing any framework: NVML and the GPUs
    (--require-gpu, --expect-gpus), driver vs. every installed CUDA runtime, GPU compute
    capability vs. the frameworks' compiled architectures, CUDA libraries installed for two
    majors, LD_LIBRARY_PATH shadowing the wheels, /dev/shm, ulimit -n, CUDA_VISIBLE_DEVICES
    and persistence mode. Without a GPU (and without --require-gpu) the GPU checks are
    skipped and the others still run.

    Exit codes: 0 all passed (warnings allowed unless --strict), 1 a check failed, 2 usage
    error or bad --snapshot file, 3 nothing could be checked.
    """
    if explain_data:
        _explain_data(fmt, width)
        sys.exit(EXIT_OK)

    from gpudoctor.check.model import CheckOptions

    options = CheckOptions(
        require_gpu=require_gpu,
        expect_gpus=expect_gpus,
        min_shm_bytes=min_shm,
        min_nofile=min_nofile,
    )
    report = _run(snapshot_path, options)
    chosen = resolve_format(fmt, env=os.environ, to_file=output is not None)
    renderer = get_renderer(CHECK, chosen)
    colored = renderer.colour and use_colour(
        color, os.environ, to_terminal=output is None and stdout_is_tty()
    )
    text = render(renderer, report, RenderOptions(text_width(width), verbose), colored)
    if output is not None:
        write_file(output, text)
    else:
        write_stdout(text, colour=colored)
    if report.failed(strict=strict):
        sys.exit(EXIT_FINDING)
    if report.all_skipped:
        click.echo("gpudoctor: nothing could be checked (every check was skipped)", err=True)
        sys.exit(EXIT_NO_INPUT)
    sys.exit(EXIT_OK)


def _run(snapshot_path: Path | None, options: CheckOptions) -> CheckReport:
    from gpudoctor.check import CheckSource, collect_live, list_dir, run_checks
    from gpudoctor.errors import GpudoctorError, SnapshotError
    from gpudoctor.snapshot import load_snapshot

    if snapshot_path is not None:
        try:
            snapshot = load_snapshot(snapshot_path)
        except SnapshotError as exc:
            fail(str(exc), EXIT_USAGE)
        source = CheckSource(
            "snapshot", str(snapshot_path), snapshot.host.hostname, snapshot.driver.backend
        )
        return run_checks(snapshot, options, source=source)
    try:
        snapshot, source = collect_live()
    except GpudoctorError as exc:  # e.g. an unknown GPUDOCTOR_FAKE_NVML scenario
        fail(str(exc), EXIT_USAGE)
    return run_checks(snapshot, options, source=source, list_dir=list_dir)


def _explain_data(fmt: str, width: int | None) -> None:
    from gpudoctor.compat import CompatDataError, table_versions
    from gpudoctor.render.check_data import render_data_json, render_data_text

    try:
        tables = table_versions()
    except CompatDataError as exc:
        fail(f"the bundled compatibility tables are broken: {exc}", EXIT_USAGE)
    if fmt == "json":
        click.echo(render_data_json(tables), nl=False)
    else:
        click.echo(render_data_text(tables, text_width(width)), nl=False)
