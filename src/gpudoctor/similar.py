"""Closest known signatures: causes whose known messages use the words a log ended on.

Rules recognise a failure by its message. A message no rule enumerates — a paraphrase, a new
wrapper around a known error, another library's words for it — makes no rule fire, and the
report would only name the terminal error as an application error. When that happens and the
log ended in a failure, the log's terminal error
(:func:`gpudoctor.logs.structure.errors.terminal_error`) is compared with every rule's
``match`` examples, the error-code catalogues' included
(:class:`~gpudoctor.rulebook.signatures.SignatureIndex`), and the causes of the closest
examples become low-confidence fallbacks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from gpudoctor.engine import Finding, likely_cause_found
from gpudoctor.logs.prefixes import unprefixed
from gpudoctor.logs.scanner import Event, PatternHits
from gpudoctor.logs.structure.errors import crash_report, terminal_error
from gpudoctor.report import FactValue
from gpudoctor.rulebook.book import RuleBook
from gpudoctor.rulebook.model import Role, Rule
from gpudoctor.rulebook.signatures import (
    MAX_CANDIDATES,
    MIN_SHARED_WORDS,
    Resemblance,
    names_a_cause,
    words,
)
from gpudoctor.templates import template_names

RESEMBLANCE_CONFIDENCE = 0.3
"""A resemblance's confidence is its similarity times this: below the fallbacks that name
the terminal error, never near a likely cause."""


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
    book: RuleBook,
    hits: Mapping[str, PatternHits],
    facts: Mapping[str, object],
    findings: Sequence[Finding],
) -> list[Finding]:
    """Low-confidence findings for the causes whose known messages resemble what the log
    ended on, when no rule found a likely cause (none but fallbacks and advice reached
    :data:`~gpudoctor.engine.EXPLAINER_MIN_CONFIDENCE`) and the log ended in a failure
    (:func:`ended_in_failure`)."""
    if likely_cause_found(findings):
        return []
    events = terminal_error(hits)
    if not events or not ended_in_failure(events, hits, facts):
        return []
    # a tool's prefix (compose's service, syslog's host and program, Ray's worker) is not the
    # error's words
    query = query_of([unprefixed(event.text) for event in events], facts)
    if len(words(query)) < MIN_SHARED_WORDS:
        return []  # nothing could resemble it: the index is not needed
    # A cause a low-confidence lead already names gains nothing from resembling it too.
    named = {f.rule.cause for f in findings if f.rule.role not in (Role.FALLBACK, Role.ADVICE)}
    closest = book.signature_index().closest(query, limit=MAX_CANDIDATES + len(named))
    found = [(r, book.rule_at(r.rule)) for r in closest if r.cause not in named]
    # A signature names its rule by index: one that does not lead back to a rule of its cause
    # that may have signatures (a stale or forged cache) is not used. The rule's examples are
    # not needed for that: `explain` builds rules from the cache without them.
    return [
        _finding(resemblance, rule, events)
        for resemblance, rule in found[:MAX_CANDIDATES]
        if rule.cause == resemblance.cause and names_a_cause(rule)
    ]


def ended_in_failure(
    events: Sequence[Event],
    hits: Mapping[str, PatternHits],
    facts: Mapping[str, object],
) -> bool:
    """The log ended in a failure after ``events`` (its terminal error): a traceback nothing
    followed with success, a signal, a failing exit code, another runtime's crash report at
    or after them, or an error line the log ended on (``error_at_end``: an error line in the
    middle of a log that went on is something the job survived)."""
    if facts.get("exception_at_end") is True or facts.get("exit_signal") is not None:
        return True
    if facts.get("exit_code") not in (None, 0):
        return True
    crash = crash_report(hits)
    if crash is not None and crash[0].order >= events[0].order:
        return True
    return facts.get("error_at_end") is True


def _finding(found: Resemblance, known: Rule, events: list[Event]) -> Finding:
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
