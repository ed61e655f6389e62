"""The renderers' one interface and the registry of formats, keyed by (document, format).

A document is one of three kinds: ``"report"`` (:class:`~gpudoctor.report.Report`, from
``explain`` and ``diagnose``), ``"check"`` (:class:`~gpudoctor.check.model.CheckReport`) and
``"snapshot"`` (:class:`~gpudoctor.snapshot.model.Snapshot`). Every format is a
:class:`Renderer`: a name and a pure ``render(document, options)`` that returns
:class:`~gpudoctor.render.styled.Styled` text, which the CLI prints plain or, for formats
with ``colour``, coloured on a terminal. A command offers :func:`format_names` of its kind.

Each renderer module is imported only when its format is used, to keep start-up short.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from gpudoctor.render.styled import Styled

if TYPE_CHECKING:
    from gpudoctor.check.model import CheckReport
    from gpudoctor.report import Report, Threshold
    from gpudoctor.snapshot.model import Snapshot

REPORT, CHECK, SNAPSHOT = "report", "check", "snapshot"


@dataclass(frozen=True)
class RenderOptions:
    """What the user chose about the output; each format reads the options it has a use for."""

    width: int = 100
    verbose: bool = False
    redact: bool = True
    """Markdown: replace user names, hosts, addresses, tokens and UUIDs."""
    threshold: Threshold | None = None
    """JUnit and GitHub: which diagnoses are failures (default: causes at confidence 0.5)."""


class Renderer(Protocol):
    """A format of one kind of document."""

    @property
    def name(self) -> str:
        """The format's name, as ``--format`` takes it."""
        ...

    @property
    def colour(self) -> bool:
        """Whether the output may be coloured on a terminal (text formats)."""
        ...

    def render(self, document: Any, options: RenderOptions) -> Styled:
        """The document as text; pure, the same input always gives the same output."""
        ...


@dataclass(frozen=True)
class Format:
    """A :class:`Renderer` backed by a function returning :class:`Styled` or plain text."""

    kind: str
    name: str
    function: Callable[[Any, RenderOptions], Styled | str]
    colour: bool = False

    def render(self, document: Any, options: RenderOptions) -> Styled:
        """Run the renderer; plain text becomes one unstyled piece."""
        out = self.function(document, options)
        return out if isinstance(out, Styled) else Styled().add(out)


def _report_text(report: Report, options: RenderOptions) -> Styled:
    from gpudoctor.render.text import render_text

    return render_text(report, options.width, verbose=options.verbose)


def _report_json(report: Report, options: RenderOptions) -> str:
    from gpudoctor.render.json import render_json

    return render_json(report)


def _report_markdown(report: Report, options: RenderOptions) -> str:
    from gpudoctor.render.markdown import render_markdown

    return render_markdown(report, redact_output=options.redact)


def _report_junit(report: Report, options: RenderOptions) -> str:
    from gpudoctor.render.junit import render_junit

    return render_junit(report, options.threshold)


def _report_github(report: Report, options: RenderOptions) -> str:
    from gpudoctor.render.github import render_github

    return render_github(report, options.threshold)


def _check_text(report: CheckReport, options: RenderOptions) -> Styled:
    from gpudoctor.render.check_text import render_check_text

    return render_check_text(report, options.width, verbose=options.verbose)


def _check_json(report: CheckReport, options: RenderOptions) -> str:
    from gpudoctor.render.check_json import render_check_json

    return render_check_json(report)


def _check_junit(report: CheckReport, options: RenderOptions) -> str:
    from gpudoctor.render.check_junit import render_check_junit

    return render_check_junit(report)


def _check_github(report: CheckReport, options: RenderOptions) -> str:
    from gpudoctor.render.check_github import render_check_github

    return render_check_github(report)


def _snapshot_json(snapshot: Snapshot, options: RenderOptions) -> str:
    return snapshot.to_json()


def _snapshot_text(snapshot: Snapshot, options: RenderOptions) -> str:
    from gpudoctor.render.snapshot_text import render_snapshot_text

    return render_snapshot_text(snapshot, width=options.width)


FORMATS: dict[tuple[str, str], Format] = {
    (f.kind, f.name): f
    for f in (
        Format(REPORT, "text", _report_text, colour=True),
        Format(REPORT, "json", _report_json),
        Format(REPORT, "markdown", _report_markdown),
        Format(REPORT, "junit", _report_junit),
        Format(REPORT, "github", _report_github),
        Format(CHECK, "text", _check_text, colour=True),
        Format(CHECK, "json", _check_json),
        Format(CHECK, "junit", _check_junit),
        Format(CHECK, "github", _check_github),
        Format(SNAPSHOT, "json", _snapshot_json),
        Format(SNAPSHOT, "text", _snapshot_text),
    )
}


def format_names(kind: str) -> tuple[str, ...]:
    """The formats a kind of document has, in the order ``--help`` lists them."""
    return tuple(name for k, name in FORMATS if k == kind)


def get_renderer(kind: str, name: str) -> Renderer:
    """The renderer of ``name`` for documents of ``kind``; :class:`KeyError` if none."""
    return FORMATS[(kind, name)]
