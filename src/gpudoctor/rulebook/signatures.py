"""Known signatures: the words of every rule's example messages, to compare a text with.

Each ``match`` example of a rule that names a cause becomes a set of words (identifiers split
at ``_`` and camel case, lower-cased; paths, numbers, frame lines and common words dropped).
:class:`SignatureIndex` weights words by how rare they are among the examples (inverse
document frequency) and compares texts by the cosine of their weighted word sets; words of the
query that no example uses count in its length, so that an error about something else
(``KeyError: 'lr'``) resembles nothing much. The rule cache stores every rule's signatures, so
that a run that compares builds no rule to do it (:mod:`gpudoctor.rulebook.cache`).

:mod:`gpudoctor.similar` turns the closest ones into findings.
"""

from __future__ import annotations

import math
import re
import zlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from gpudoctor.rulebook.model import Role, Rule

MIN_SIMILARITY = 0.25
"""Below this, a resemblance is noise. Measured on 296 labelled logs of unseen-log rounds 9 and
10 with the code before them: 0.35 and two candidates gave top-3 85.1 %, 0.25 and three 86.8 %
(0.2: 87.8 %); on two later sets nobody had read, 86.7 → 90.0 %, with no false alarm (a
resemblance stays below 0.3). The price: 31 of 323 harmless or ordinary-bug logs get a
low-confidence resemblance instead of 16 (0.2: 42)."""
MIN_SHARED_WORDS = 3
"""A resemblance rests on at least this many shared words: two ("learning rate") say what a
message is about, not what went wrong."""
MAX_CANDIDATES = 3
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
    # launchers' and schedulers' words for how a process ended: said of every failure alike
    "exit", "exited", "code", "status", "returned", "command", "task", "node",
})  # fmt: skip

_READER = (
    *sorted(_STOP_WORDS),
    *(p.pattern for p in (_IDENTIFIER, _CAMEL_PART, _PLACE, _FRAME_LINE)),
)
WORDS_KEY = f"{zlib.crc32(chr(0).join(_READER).encode()):08x}"
"""Names how :func:`words` reads a text: signatures cached by another version of it are not
used (the rule cache's key covers the rules and gpudoctor's version, not this code)."""


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
    """One known message: the index of its rule in the pack, the rule's cause, its words."""

    rule: int
    cause: str
    words: frozenset[str]


@dataclass(frozen=True)
class Resemblance:
    """A cause whose known message resembles the query."""

    rule: int
    """The index in the pack of the rule whose example it is."""
    cause: str
    similarity: float
    shared: tuple[str, ...]
    """The words the query and the closest message share, rarest first."""


def names_a_cause(rule: Rule) -> bool:
    """Whether a rule's examples may stand for its cause: not a fallback, not advice, not a
    cause of :data:`SKIPPED_CAUSES`."""
    return rule.role not in (Role.FALLBACK, Role.ADVICE) and rule.cause not in SKIPPED_CAUSES


def rule_signatures(rule: Rule) -> tuple[frozenset[str], ...]:
    """The word sets of a rule's text examples; none for a rule that names no cause
    (:func:`names_a_cause`)."""
    if not names_a_cause(rule):
        return ()
    found = (words(example.text) for example in rule.examples_match if example.text)
    return tuple(each for each in found if each)


class SignatureIndex:
    """Every ``match`` example of some rules, ready to compare texts against."""

    def __init__(self, signatures: Sequence[Signature]) -> None:
        self.signatures = list(signatures)
        signatures = self.signatures
        counts = Counter(word for signature in signatures for word in signature.words)
        total = len(signatures)
        self._weights = {word: math.log((1 + total) / (1 + n)) + 1.0 for word, n in counts.items()}
        self._unknown_weight = math.log(1 + total) + 1.0
        self._norms = [self._norm(signature.words) for signature in signatures]

    @classmethod
    def from_rules(cls, rules: Iterable[Rule]) -> SignatureIndex:
        """The index of :func:`rule_signatures` of ``rules``, a pack in order."""
        return cls(
            [
                Signature(index, rule.cause, found)
                for index, rule in enumerate(rules)
                for found in rule_signatures(rule)
            ]
        )

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
        for signature, norm in zip(self.signatures, self._norms, strict=True):
            shared = query & signature.words
            if len(shared) < MIN_SHARED_WORDS:
                continue
            dot = sum(self._weights[word] ** 2 for word in shared)
            similarity = dot / (query_norm * norm)
            held = best.get(signature.cause)
            if similarity >= minimum and (held is None or similarity > held.similarity):
                rarest = tuple(sorted(shared, key=lambda w: (-self._weights[w], w)))
                best[signature.cause] = Resemblance(
                    signature.rule, signature.cause, similarity, rarest
                )
        ranked = sorted(best.values(), key=lambda r: (-r.similarity, r.rule))
        return ranked[:limit]
