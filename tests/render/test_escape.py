"""Escaping at the render boundary: hostile logs and file names against the terminal and Markdown.

Markdown output is checked by parsing it with a CommonMark parser (markdown-it-py, which rich
already depends on) with raw HTML allowed, as GitHub allows some: whatever the log holds, the
parsed document must have exactly the structure gpudoctor wrote.
"""

from __future__ import annotations

import re

import pytest
from markdown_it import MarkdownIt

from gpudoctor.render.escape import autolink, code_span, fence, for_terminal, inline, one_line
from gpudoctor.render.markdown import render_markdown
from gpudoctor.render.styled import Styled
from gpudoctor.render.text import render_text
from gpudoctor.report import Diagnosis, Evidence, InputSummary, Report

HOSTILE_LINE = (
    "RuntimeError: boom ``` </details> <img src=x onerror=alert(1)> [x](https://evil.example) "
    "\x1b]0;owned\x07\x1b[2J\x1b[31mred\x1b[0m \x9b2J bell\x07 back\x08 cr\r \u202egnp.exe"
)
HOSTILE_NAME = "run`s``\n# Heading <b>bold</b>.log"


def hostile_report() -> Report:
    diagnosis = Diagnosis(
        rank=1,
        rule="r-hostile",
        cause="test_cause",
        role="root",
        severity="error",
        confidence=0.9,
        title="Title [link](https://evil.example) <i>x</i>",
        summary=(
            "Captured: </details> <script>alert(1)</script> `code` ![img](x.png)\n# not a heading"
        ),
        explanation="",
        evidence=(
            Evidence(source=HOSTILE_NAME, line=7, text=HOSTILE_LINE),
            Evidence(source="snapshot", fact="gpu.name", value="A100\x1b]8;;https://evil\x07"),
        ),
        matches=2,
        facts={},
        fix=("# rm -rf / \x1b[8mhidden", "Set `X=1` then <details>open"),
        references=("https://example.org/ok", "javascript:alert(1)"),
    )
    return Report(
        inputs=(
            InputSummary(kind="log", name=HOSTILE_NAME, lines=9, warnings=("bad\x1b[2Jwarning",)),
        ),
        diagnoses=(diagnosis,),
        version="0.0.0-test",
    )


# ── terminal ──


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain text, tabs\tand\nnewlines", "plain text, tabs\tand\nnewlines"),
        ("\x1b[31mred\x1b[0m", "red"),
        ("\x1b]0;title\x07after", "after"),
        ("\x1b]8;;https://x\x1b\\link\x1b]8;;\x1b\\", "link"),
        ("\x9b2Jx", "x"),
        ("a\x07b\x08c\x00d\x7fe", "a\\x07b\\x08c\\x00d\\x7fe"),
        ("over\rwrite", "over\\rwrite"),
        ("a lone escape at the end\x1b", "a lone escape at the end\\x1b"),
        ("\u202egnp.exe", "\\u202egnp.exe"),
        ("\x85next line", "\\x85next line"),
    ],
)
def test_for_terminal(text: str, expected: str) -> None:
    assert for_terminal(text) == expected


def test_one_line_shows_line_breaks() -> None:
    assert one_line("a\nb\r\nc") == "a\\nb\\r\\nc"


def test_styled_pieces_are_made_harmless() -> None:
    styled = Styled().line("x\x1b]0;t\x07y\x07", "red")
    assert styled.plain() == "xy\\x07\n"


def test_rich_markup_in_log_text_is_not_interpreted() -> None:
    coloured = Styled().line("[bold]not bold[/bold] :smile: \x1b[5mblink", "cyan").to_ansi(80)
    assert "[bold]not bold[/bold] :smile: blink" in coloured
    # the only escape sequences left are the colours gpudoctor chose (SGR)
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured).rstrip("\n").isprintable()


def test_text_output_never_carries_control_characters() -> None:
    styled = render_text(hostile_report(), width=100, verbose=True)
    for output in (styled.plain(), re.sub(r"\x1b\[[0-9;]*m", "", styled.to_ansi(100))):
        assert all(ch.isprintable() or ch == "\n" for ch in output), repr(output)
    plain = styled.plain()
    assert "run`s``\\n# Heading <b>bold</b>.log" in plain  # the name stays on one line
    assert not any(line.startswith("# Heading") for line in plain.splitlines())
    assert "\\x07" in plain and "\\u202egnp.exe" in plain


# ── Markdown ──


def parse(markdown: str) -> list[tuple[str, str]]:
    parser = MarkdownIt("commonmark", {"html": True}).enable("table")
    return [(t.type, t.content) for t in parser.parse(markdown)]


def html(markdown: str) -> str:
    return MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)


def test_fence_is_longer_than_any_backtick_run() -> None:
    assert fence(["a ```` b", "`"]) == ["`````text", "a ```` b", "`", "`````"]
    assert fence(["plain"]) == ["```text", "plain", "```"]


def test_code_span_survives_backticks_and_newlines() -> None:
    assert code_span("`x") == "`` `x ``"
    span = code_span("a``b`\nc")
    assert span == "```a``b`\\nc```"
    assert html(span) == "<p><code>a``b`\\nc</code></p>\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("checked t >= 0 && t < n_classes", "checked t >= 0 && t < n_classes"),
        ("# heading", "\\# heading"),
        ("  > quote", "  \\> quote"),
        ("1. item", "1\\. item"),
        ("1.5 GiB free", "1.5 GiB free"),
        ("[a](http://x) ![i](y)", "\\[a\\](http://x) !\\[i\\](y)"),
        ("<img src=x> </details> <host>", "&lt;img src=x> &lt;/details> &lt;host>"),
        ("a | b", "a \\| b"),
        ("&amp; &#60;", "&amp;amp; &amp;#60;"),
        ("C:\\Users\\<user>\\x", "C:\\Users\\\\&lt;user>\\x"),
        ("line\nbreak", "line\\nbreak"),
    ],
)  # fmt: skip
def test_inline(text: str, expected: str) -> None:
    assert inline(text) == expected


def test_inline_text_renders_as_written() -> None:
    text = "<host> [x](y) `z` a|b &amp; C:\\Users\\<user>"
    assert html(inline(text)) == (
        "<p>&lt;host&gt; [x](y) `z` a|b &amp;amp; C:\\Users\\&lt;user&gt;</p>\n"
    )


def test_autolink_only_for_web_addresses() -> None:
    assert autolink("https://example.org/a?b=1") == "<https://example.org/a?b=1>"
    assert autolink("javascript:alert(1)") == "`javascript:alert(1)`"
    assert autolink("https://x.org/a>b") == "`https://x.org/a>b`"


def test_hostile_report_keeps_the_markdown_structure() -> None:
    markdown = render_markdown(hostile_report(), redact_output=False)
    rendered = html(markdown)
    # no HTML from the inputs: only the tags gpudoctor writes itself
    assert not re.search(r"<(img|script|b|i)\b", rendered)
    assert rendered.count("<details>") == 1 and rendered.count("</details>") == 1
    assert "<a " not in rendered.replace('<a href="https://example.org/ok">', "")
    # one heading per section gpudoctor writes, none from the inputs
    assert re.findall(r"<h\d>", rendered) == ["<h2>", "<h3>"]
    # the evidence is one code block holding the hostile line whole, escapes shown
    blocks = [c for t, c in parse(markdown) if t == "fence"]
    assert len(blocks) == 1
    assert "``` </details> <img src=x onerror=alert(1)>" in blocks[0]
    assert "\\x07" in blocks[0] and "\x1b" not in blocks[0]
    assert "gpu.name = A100" in blocks[0]


def test_hostile_file_name_stays_inline() -> None:
    markdown = render_markdown(hostile_report(), redact_output=False)
    first = markdown.split("\n\n")[1]
    assert first.startswith("gpudoctor 0.0.0-test read ")
    assert "\n" not in first
    assert "<code>run`s``\\n# Heading &lt;b&gt;bold&lt;/b&gt;.log</code>" in html(first)
