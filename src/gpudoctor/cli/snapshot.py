"""``gpudoctor snapshot``: the machine's state, collected and written as JSON (or text)."""

from __future__ import annotations

from pathlib import Path

import click

from gpudoctor.cli.inputs import collect_live
from gpudoctor.cli.options import parse_duration, since_option
from gpudoctor.cli.output import render, write_file, write_stdout
from gpudoctor.render.registry import SNAPSHOT, RenderOptions, format_names, get_renderer


@click.command(short_help="Record the GPUs, host, CUDA runtimes and kernel log (JSON).")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the snapshot to this file instead of standard output (written whole, "
    "through a temporary file, or not at all).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(format_names(SNAPSHOT)),
    default="json",
    show_default=True,
)
@since_option
@click.option("--width", type=click.IntRange(40, 400), default=100, show_default=True)
def snapshot(output: Path | None, fmt: str, since: str, width: int) -> None:
    """Record the machine's state: GPUs (NVML), host, CUDA runtimes, kernel log.

    Without an NVIDIA driver the snapshot is still written, saying so. Set
    GPUDOCTOR_FAKE_NVML=<scenario> to try it with a simulated GPU machine.
    """
    snap = collect_live(parse_duration(since))
    status = snap.driver.status
    if status != "ok":
        reason = snap.driver.message or snap.driver.error or status
        click.echo(f"gpudoctor: NVML unavailable ({status}): {reason}", err=True)
    text = render(get_renderer(SNAPSHOT, fmt), snap, RenderOptions(width=width), colour=False)
    if output is None:
        write_stdout(text)
        return
    write_file(output, text)
    click.echo(f"gpudoctor: snapshot written to {output}", err=True)
