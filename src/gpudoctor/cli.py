"""The command line. The only module that prints or exits.

Exit codes (every command): 0 ran and nothing reached ``--fail-on``; 1 a finding reached
``--fail-on`` (for ``check``, a failed check; for ``rules test``, a failed example); 2 usage
error or invalid rules; 3 nothing could be collected or read.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, BinaryIO, NoReturn, TypeVar

import click

from gpudoctor import __version__
from gpudoctor.errors import GpudoctorError, RuleErrors
from gpudoctor.pipeline import LogInput, build_report, make_scanner, scan_logs
from gpudoctor.report import Report
from gpudoctor.rulebook.book import RuleBook, load_rulebook

EXIT_OK, EXIT_FINDING, EXIT_USAGE, EXIT_NO_INPUT = 0, 1, 2, 3
SEVERITY_ORDER = ("info", "warning", "error", "critical")
FORMATS = ("auto", "text", "json", "markdown")


def _fail(message: str, code: int) -> NoReturn:
    click.echo(f"gpudoctor: {message}", err=True)
    sys.exit(code)


def _load_book(rule_dirs: Sequence[Path]) -> RuleBook:
    try:
        return load_rulebook(rule_dirs)
    except RuleErrors as exc:
        for error in exc.errors:
            click.echo(str(error), err=True)
        _fail(f"{len(exc.errors)} error(s) in the rules; nothing was diagnosed", EXIT_USAGE)


def _stdout_is_tty() -> bool:
    return sys.stdout.isatty()


def _width(width: int | None) -> int:
    if width:
        return width
    return min(shutil.get_terminal_size((100, 24)).columns, 120)


def _emit_report(
    report: Report, fmt: str, *, width: int | None, color: bool | None, redact: bool, verbose: bool
) -> None:
    if fmt == "auto":
        fmt = "text"
    if fmt == "json":
        from gpudoctor.render.json import render_json

        click.echo(render_json(report), nl=False)
    elif fmt == "markdown":
        from gpudoctor.render.markdown import render_markdown

        click.echo(render_markdown(report, redact_output=redact), nl=False)
    else:
        from gpudoctor.render.text import render_text

        styled = render_text(report, _width(width), verbose=verbose)
        use_color = _stdout_is_tty() and "NO_COLOR" not in os.environ if color is None else color
        click.echo(styled.to_ansi(_width(width)) if use_color else styled.plain(), nl=False)


def _exit_for(report: Report, fail_on: str, min_confidence: float) -> int:
    if report.inputs and all(i.error is not None for i in report.inputs):
        return EXIT_NO_INPUT
    if fail_on == "never":
        return EXIT_OK
    floor = SEVERITY_ORDER.index(fail_on)
    for diagnosis in report.causes:
        if (
            diagnosis.confidence >= min_confidence
            and SEVERITY_ORDER.index(diagnosis.severity) >= floor
        ):
            return EXIT_FINDING
    return EXIT_OK


def _log_inputs(files: Sequence[str]) -> list[LogInput]:
    inputs: list[LogInput] = []
    for name in files:
        if name == "-":
            inputs.append(LogInput("<stdin>", _stdin_opener, kind="stdin"))
            continue
        path = Path(name)
        if path.is_dir():
            _fail(f"{name} is a directory; give the log files in it", EXIT_USAGE)
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


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gpudoctor")
def main() -> None:
    """gpudoctor tells you why your GPU job died.

    It reads what a crash leaves behind (logs, the kernel log, the GPUs' state) and prints a
    short ranked list of causes, each with its evidence, its confidence and how to fix it.
    """


@main.command()
@click.argument("files", nargs=-1)
@output_options
def explain(
    files: tuple[str, ...],
    fmt: str,
    width: int | None,
    color: bool | None,
    no_redact: bool,
    verbose: bool,
    fail_on: str,
    min_confidence: float,
    rule_dirs: tuple[Path, ...],
) -> None:
    """Explain a crash from its logs alone (no GPU needed).

    FILES are log files (plain or gzip); with none, or "-", the log is read from standard
    input: `python train.py 2>&1 | gpudoctor explain`.
    """
    if not files:
        if sys.stdin is None or sys.stdin.isatty():
            _fail(
                "no input: give log files, or pipe a log in (python train.py 2>&1 | "
                "gpudoctor explain)",
                EXIT_USAGE,
            )
        files = ("-",)
    inputs = _log_inputs(files)
    book = _load_book(rule_dirs)
    scan = scan_logs(inputs, make_scanner(book))
    for item in scan.inputs:
        if item.error:
            click.echo(f"gpudoctor: cannot read {item.name}: {item.error}", err=True)
    if scan.readable == 0:
        _fail("none of the inputs could be read", EXIT_NO_INPUT)
    report = build_report(book, scan)
    _emit_report(report, fmt, width=width, color=color, redact=not no_redact, verbose=verbose)
    sys.exit(_exit_for(report, fail_on, min_confidence))


@main.group()
def rules() -> None:
    """List, show, lint and test rules (the bundled pack and your own)."""


def _rule_paths(paths: tuple[Path, ...]) -> list[Path]:
    from gpudoctor.rulebook.files import bundled_rules_dir

    return list(paths) or [bundled_rules_dir()]


@rules.command("list")
@click.option("--rules", "rule_dirs", multiple=True,
              type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Also list the rules in this directory (repeatable).")  # fmt: skip
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text")
def rules_list(rule_dirs: tuple[Path, ...], fmt: str) -> None:
    """List the rules: id, cause, role, severity and title."""
    book = _load_book(rule_dirs)
    if fmt == "json":
        import json

        rows = [
            {"id": r.id, "cause": r.cause, "role": r.role.value, "severity": r.severity.value,
             "confidence": r.confidence, "title": r.title, "path": r.path}
            for r in book.rules
        ]  # fmt: skip
        click.echo(json.dumps(rows, indent=2))
        return
    id_width = max((len(r.id) for r in book.rules), default=2)
    cause_width = max((len(r.cause) for r in book.rules), default=5)
    for rule in sorted(book.rules, key=lambda r: (r.cause, r.id)):
        click.echo(
            f"{rule.id:<{id_width}}  {rule.cause:<{cause_width}}  {rule.role.value:<12}  "
            f"{rule.severity.value:<8}  {rule.title}"
        )
    click.echo(f"{len(book.rules)} rules")


@rules.command("show")
@click.argument("rule_id")
@click.option("--rules", "rule_dirs", multiple=True,
              type=click.Path(exists=True, file_okay=False, path_type=Path))  # fmt: skip
def rules_show(rule_id: str, rule_dirs: tuple[Path, ...]) -> None:
    """Print one rule's file, as written."""
    book = _load_book(rule_dirs)
    rule = book.get(rule_id)
    if rule is None:
        import difflib

        close = difflib.get_close_matches(rule_id, [r.id for r in book.rules], n=3)
        hint = f" (did you mean: {', '.join(close)}?)" if close else ""
        _fail(f'no rule "{rule_id}"{hint}; see `gpudoctor rules list`', EXIT_USAGE)
    click.echo(f"# {rule.path}")
    click.echo(Path(rule.path).read_text(encoding="utf-8"), nl=False)


@rules.command("lint")
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option("--strict", is_flag=True, help="Treat warnings as errors.")
def rules_lint(paths: tuple[Path, ...], strict: bool) -> None:
    """Check rule files (default: the bundled pack); print every problem as path:line:col."""
    from gpudoctor.rulebook.lint import lint_rules
    from gpudoctor.rulebook.files import bundled_rules_dir
    from gpudoctor.rulebook.loader import load_rules

    targets = _rule_paths(paths)
    context = [] if not paths else [bundled_rules_dir()]
    loaded = load_rules([*context, *targets], collect=True)
    target_files = {str(p) for p in _expand(targets)}
    own = [r for r in loaded.rules if r.path in target_files]
    errors = [e for e in loaded.errors if e.location.path in target_files or not paths]
    warnings = lint_rules(own)
    for error in errors:
        click.echo(f"{error.location}: error: {error.message}")
    for warning in warnings:
        click.echo(str(warning))
    click.echo(f"{len(own)} rules checked: {len(errors)} errors, {len(warnings)} warnings")
    if errors or (strict and warnings):
        sys.exit(EXIT_USAGE)


def _expand(paths: Sequence[Path]) -> list[Path]:
    from gpudoctor.rulebook.files import rule_files

    return rule_files(paths)


@rules.command("test")
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option("-v", "--verbose", is_flag=True, help="List every example, not only failures.")
def rules_test(paths: tuple[Path, ...], verbose: bool) -> None:
    """Run every rule's examples: each `match` text must fire it, each `no_match` must not."""
    from gpudoctor.rulebook.loader import load_rules
    from gpudoctor.rulebook.selftest import run_examples

    try:
        loaded = load_rules(_rule_paths(paths))
    except RuleErrors as exc:
        for error in exc.errors:
            click.echo(str(error), err=True)
        _fail(f"{len(exc.errors)} error(s) in the rules; no example was run", EXIT_USAGE)
    results = run_examples(loaded.rules)
    failed = [r for r in results if not r.passed]
    for result in results if verbose else failed:
        status = "ok  " if result.passed else "FAIL"
        click.echo(f"{status} {result.describe()}")
    click.echo(f"{len(results) - len(failed)} passed, {len(failed)} failed")
    if failed:
        sys.exit(EXIT_FINDING)


def run() -> None:
    """Entry point that turns unexpected gpudoctor errors into one clear line."""
    try:
        main()
    except GpudoctorError as exc:
        _fail(str(exc), EXIT_USAGE)
