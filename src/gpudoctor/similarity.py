"""Similarity fallback: when no rule fired, the known signatures nearest to the log's errors.

A paraphrase of a known failure, or a known failure inside a new wrapper ("Exception in main
loop: ..."), may match no rule's regex and still share most of its words with a rule's
example lines. When the engine found nothing at all, :func:`similar_diagnoses` compares the
log's last error-looking lines with every rule's title and ``examples.match`` texts (TF-IDF
weighted cosine over word tokens) and offers the closest causes as leads, each with a
confidence of at most :data:`MAX_CONFIDENCE`: below the 0.5 from which a finding counts as
likely, so a lead never reads as a verdict.

The index is built from the rule book the first time it is needed (only logs that no rule
explains pay for it) and kept for the last book it was built from.

Not wired into :func:`gpudoctor.pipeline.build_report` yet: measured with every rule that fired
on a labelled log removed, it puts the right cause in the top three for 67 of 117 logs instead
of 38, but it also offers leads (below 0.5) on 4 of 37 benign logs, e.g. a Fabric Manager
"Nothing to do" warning that resembles the NVSwitch catalogue. Wiring it needs
:data:`PATTERNS` in the scanner and a call when no cause was found.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from gpudoctor.logs.scanner import Event, PatternHits, PatternSpec
from gpudoctor.report import Diagnosis, Evidence
from gpudoctor.rulebook.book import RuleBook
from gpudoctor.rulebook.model import Role, Rule

ERROR_LINE_KEY = "similarity/error_line"
PATTERNS = (
    # A line that reads like an error report: the words programs use when they fail. Kept
    # case-sensitive on capitalised forms so that the scanner's literal prefilter stays cheap.
    PatternSpec(
        ERROR_LINE_KEY,
        r"(?:Error|ERROR|error:|Exception|FAILED|Failed|failed|Fatal|FATAL|Abort|"
        r"Killed|killed|out of memory|timed out|Terminating|terminated|not responding|"
        r"Segmentation fault|core dumped|Assertion)",
    ),
)
"""The scanner pattern that keeps the log's first and last error-looking lines."""

EXCEPTION_KEY = "facts/tb_exception"
"""The traceback reader's terminal-exception lines, also error lines."""
SUCCESS_KEY = "facts/tb_success"
"""The traceback reader's "the job went on" lines ("Training complete", "Done")."""

MAX_CONFIDENCE = 0.3
MIN_SCORE = 0.3
"""Cosine similarity below which a signature is not offered at all."""
MAX_LEADS = 3
QUERY_LINES = 5

_TOKEN = re.compile(r"[A-Za-z]{3,}")
_STOP = frozenset(
    [
        "the",
        "and",
        "for",
        "with",
        "was",
        "were",
        "this",
        "that",
        "from",
        "are",
        "not",
        "has",
        "have",
        "had",
        "but",
        "you",
        "your",
        "its",
        "into",
        "than",
        "then",
        "when",
        "which",
        "while",
        "will",
        "would",
        "can",
        "could",
        "should",
        "may",
        "might",
        "been",
        "being",
        "also",
        "all",
        "any",
        "some",
        "see",
        "use",
        "used",
        "using",
        "per",
        "out",
    ]
)
_INDEXED_ROLES = (Role.ROOT, Role.CASCADE, Role.GENERIC)


def tokens(text: str) -> list[str]:
    """Lower-case word tokens of ``text`` (letters only, three or more, stop words dropped):
    numbers, paths' digits, addresses and hosts carry no signature."""
    words = (w.lower() for w in _TOKEN.findall(text))
    return [w for w in words if w not in _STOP]


@dataclass(frozen=True)
class Match:
    """One rule whose signature resembles the query, with the cosine similarity."""

    rule: Rule
    score: float


class SimilarityIndex:
    """TF-IDF vectors of every diagnosing rule's title and match examples."""

    def __init__(self, rules: Iterable[Rule]) -> None:
        documents: list[tuple[Rule, Counter[str]]] = []
        for rule in rules:
            if rule.role not in _INDEXED_ROLES or rule.cause == "app_exception":
                continue
            for text in (rule.title, *(e.text for e in rule.examples_match)):
                counts = Counter(tokens(text))
                if counts:
                    documents.append((rule, counts))
        frequency: Counter[str] = Counter()
        for _, counts in documents:
            frequency.update(counts.keys())
        total = len(documents)
        self._idf = {t: math.log((1 + total) / (1 + n)) + 1.0 for t, n in frequency.items()}
        self._documents = [(rule, self._vector(counts)) for rule, counts in documents]

    def _vector(self, counts: Mapping[str, int]) -> dict[str, float]:
        vector = {t: n * self._idf.get(t, 0.0) for t, n in counts.items()}
        norm = math.sqrt(sum(v * v for v in vector.values()))
        return {t: v / norm for t, v in vector.items()} if norm else {}

    def nearest(self, text: str, limit: int = MAX_LEADS) -> list[Match]:
        """The best-scoring rule of each cause, best first, at most ``limit`` causes, each
        at least :data:`MIN_SCORE` similar to ``text``."""
        query = self._vector(Counter(tokens(text)))
        if not query:
            return []
        best: dict[str, Match] = {}
        for rule, vector in self._documents:
            score = sum(w * vector.get(t, 0.0) for t, w in query.items())
            kept = best.get(rule.cause)
            if score >= MIN_SCORE and (kept is None or score > kept.score):
                best[rule.cause] = Match(rule, score)
        ranked = sorted(best.values(), key=lambda m: (-m.score, m.rule.id))
        return ranked[:limit]


_cached: tuple[RuleBook, SimilarityIndex] | None = None


def index_for(book: RuleBook) -> SimilarityIndex:
    """The index of ``book``, built on first use and kept for the last book asked for."""
    global _cached
    if _cached is None or _cached[0] is not book:
        _cached = (book, SimilarityIndex(book.rules))
    return _cached[1]


def error_lines(hits: Mapping[str, PatternHits], limit: int = QUERY_LINES) -> list[Event]:
    """The log's last error-looking lines (terminal exceptions included), in reading order."""
    events: dict[tuple[int, int], Event] = {}
    for key in (ERROR_LINE_KEY, EXCEPTION_KEY):
        found = hits.get(key)
        if found is not None:
            for event in found.events():
                events.setdefault(event.order, event)
    return [events[order] for order in sorted(events)][-limit:]


def similar_diagnoses(
    book: RuleBook, hits: Mapping[str, PatternHits], first_rank: int = 1
) -> list[Diagnosis]:
    """Leads for a log no rule explained: the causes whose known signatures most resemble
    its last error lines, at a confidence of at most :data:`MAX_CONFIDENCE`."""
    lines = error_lines(hits)
    if not lines:
        return []
    success = hits.get(SUCCESS_KEY)
    if success is not None and any(e.order > lines[-1].order for e in success.events()):
        return []  # an error the run survived is no crash to explain
    query = "\n".join(e.text for e in lines)
    evidence = tuple(Evidence(e.source, e.line, e.text) for e in lines[-2:])
    leads = []
    for offset, match in enumerate(index_for(book).nearest(query)):
        rule = match.rule
        leads.append(
            Diagnosis(
                rank=first_rank + offset,
                rule=rule.id,
                cause=rule.cause,
                role=Role.FALLBACK.value,
                severity=rule.severity.value,
                confidence=round(min(MAX_CONFIDENCE, MAX_CONFIDENCE * match.score), 2),
                title=f"Resembles: {rule.title}",
                summary=(
                    "No rule matched this log; its last error lines are "
                    f"{match.score:.0%} similar to the known signature of {rule.id!r}. "
                    "A lead to check, not a diagnosis."
                ),
                explanation=(
                    "gpudoctor compared the words of the log's last error lines with the "
                    "example messages of every rule. A close match often means the same "
                    "failure reported in other words or by another program; read the "
                    "evidence and check the rule's explanation before acting on it."
                ),
                evidence=evidence,
                matches=len(lines),
                facts={"similarity": round(match.score, 2)},
                fix=(f"Read the rule's explanation and fixes: gpudoctor rules show {rule.id}",),
                references=rule.references,
            )
        )
    return leads
