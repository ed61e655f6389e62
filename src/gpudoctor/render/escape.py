"""Escaping at the render boundary: text from logs and file names, made safe to print or paste.

Everything a report quotes (evidence lines, captured values, input names, warnings) is other
people's text. Before it reaches a terminal, :func:`for_terminal` removes escape sequences
(colours, cursor moves, window titles, hyperlinks) and shows every other control character
visibly (``\\x07``, ``\\r``), so a log cannot clear the screen, retitle the window, hide text
or fake a line of gpudoctor's own output. Unicode bidirectional controls are shown the same
way, so text cannot be reordered on screen ("Trojan Source").

Before it goes into Markdown, :func:`fence` wraps lines in a code block that no content can
close (the fence is longer than any run of backticks inside, as CommonMark requires),
:func:`code_span` does the same for inline code, and :func:`inline` escapes prose so that it
cannot open links, images, HTML (``</details>``, ``<img onerror=...>``), headings, lists or
table cells.
"""

from __future__ import annotations

import re

_ESCAPE_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves, screen clears
    # OSC (titles, hyperlinks), DCS and the other strings, ended by BEL or ST
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x90-\x9f]*(?:\x07|\x1b\\|\x9c)"
    r"|\x1b[ -/]*[0-~]"  # other escapes (charset selection, keypad modes, RIS)
)
_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_CONTROL = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029{_BIDI}]")
_CONTROL_ONE_LINE = re.compile(f"[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029{_BIDI}]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\x1b": "\\x1b"}


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def for_terminal(text: str, *, newlines: bool = True) -> str:
    """``text`` safe to print: escape sequences removed, other control characters shown.

    Args:
        text: text that came from a log, a file name or any other input.
        newlines: keep ``\\n`` as a line break (layout); with ``False`` it is shown as ``\\n``,
            for values that must stay on one line (a file name, an evidence line).

    Tabs are kept. Escape sequences (CSI, OSC, DCS and the two-byte forms, in their 7-bit and
    8-bit spellings) are removed; every other C0 or C1 control character, DEL, the Unicode line
    and paragraph separators and the bidirectional controls become visible escapes.
    """
    if text.isprintable():
        return text
    text = _ESCAPE_SEQUENCE.sub("", text)
    return (_CONTROL if newlines else _CONTROL_ONE_LINE).sub(_visible, text)


def one_line(text: str) -> str:
    """``text`` safe to print on one line (:func:`for_terminal` with newlines shown)."""
    return for_terminal(text, newlines=False)


def fence(lines: list[str], info: str = "text") -> list[str]:
    """A fenced Markdown code block holding ``lines`` verbatim, as a list of lines.

    The fence is a run of backticks longer than any run inside the content (at least three),
    so no line of the content can close the block; control characters are made visible.
    """
    body = [for_terminal(line, newlines=False) for line in lines]
    runs = [len(run) for line in body for run in re.findall(r"`+", line)]
    marker = "`" * max(3, max(runs, default=0) + 1)
    return [marker + info, *body, marker]


def code_span(text: str) -> str:
    """``text`` as inline Markdown code that its own backticks cannot end."""
    text = one_line(text)
    runs = [len(run) for run in re.findall(r"`+", text)]
    marker = "`" * (max(runs, default=0) + 1)
    if text.startswith("`") or text.endswith("`"):
        text = f" {text} "
    return f"{marker}{text}{marker}"


_PUNCT_AFTER_BACKSLASH = re.compile(r"\\(?=[!-/:-@\[-`{-~])")
_INLINE_SPECIAL = re.compile(r"[\[\]`|]")
_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")
_ENTITY = re.compile(r"&(?=#?\w+;)")
_BLOCK_START = re.compile(r"^\s*(?:[#>+=*~_-]|\d{1,9}(?=[.)](?:\s|$)))")


def inline(text: str) -> str:
    """``text`` as Markdown prose that shows as written and cannot inject markup.

    Brackets, backticks and pipes are backslash-escaped (no links, images, code spans or table
    cells); ``<`` before a letter, ``/``, ``!`` or ``?`` becomes ``&lt;`` (no HTML, no
    autolinks, and placeholders such as ``<host>`` stay visible); ``&`` before an entity name
    becomes ``&amp;``; a leading ``#``, ``>``, ``-``, ``+``, ``*``, ``=``, ``~`` or list number
    is escaped (no headings, quotes or lists); a backslash before punctuation is doubled; line
    breaks and other control characters are shown as escapes. Ordinary text such as
    ``t >= 0 && t < n`` is left as it is.
    """
    text = one_line(text)
    text = _PUNCT_AFTER_BACKSLASH.sub(r"\\\\", text)
    text = _INLINE_SPECIAL.sub(lambda m: "\\" + m.group(), text)
    text = _ENTITY.sub("&amp;", text)
    text = _TAG_START.sub("&lt;", text)
    match = _BLOCK_START.match(text)
    if match:
        # "1." escapes its dot, "#" escapes itself: either way the line is no longer a marker
        cut = match.end() if match.group()[-1].isdigit() else match.end() - 1
        text = f"{text[:cut]}\\{text[cut:]}"
    return text


def autolink(url: str) -> str:
    """``url`` as a Markdown autolink when it is a plain web address, otherwise inline code
    (a rule file could give ``javascript:`` or a URL with ``>`` in it)."""
    if re.fullmatch(r"https?://[^\s<>`\\\x00-\x1f\x7f-\x9f]+", url):
        return f"<{url}>"
    return code_span(url)


def prose(text: str) -> str:
    """Several lines of Markdown prose, each escaped as :func:`inline` does."""
    return "\n".join(inline(line) for line in text.splitlines())
