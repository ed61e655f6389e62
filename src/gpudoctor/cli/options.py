"""Options shared by several commands, and what they mean (exit policy, colour, durations).

Imported by the command modules only; :mod:`gpudoctor.cli.app` imports none of them, so the
command modules never import one another.
"""

from __future__ import annotations

import math
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from gpudoctor.cli.app import EXIT_FINDING, EXIT_NO_INPUT, EXIT_OK, fail
from gpudoctor.cli.output import render, stdout_is_tty, text_width, use_colour, write_stdout
from gpudoctor.logs.reader import EMPTY_INPUT
from gpudoctor.render.registry import REPORT, RenderOptions, format_names, get_renderer
from gpudoctor.report import Threshold
from gpudoctor.rulebook.model import Severity

if TYPE_CHECKING:
    from gpudoctor.report import Report

SEVERITIES = tuple(s.value for s in reversed(Severity))
"""Severity names from the lowest to the highest (the rule model's order, reversed)."""
FAIL_ON = ("never", *SEVERITIES)
REPORT_FORMATS = ("auto", *format_names(REPORT))


def threshold_for(fail_on: str, min_confidence: float) -> Threshold:
    """The diagnoses ``--fail-on`` counts (``never``: every cause, for JUnit and GitHub)."""
    if fail_on == "never":
        return Threshold(None, min_confidence)
    return Threshold(frozenset(SEVERITIES[SEVERITIES.index(fail_on) :]), min_confidence)


@dataclass(frozen=True)
class OutputSettings:
    """The report options shared by ``explain`` and ``diagnose`` (see :func:`output_options`)."""

    fmt: str = "auto"
    width: int | None = None
    color: bool | None = None
    no_redact: bool = False
    verbose: bool = False
    fail_on: str = "never"
    min_confidence: float = 0.5
    rule_dirs: tuple[Path, ...] = ()

    @property
    def format(self) -> str:
        """The format to render (``auto`` is text)."""
        return "text" if self.fmt == "auto" else self.fmt

    @property
    def threshold(self) -> Threshold:
        """Which diagnoses are failures."""
        return threshold_for(self.fail_on, self.min_confidence)

    def render_options(self) -> RenderOptions:
        """The options the renderer reads."""
        return RenderOptions(
            width=text_width(self.width),
            verbose=self.verbose,
            redact=not self.no_redact,
            threshold=self.threshold,
        )

    def colour(self) -> bool:
        """Whether to colour the text on standard output."""
        return use_colour(self.color, os.environ, to_terminal=stdout_is_tty())


def exit_for(report: Report, out: OutputSettings) -> int:
    """1 when a cause reached ``--fail-on`` (at ``--min-confidence``), else 0."""
    if out.fail_on == "never":
        return EXIT_OK
    threshold = out.threshold
    return EXIT_FINDING if any(threshold.counts(d) for d in report.causes) else EXIT_OK


class Probability(click.FloatRange):
    """A number in [0, 1]; ``nan`` is refused (it compares false with every bound)."""

    name = "probability"

    def __init__(self) -> None:
        super().__init__(0, 1)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if math.isnan(number):
            self.fail(f"{value!r} is not a number between 0 and 1.", param, ctx)
        return number


_F = TypeVar("_F", bound=Callable[..., Any])


def output_options(func: _F) -> _F:
    """Options shared by the commands that print a report."""
    options = [
        click.option("--format", "fmt", type=click.Choice(REPORT_FORMATS), default="auto",
                     show_default=True,
                     help="Output format (auto: text). junit and github: one test case or "
                     "annotation per diagnosis; causes reaching --fail-on (or, with never, "
                     "every cause at --min-confidence) are failures."),
        click.option("--width", type=click.IntRange(40, 400), default=None,
                     help="Text width (default: the terminal's, at most 120)."),
        click.option("--color/--no-color", default=None,
                     help="Colour the text output (default: on a terminal, unless NO_COLOR "
                     "is set or TERM=dumb)."),
        click.option("--no-redact", is_flag=True,
                     help="Markdown: keep user names, hosts, IPs, tokens and UUIDs."),
        click.option("-v", "--verbose", is_flag=True,
                     help="Show explanations and all references (and tracebacks of "
                     "gpudoctor's own errors)."),
        click.option("--fail-on", type=click.Choice(FAIL_ON), default="never",
                     show_default=True,
                     help="Exit 1 when a cause of at least this severity is found."),
        click.option("--min-confidence", type=Probability(), default=0.5,
                     show_default=True, help="Confidence a cause needs to count for --fail-on."),
        click.option("--rules", "rule_dirs", multiple=True,
                     type=click.Path(exists=True, file_okay=False, path_type=Path),
                     help="A directory of your own rules, added to the bundled pack "
                     "(repeatable)."),
    ]  # fmt: skip
    for option in reversed(options):
        func = option(func)
    return func


_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


MAX_SINCE = timedelta(days=3650)
"""The longest kernel-log window ``--since`` takes; longer is "since boot" anyway."""


def parse_duration(text: str) -> timedelta | None:
    """``"30m"``, ``"2h"``, ``"1d"`` → a timedelta; ``"boot"`` → ``None`` (since boot)."""
    if text.strip().lower() == "boot":
        return None
    match = _DURATION_RE.match(text.lower())
    if match is None:
        raise click.BadParameter(f"{text!r} is not a duration like 30m, 2h, 1d or 'boot'")
    seconds = float(match.group(1)) * _UNITS[match.group(2)]
    if seconds > MAX_SINCE.total_seconds():
        raise click.BadParameter(f"{text!r} is longer than {MAX_SINCE.days} days; use 'boot'")
    return timedelta(seconds=seconds)


since_option = click.option(
    "--since",
    default="boot",
    show_default=True,
    help="Kernel log window of the live snapshot: 30m, 2h, 1d, or boot.",
)


def print_report_and_exit(report: Report, out: OutputSettings, *, snapshot: bool) -> NoReturn:
    """Warn about the logs that gave nothing, print the report and exit with its code.

    Exit 3, with no report, when logs were given without a snapshot and none of them could
    be read or held any text.
    """
    logs = [i for i in report.inputs if i.kind in ("log", "stdin")]
    for item in logs:
        if item.error is not None:
            click.echo(f"gpudoctor: cannot read {item.name}: {item.error}", err=True)
        elif item.empty:
            click.echo(f"gpudoctor: warning: {item.name}: {EMPTY_INPUT}", err=True)
    if logs and not snapshot and all(i.error is not None or i.empty for i in logs):
        if all(i.empty for i in logs):
            fail(f"{EMPTY_INPUT}; there is nothing to explain", EXIT_NO_INPUT)
        if all(i.error is not None for i in logs):
            fail("none of the inputs could be read", EXIT_NO_INPUT)
        fail("none of the inputs could be read or held any text", EXIT_NO_INPUT)
    renderer = get_renderer(REPORT, out.format)
    colour = out.colour() and renderer.colour
    write_stdout(render(renderer, report, out.render_options(), colour), colour=colour)
    sys.exit(exit_for(report, out))
