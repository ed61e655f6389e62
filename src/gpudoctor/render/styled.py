"""Styled text: a renderer's output as (text, style) pieces, printable plain or coloured.

Renderers build :class:`Styled` once; the CLI prints it plain (files, pipes, golden tests) or
hands it to rich on a terminal. rich is imported only in the coloured case, which keeps the
start-up of plain runs short.

Every piece passes :func:`~gpudoctor.render.escape.for_terminal` on the way in, so no escape
sequence or control character from a log reaches the terminal, whatever a renderer forgot;
pieces go to rich as :class:`rich.text.Text`, never as markup, so ``[bold]`` in a log is text.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpudoctor.render.escape import for_terminal


@dataclass
class Styled:
    """A sequence of text pieces, each with an optional rich style name."""

    pieces: list[tuple[str, str]] = field(default_factory=list)

    def add(self, text: str, style: str = "") -> Styled:
        """Append a piece (control characters made harmless); returns self for chaining."""
        self.pieces.append((for_terminal(text), style))
        return self

    def line(self, text: str = "", style: str = "") -> Styled:
        """Append a piece and a newline."""
        return self.add(text + "\n", style)

    def plain(self) -> str:
        """The text without styles."""
        return "".join(text for text, _ in self.pieces)

    def to_ansi(self, width: int) -> str:
        """The text with ANSI colours, rendered by rich."""
        from rich.console import Console
        from rich.text import Text

        console = Console(width=width, force_terminal=True, color_system="standard")
        text = Text()
        for piece, style in self.pieces:
            text.append(piece, style=style or None)
        with console.capture() as capture:
            console.print(text, end="", soft_wrap=True)
        return capture.get()
