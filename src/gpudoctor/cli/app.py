"""The command line: the only layer that prints or exits.

Exit codes (every command): 0 ran and nothing reached ``--fail-on``; 1 a finding reached
``--fail-on`` (for ``check``, a failed check; for ``rules test``, a failed example); 2 usage
error or invalid rules; 3 nothing could be collected or read.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from gpudoctor import __version__
from gpudoctor.errors import GpudoctorError, RuleErrors

if TYPE_CHECKING:
    from gpudoctor.report import Report
    from gpudoctor.rulebook.book import RuleBook

EXIT_OK, EXIT_FINDING, EXIT_USAGE, EXIT_NO_INPUT = 0, 1, 2, 3
SEVERITY_ORDER = ("info", "warning", "error", "critical")
FORMATS = ("auto", "text", "json", "markdown")


def fail(message: str, code: int) -> NoReturn:
    click.echo(f"gpudoctor: {message}", err=True)
    sys.exit(code)


def load_book(rule_dirs: Sequence[Path]) -> RuleBook:
    from gpudoctor.rulebook.book import load_rulebook

    try:
        return load_rulebook(rule_dirs)
    except RuleErrors as exc:
        for error in exc.errors:
            click.echo(str(error), err=True)
        fail(f"{len(exc.errors)} error(s) in the rules; nothing was diagnosed", EXIT_USAGE)


def stdout_is_tty() -> bool:
    return sys.stdout.isatty()


def text_width(width: int | None) -> int:
    if width:
        return width
    import shutil

    return min(shutil.get_terminal_size((100, 24)).columns, 120)


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


def emit_report(report: Report, out: OutputSettings) -> None:
    """Print the report to standard output in the chosen format."""
    fmt = "text" if out.fmt == "auto" else out.fmt
    if fmt == "json":
        from gpudoctor.render.json import render_json

        click.echo(render_json(report), nl=False)
    elif fmt == "markdown":
        from gpudoctor.render.markdown import render_markdown

        click.echo(render_markdown(report, redact_output=not out.no_redact), nl=False)
    else:
        from gpudoctor.render.text import render_text

        width = text_width(out.width)
        styled = render_text(report, width, verbose=out.verbose)
        use_color = out.color
        if use_color is None:
            use_color = stdout_is_tty() and "NO_COLOR" not in os.environ
        click.echo(
            styled.to_ansi(width) if use_color else styled.plain(), nl=False, color=use_color
        )


def exit_for(report: Report, out: OutputSettings) -> int:
    """The exit code: 3 when nothing could be read, 1 when a cause reached ``--fail-on``."""
    if report.inputs and all(i.error is not None for i in report.inputs):
        return EXIT_NO_INPUT
    if out.fail_on == "never":
        return EXIT_OK
    floor = SEVERITY_ORDER.index(out.fail_on)
    for diagnosis in report.causes:
        if (
            diagnosis.confidence >= out.min_confidence
            and SEVERITY_ORDER.index(diagnosis.severity) >= floor
        ):
            return EXIT_FINDING
    return EXIT_OK


_F = TypeVar("_F", bound=Callable[..., Any])


def output_options(func: _F) -> _F:
    """Options shared by the commands that print a report."""
    options = [
        click.option("--format", "fmt", type=click.Choice(FORMATS), default="auto",
                     show_default=True, help="Output format (auto: text)."),
        click.option("--width", type=click.IntRange(40, 400), default=None,
                     help="Text width (default: the terminal's, at most 120)."),
        click.option("--color/--no-color", default=None,
                     help="Colour the text output (default: on a terminal, unless NO_COLOR)."),
        click.option("--no-redact", is_flag=True,
                     help="Markdown: keep user names, hosts, IPs, tokens and UUIDs."),
        click.option("-v", "--verbose", is_flag=True, help="Show explanations and all references."),
        click.option("--fail-on", type=click.Choice(("never", *SEVERITY_ORDER)), default="never",
                     show_default=True,
                     help="Exit 1 when a cause of at least this severity is found."),
        click.option("--min-confidence", type=click.FloatRange(0, 1), default=0.5,
                     show_default=True, help="Confidence a cause needs to count for --fail-on."),
        click.option("--rules", "rule_dirs", multiple=True,
                     type=click.Path(exists=True, file_okay=False, path_type=Path),
                     help="A directory of your own rules, added to the bundled pack "
                     "(repeatable)."),
    ]  # fmt: skip
    for option in reversed(options):
        func = option(func)
    return func


class LazyGroup(click.Group):
    """A group whose commands are imported only when used, to keep start-up short."""

    def __init__(self, *args: Any, lazy: dict[str, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._lazy = lazy

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self._lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = self._lazy.get(cmd_name)
        if target is None:
            return super().get_command(ctx, cmd_name)
        module, attribute = target.split(":")
        command = getattr(importlib.import_module(module), attribute)
        assert isinstance(command, click.Command)
        return command


COMMANDS = {
    "explain": "gpudoctor.cli.explain:explain",
    "diagnose": "gpudoctor.cli.machine:diagnose",
    "snapshot": "gpudoctor.cli.machine:snapshot",
    "rules": "gpudoctor.cli.rules:rules",
    "check": "gpudoctor.cli.check:check",
}


@click.group(
    cls=LazyGroup,
    lazy=COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, prog_name="gpudoctor")
def main() -> None:
    """gpudoctor tells you why your GPU job died.

    It reads what a crash leaves behind (logs, the kernel log, the GPUs' state) and prints a
    short ranked list of causes, each with its evidence, its confidence and how to fix it.
    """


def run() -> None:
    """Entry point that turns unexpected gpudoctor errors into one clear line."""
    try:
        main()
    except GpudoctorError as exc:
        fail(str(exc), EXIT_USAGE)
