"""Closest known signatures: causes whose known messages use the words a log ended on.

Rules recognise a failure by its message. A message no rule enumerates — a paraphrase, a new
wrapper around a known error, another library's words for it — makes no rule fire, and the
report would only name the terminal error as an application error. When that happens, the
log's terminal error (:func:`gpudoctor.logs.structure.errors.terminal_error`) is compared
with every rule's ``match`` examples (the error-code catalogues' included): each text becomes
a set of words (identifiers split at ``_`` and camel case, lower-cased, paths and numbers
dropped), words are weighted by how rare they are among the examples (inverse document
frequency), and two texts are as similar as the cosine of their weighted word sets. The
causes of the closest examples become low-confidence candidates.

Words of the query that no example uses count in its length, so that an error about
something else (``KeyError: 'lr'``) resembles nothing much.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from gpudoctor.engine import Finding, likely_cause_found
from gpudoctor.logs.scanner import Event, PatternHits
from gpudoctor.logs.structure.errors import terminal_error
from gpudoctor.report import FactValue
from gpudoctor.rulebook.model import Role, Rule
from gpudoctor.templates import template_names

MIN_SIMILARITY = 0.35
"""Below this, a resemblance is noise (measured on the shared corpus and fresh sets)."""
MIN_SHARED_WORDS = 3
"""A resemblance rests on at least this many shared words: two ("learning rate") say what a
message is about, not what went wrong."""
MAX_CANDIDATES = 2
END_LINES = 5
"""An error line this close to the end of its input is what the log ended on."""
RESEMBLANCE_CONFIDENCE = 0.3
"""A resemblance's confidence is its similarity times this: below the fallbacks that name
the terminal error, never near a likely cause."""
SKIPPED_CAUSES = frozenset({"app_exception", "none"})
"""Causes a resemblance never offers: the fallbacks name an application error already."""

_IDENTIFIER = re.compile(r"\b[A-Za-z][A-Za-z0-9_]*")
_CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+")
_PLACE = re.compile(r"\S*[/\\]\S*|\S+\.(?:py|cpp|cc|cu|h|hpp|so|dll)\b\S*")
_FRAME_LINE = re.compile(r"^\s*(?:File \"|Traceback \(most recent call last\)|at |#\d+ )")
_STOP_WORDS = frozenset({
    "the", "and", "for", "with", "was", "were", "this", "that", "not", "are", "you", "your",
    "from", "has", "have", "had", "been", "but", "can", "will", "may", "might", "all", "any",
    "its", "into", "than", "then", "there", "when", "which", "while", "who", "why", "how",
    "what", "please", "see", "use", "using", "line", "file", "call", "most", "recent", "last",
    "error", "errors", "exception", "runtime",
})  # fmt: skip


def words(text: str) -> frozenset[str]:
    """The words of ``text`` that can tell one failure from another."""
    found = set()
    for line in text.splitlines():
        if _FRAME_LINE.match(line):
            continue  # where the error was raised, not what it was
        for identifier in _IDENTIFIER.findall(_PLACE.sub(" ", line)):
            for part in identifier.split("_"):
                for piece in _CAMEL_PART.findall(part):
                    word = piece.lower()
                    if len(word) >= 3 and word not in _STOP_WORDS:
                        found.add(word)
    return frozenset(found)


@dataclass(frozen=True)
class Signature:
    """One known message: the rule it belongs to and its words."""

    rule: Rule
    words: frozenset[str]


@dataclass(frozen=True)
class Resemblance:
    """A cause whose known message resembles the query."""

    rule: Rule
    similarity: float
    shared: tuple[str, ...]
    """The words the query and the closest message share, rarest first."""


class SignatureIndex:
    """Every ``match`` example of some rules, ready to compare texts against."""

    def __init__(self, signatures: Sequence[Signature]) -> None:
        self._signatures = signatures
        counts = Counter(word for signature in signatures for word in signature.words)
        total = len(signatures)
        self._weights = {word: math.log((1 + total) / (1 + n)) + 1.0 for word, n in counts.items()}
        self._unknown_weight = math.log(1 + total) + 1.0
        self._norms = [self._norm(signature.words) for signature in signatures]

    @classmethod
    def from_rules(cls, rules: Iterable[Rule]) -> SignatureIndex:
        """The index of the text examples of every rule that names a cause (not fallbacks,
        advice or the causes in :data:`SKIPPED_CAUSES`)."""
        signatures = [
            Signature(rule, found)
            for rule in rules
            if rule.role not in (Role.FALLBACK, Role.ADVICE) and rule.cause not in SKIPPED_CAUSES
            for example in rule.examples_match
            if example.text and (found := words(example.text))
        ]
        return cls(signatures)

    def _weight(self, word: str) -> float:
        return self._weights.get(word, self._unknown_weight)

    def _norm(self, found: Iterable[str]) -> float:
        return math.sqrt(sum(self._weight(word) ** 2 for word in found))

    def closest(
        self,
        text: str,
        limit: int = MAX_CANDIDATES,
        minimum: float = MIN_SIMILARITY,
    ) -> list[Resemblance]:
        """The causes whose closest example is at least ``minimum`` similar to ``text``, one
        resemblance per cause, most similar first, at most ``limit``."""
        query = words(text)
        query_norm = self._norm(query)
        if not query_norm:
            return []
        best: dict[str, Resemblance] = {}
        for signature, norm in zip(self._signatures, self._norms, strict=True):
            shared = query & signature.words
            if len(shared) < MIN_SHARED_WORDS:
                continue
            dot = sum(self._weights[word] ** 2 for word in shared)
            similarity = dot / (query_norm * norm)
            held = best.get(signature.rule.cause)
            if similarity >= minimum and (held is None or similarity > held.similarity):
                rarest = sorted(shared, key=lambda w: (-self._weights[w], w))
                best[signature.rule.cause] = Resemblance(signature.rule, similarity, tuple(rarest))
        ranked = sorted(best.values(), key=lambda r: (-r.similarity, r.rule.id))
        return ranked[:limit]


def query_of(lines: Sequence[str], facts: Mapping[str, object]) -> str:
    """The text to compare: the terminal error's lines, and the chained and worker exception
    types the tracebacks reader found."""
    parts = list(lines)
    for name in ("exception_cause_type", "worker_exception_type"):
        value = facts.get(name)
        if isinstance(value, str) and value:
            parts.append(value)
    return "\n".join(parts)


def resemblance_findings(
    index: Callable[[], SignatureIndex],
    hits: Mapping[str, PatternHits],
    facts: Mapping[str, object],
    findings: Sequence[Finding],
    input_lines: Sequence[int | None] = (),
) -> list[Finding]:
    """Low-confidence findings for the causes whose known messages resemble what the log
    ended on, when no rule found a likely cause (none but fallbacks and advice reached
    :data:`~gpudoctor.engine.EXPLAINER_MIN_CONFIDENCE`) and the log ended in a failure
    (:func:`ended_in_failure`; ``input_lines`` gives each input's line count). ``index`` is
    only called then."""
    if likely_cause_found(findings):
        return []
    events = terminal_error(hits)
    if not events or not ended_in_failure(events[-1], facts, input_lines):
        return []
    query = query_of([event.text for event in events], facts)
    if len(words(query)) < MIN_SHARED_WORDS:
        return []  # nothing could resemble it: the index (about 80 ms to build) is not needed
    return [_finding(found, events) for found in index().closest(query)]


def ended_in_failure(
    last: Event, facts: Mapping[str, object], input_lines: Sequence[int | None]
) -> bool:
    """The log ended in a failure: a traceback nothing followed with success, a signal, a
    failing exit code, another runtime's crash report, or an error line among the last
    :data:`END_LINES` of its input (an error line in the middle of a log that went on is
    something the job survived)."""
    if facts.get("exception_at_end") is True or facts.get("exit_signal") is not None:
        return True
    if facts.get("runtime_crash") is not None:
        return True
    if facts.get("exit_code") not in (None, 0):
        return True
    index = last.order[0]
    total = input_lines[index] if 0 <= index < len(input_lines) else None
    return total is not None and total - last.line < END_LINES


def _finding(found: Resemblance, events: list[Event]) -> Finding:
    known = found.rule
    confidence = round(RESEMBLANCE_CONFIDENCE * found.similarity, 2)
    plain_fix = tuple(step for step in known.fix if not template_names(step)) or known.fix
    rule = replace(
        known,
        id=f"similar/{known.id}",
        role=Role.FALLBACK,
        confidence=confidence,
        title=f"Resembles: {known.title}",
        summary=(
            "No rule recognises the error the log ended on, but its words resemble a known "
            "message of rule {similar_rule} ({similar_words}): possibly {similar_cause}."
        ),
        explanation=(
            "A guess by resemblance, not a recognised signature: the error's words were "
            "compared with every rule's example messages, and these are the closest "
            "(similarity {similarity:.2f} out of 1). Check the rule's own explanation with "
            "`gpudoctor rules show {similar_rule}` before acting on its fix."
        ),
        fix=plain_fix,
        patterns=(),
        conditions=(),
        derived={},
        adjust=(),
        explains=(),
        examples_match=(),
        examples_no_match=(),
    )
    values: dict[str, FactValue] = {
        "similar_rule": known.id,
        "similar_cause": known.cause.replace("_", " "),
        "similar_words": ", ".join(found.shared[:5]),
        "similarity": round(found.similarity, 2),
    }
    return Finding(
        rule=rule, events=events, matches=len(events), values=values, confidence=confidence
    )
