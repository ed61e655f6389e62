"""The command line: the only layer that prints or exits.

Exit codes (every command): 0 ran and nothing reached ``--fail-on``; 1 a finding reached
``--fail-on`` (for ``check``, a failed check; for ``rules test``, a failed example); 2 usage
error, invalid rules, or the output could not be written (a full disk); 3 nothing could be
collected or read (every input unreadable or empty); 4 gpudoctor itself failed (a bug: one
line on stderr, the traceback with ``-v`` or ``GPUDOCTOR_DEBUG=1``). A closed pipe
(``gpudoctor explain x.log | head -1``) ends the run silently with 141, as SIGPIPE would;
Ctrl-C ends it with 130, as SIGINT would.

This module holds the group and the error handling; shared options live in
:mod:`gpudoctor.cli.options`, inputs in :mod:`gpudoctor.cli.inputs`, writing in
:mod:`gpudoctor.cli.output`. Each command has its own module, imported only when it runs.
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import os
import re
import stat
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

import click

from gpudoctor import __version__
from gpudoctor.errors import GpudoctorError, RuleErrors

if TYPE_CHECKING:
    from pathlib import Path

    from gpudoctor.rulebook.book import RuleBook

EXIT_OK, EXIT_FINDING, EXIT_USAGE, EXIT_NO_INPUT, EXIT_INTERNAL = 0, 1, 2, 3, 4
EXIT_BROKEN_PIPE = 128 + 13  # as if SIGPIPE had ended the process, like other Unix tools
EXIT_INTERRUPTED = 128 + 2  # Ctrl-C, as SIGINT would
DEBUG_ENV = "GPUDOCTOR_DEBUG"
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # all but tab and newline


def fail(message: str, code: int) -> NoReturn:
    """Print ``gpudoctor: message`` on standard error and exit with ``code``.

    Control characters (an exception's text may quote a log) are shown as ``\\xNN``, never
    sent to the terminal. When standard error itself cannot be written, the exit code still
    tells.
    """
    shown = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", message)
    with contextlib.suppress(OSError, ValueError):
        click.echo(f"gpudoctor: {shown}", err=True)
    sys.exit(code)


def load_book(
    rule_dirs: Sequence[Path], *, verbose: bool = False, examples: bool = True
) -> RuleBook:
    """The bundled rules and the user's; invalid rules are listed and end the run (exit 2).

    With ``verbose``, what the rule cache had to say (refused, rebuilt) goes to stderr.
    """
    from gpudoctor.rulebook.book import load_rulebook

    try:
        book = load_rulebook(rule_dirs, examples=examples)
    except RuleErrors as exc:
        for error in exc.errors:
            click.echo(str(error), err=True)
        fail(f"{len(exc.errors)} error(s) in the rules; nothing was diagnosed", EXIT_USAGE)
    if verbose:
        for note in book.cache_notes:
            click.echo(f"gpudoctor: {note}", err=True)
    return book


class LazyGroup(click.Group):
    """A group whose commands are imported only when used, to keep start-up short.

    It also turns what goes wrong inside a command into one line and a documented exit
    code: gpudoctor's own errors (exit 2), a full disk under standard output (exit 2), a
    closed pipe (silent), and anything unexpected (exit 4, the traceback only on request).
    """

    def __init__(self, *args: Any, lazy: dict[str, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._lazy = lazy
        self._argv: list[str] = []

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

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        unknown = name and not name.startswith("-") and self.get_command(ctx, name) is None
        if unknown and _looks_like_a_file(name):
            raise click.UsageError(
                f"{name!r} is not a command; to explain a log, run: "
                f"gpudoctor explain {click.format_filename(name)}",
                ctx,
            )
        return super().resolve_command(ctx, args)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args and _stdin_is_piped():
            fail(
                "no command given; to explain a log piped in, run: ... | gpudoctor explain "
                "(see gpudoctor --help)",
                EXIT_USAGE,
            )
        return super().parse_args(ctx, args)

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        self._argv = list(args)
        return super().make_context(info_name, args, parent, **extra)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except BrokenPipeError:
            _quiet_broken_pipe()
        except KeyboardInterrupt:
            click.echo("", err=True)
            sys.exit(EXIT_INTERRUPTED)
        except GpudoctorError as exc:
            fail(str(exc), EXIT_USAGE)
        except OSError as exc:
            if exc.filename is None and exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
                fail(f"cannot write the output: {exc.strerror or exc}", EXIT_USAGE)
            self._internal_error(exc)
        except Exception as exc:
            self._internal_error(exc)

    def _internal_error(self, exc: Exception) -> NoReturn:
        argv = self._argv[: self._argv.index("--")] if "--" in self._argv else self._argv
        if os.environ.get(DEBUG_ENV) == "1" or "-v" in argv or "--verbose" in argv:
            import traceback  # only now: importing it costs more than the rest of start-up

            traceback.print_exception(exc, file=sys.stderr)
        detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        fail(f"internal error: {detail}; run with -v for the traceback", EXIT_INTERNAL)


def _looks_like_a_file(name: str) -> bool:
    return os.path.exists(name) or os.sep in name or "." in name


def _stdin_is_piped() -> bool:
    """Standard input is a pipe or a file (``cat x.log | gpudoctor``), not a terminal."""
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode)


def _quiet_broken_pipe() -> NoReturn:
    """The reader went away (``| head``): stop without a word, as the Python docs advise.

    Standard output is pointed at /dev/null so that the interpreter's last flush at exit
    cannot fail again.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
    sys.exit(EXIT_BROKEN_PIPE)


COMMANDS = {
    "explain": "gpudoctor.cli.explain:explain",
    "diagnose": "gpudoctor.cli.diagnose:diagnose",
    "snapshot": "gpudoctor.cli.snapshot:snapshot",
    "rules": "gpudoctor.cli.rules:rules",
    "check": "gpudoctor.cli.check:check",
    "run": "gpudoctor.cli.run:run",
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

    Exit codes: 0 nothing reached --fail-on, 1 a cause reached --fail-on (check: a check
    failed), 2 usage error or output not written, 3 nothing could be read, 4 internal error.
    """


def run(argv: Sequence[str] | None = None) -> None:
    """Entry point: run the command line, then flush standard output safely.

    A closed pipe at the last flush is as silent as one met while writing.
    """
    code: int | str | None = 0
    try:
        main.main(args=list(argv) if argv is not None else None, prog_name="gpudoctor")
    except SystemExit as exc:
        code = exc.code
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except BrokenPipeError:
        _quiet_broken_pipe()
    except OSError as exc:
        fail(f"cannot write the output: {exc.strerror or exc}", EXIT_USAGE)
    sys.exit(code)
