"""Writing what a command produced: to standard output, or to a file replaced atomically.

Also how the text is printed: its width, and whether it is coloured (``--color``, NO_COLOR,
``TERM=dumb``, a terminal or not). Errors writing standard output are
:class:`~gpudoctor.errors.OutputError` (one line, exit 2) or, for a closed pipe,
:class:`BrokenPipeError` (silent); :func:`gpudoctor.cli.app.run` handles both.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import click

from gpudoctor.errors import OutputError

if TYPE_CHECKING:
    from gpudoctor.render.registry import Renderer, RenderOptions


def text_width(width: int | None) -> int:
    """``--width``, or the terminal's width (at most 120, 100 when it cannot be told)."""
    if width:
        return width
    return min(terminal_columns(os.environ), 120)


def terminal_columns(env: Mapping[str, str], fallback: int = 100) -> int:
    """$COLUMNS when set, else the width of the terminal standard output is on, else
    ``fallback``: what ``shutil.get_terminal_size`` answers, without importing shutil (which
    imports bz2 and lzma: 2 ms of a 150 ms run on a short log, measured)."""
    try:
        columns = int(env.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns > 0:
        return columns
    stdout = sys.__stdout__
    if stdout is None:
        return fallback
    try:
        return os.get_terminal_size(stdout.fileno()).columns or fallback
    except (AttributeError, ValueError, OSError):
        return fallback


def stdout_is_tty() -> bool:
    """Whether standard output is a terminal (not when it is closed)."""
    return sys.stdout is not None and sys.stdout.isatty()


def use_colour(flag: bool | None, env: Mapping[str, str], *, to_terminal: bool) -> bool:
    """``--color``/``--no-color`` when given; else colour on a terminal, unless NO_COLOR.

    NO_COLOR counts only when set to a non-empty value (no-color.org); ``TERM=dumb`` is a
    terminal that cannot show colour.
    """
    if flag is not None:
        return flag
    if env.get("NO_COLOR") or env.get("TERM") == "dumb":
        return False
    return to_terminal


def render(renderer: Renderer, document: object, options: RenderOptions, colour: bool) -> str:
    """The document rendered; coloured only when asked and the format is text."""
    styled = renderer.render(document, options)
    return styled.to_ansi(options.width) if colour and renderer.colour else styled.plain()


def write_stdout(text: str, *, colour: bool = False) -> None:
    """Print ``text`` as is; a write error becomes :class:`OutputError`."""
    if sys.stdout is None:  # started with standard output closed (``>&-``)
        raise OutputError("cannot write the output: standard output is closed")
    try:
        # click strips ANSI codes off a terminal unless told: --color means colour anyway.
        click.echo(text, nl=False, color=colour)
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OutputError(f"cannot write the output: {exc.strerror or exc}") from exc


def write_file(path: Path, text: str) -> None:
    """Write ``path`` through a temporary file in its directory, then rename it into place.

    A crash or a full disk therefore never leaves half a file: ``path`` holds either its old
    content or the whole new one. The file gets the permissions a new file would get.
    """
    import tempfile

    directory = path.parent
    try:
        fd, temporary = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(exc, OSError):
            raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from exc
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
