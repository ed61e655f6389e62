"""The engine: decides which rules fire on the scanned events and facts, and ranks them.

(Filling a rule's summary, explanation and fix with the values found is
:mod:`gpudoctor.templates`.)

Firing. A rule with patterns fires when its patterns matched (``match: any`` — one of them;
``match: all`` — every one) and every condition holds for the matching line's captures plus the
facts. A rule without patterns fires when all its conditions hold on the facts alone.

Confidence. A number in [0, 1]: gpudoctor's estimate of the probability that this diagnosis
names what killed the job. It starts at the rule's prior ``confidence``, moves by each
``adjust`` entry whose condition holds, is raised when a ``confirmation`` rule of the same cause
also fired (halfway to 1) and halved when another firing rule with confidence ≥ 0.5
explains it (a weak lead demotes nothing). The rubric rule authors follow for the prior:

* 0.9 — the line names the failure itself, in the words of the program that detected it
  ("CUDA out of memory. Tried to allocate", Xid 79): wrong about one time in ten at most;
* 0.7 — a specific signature with a known other reading (a cuBLAS init failure that may be
  an OOM, a segfault inside a named library): right about seven times in ten;
* 0.5 — likely: the threshold from which a finding explains others, drops ``fallback`` rules
  and counts as an alarm; a guess that is as often right as not;
* 0.3 — a lead worth checking: a generic symptom that many causes produce (an NCCL timeout,
  a kernel death, an exit code) with nothing to say which.

``bench/accuracy.py`` prints how often the top diagnosis of each confidence band was right
(calibration), so the priors can be checked against labelled logs.

Severity says how bad the finding is for the job, not how sure gpudoctor is: ``critical`` —
the job cannot succeed as it is, whatever it retries (a hardware fault, a broken driver or
library install, a process killed by the system, training that diverged); ``error`` — this
run failed from it and a change to the job or its configuration fixes it (an OOM, an illegal
access, an NCCL error); ``warning`` — a condition that degrades or endangers the job but may
not have ended it (throttling, a small /dev/shm, memory held by another process); ``info`` —
context, never a failure on its own.

Consequences and cascades. The taxonomy marks the causes that are usually the consequence of
another failure (:func:`gpudoctor.rulebook.taxonomy.consequence_causes`: NCCL failures,
native aborts, notebook kernel deaths, DataLoader worker deaths, cuDNN/cuBLAS failures,
generic application errors). Any firing rule with confidence ≥ 0.5 whose cause is not a
consequence and whose role is not ``cascade`` or ``fallback`` explains every finding of
another cause that is a consequence cause or has the ``cascade`` role, without listing it in
``explains``: a cascade is ranked below every likely non-cascade cause. ``explains`` lists
only what this implicit rule does not cover (specific rule ids, causes that are not
consequences). A native crash (the ending causes of the taxonomy) is explained, besides, by a
likely failure of any other cause reported before it, a consequence cause too: "invalid device
ordinal" printed before "Segmentation fault" is the story, the segfault its end. When two
findings explain each other, the earlier one stays the root.

Merging. Confirmations of one cause count once: they are gathered into the strongest of them,
which then confirms the strongest root of that cause (or stands alone). A finding explained by
a rule of its own cause (PyTorch's "device-side assert triggered" after the kernel's assertion
line) is folded into that rule's diagnosis: one cause, one diagnosis, all its evidence. A
``generic`` finding (an error code or Xid recognised from a catalogue) is folded into a
``root`` or ``cascade`` of its cause when one fired; a ``fallback`` (the terminal exception,
signal or exit code named for what it is) likewise, or into the strongest fallback of its
cause (the exception, the exit code and the error line that ended the job are one diagnosis),
and it is dropped altogether once any other rule finds a cause with confidence >= 0.5.

Survived failures. A finding whose every line the log follows with a success line in the same
input ("Training complete", "Done", "exit code 0") is something the job went on from: its
confidence is halved (an out-of-memory the job retried after, a warning it ran on from).

Ranking, in this order of keys:

1. tier — causes that nothing else explains; then diagnoses explained by another firing rule
   (a consequence or a cascade never outranks a likely cause); then ``advice`` (never a
   cause);
2. confidence, higher first;
3. time — the earlier first matching line (inputs in the order given, then line number);
4. specificity — a rule whose conditions held and that matched more patterns first;
5. rule id, so that the order is stable.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpudoctor.facts.assemble import plain_value as _plain
from gpudoctor.logs.scanner import Event, PatternHits
from gpudoctor.logs.structure.errors import near_end
from gpudoctor.report import Diagnosis, Evidence, FactValue
from gpudoctor.rulebook.conditions import Evaluator, names_in
from gpudoctor.rulebook.model import MatchMode, Role, Rule
from gpudoctor.rulebook.taxonomy import ENDING_CAUSES, consequence_causes
from gpudoctor.templates import render_template, template_names

MAX_EVIDENCE = 4
EXPLAINED_FACTOR = 0.5
SURVIVED_FACTOR = 0.5
EXPLAINER_MIN_CONFIDENCE = 0.5


@dataclass
class Finding:
    """A rule that fired, before ranking."""

    rule: Rule
    events: list[Event]
    matches: int
    values: dict[str, FactValue]
    confidence: float
    notes: list[str] = field(default_factory=list)
    matches_at_least: bool = False
    """``matches`` is a lower bound: a pattern matched too many lines to count them all."""
    fact_evidence: list[Evidence] = field(default_factory=list)
    explained_by: list[str] = field(default_factory=list)

    @property
    def first_order(self) -> tuple[int, int]:
        return min((e.order for e in self.events), default=(1 << 30, 1 << 30))

    @property
    def specificity(self) -> int:
        return len(self.rule.conditions) + len({e.key for e in self.events})


def evaluate(
    rules: Sequence[Rule],
    hits: Mapping[str, PatternHits],
    facts: Mapping[str, object],
    input_lines: Sequence[int | None] = (),
) -> list[Finding]:
    """Every rule that fires, with its evidence and confidence (not yet ranked).
    ``input_lines`` gives each input's line count where it is known (for ``at_end``)."""
    findings = []
    for rule in rules:
        finding = evaluate_rule(rule, hits, facts, input_lines)
        if finding is not None:
            findings.append(finding)
    return findings


def likely_cause_found(findings: Iterable[Finding]) -> bool:
    """Some finding names a likely cause: one that is neither a fallback nor advice reached
    :data:`EXPLAINER_MIN_CONFIDENCE`."""
    return any(
        f.confidence >= EXPLAINER_MIN_CONFIDENCE and f.rule.role not in (Role.FALLBACK, Role.ADVICE)
        for f in findings
    )


def evaluate_rule(
    rule: Rule,
    hits: Mapping[str, PatternHits],
    facts: Mapping[str, object],
    input_lines: Sequence[int | None] = (),
) -> Finding | None:
    """The finding for one rule, or ``None`` when it does not fire."""
    by_pattern = {p.id: hits.get(rule.pattern_key(p)) for p in rule.patterns}
    found = [h is not None and h.count > 0 for h in by_pattern.values()]
    if found and not (all(found) if rule.match is MatchMode.ALL else any(found)):
        return None  # most rules: their lines are not in this log; no expression is parsed
    counts = {pid: (h.count if h else 0) for pid, h in by_pattern.items()}
    events_by_pattern = {pid: (h.events() if h else []) for pid, h in by_pattern.items()}
    functions = _pattern_functions(counts, events_by_pattern, input_lines)
    saturated = any(h is not None and h.saturated for h in by_pattern.values())
    if not rule.patterns:
        evaluator = _evaluator(rule, facts, {}, functions)
        if not rule.conditions or not all(evaluator.holds(c) for c in rule.conditions):
            return None
        return _finding(rule, [], 0, evaluator, {}, facts)

    if rule.match is MatchMode.ALL:
        if not all(events_by_pattern.values()):
            return None
        firsts = sorted((evs[0] for evs in events_by_pattern.values()), key=lambda e: e.order)
        captures: dict[str, Any] = {}
        for event in firsts:
            for name, value in event.captures.items():
                captures.setdefault(name, value)
        evaluator = _evaluator(rule, facts, captures, functions)
        if not all(evaluator.holds(c) for c in rule.conditions):
            return None
        finding = _finding(rule, firsts, max(counts.values()), evaluator, captures, facts)
        finding.matches_at_least = saturated
        return finding

    events = _one_per_line(e for evs in events_by_pattern.values() for e in evs)
    satisfied: list[tuple[Event, Evaluator]] = []
    for event in events:
        evaluator = _evaluator(rule, facts, dict(event.captures), functions)
        if all(evaluator.holds(c) for c in rule.conditions):
            satisfied.append((event, evaluator))
    if not satisfied:
        return None
    first_event, first_evaluator = satisfied[0]
    matches = len(satisfied)
    if len(satisfied) == len(events):  # every kept event held: count the ones not kept too
        matches = max(matches, max(counts.values()))
    finding = _finding(
        rule, [e for e, _ in satisfied], matches, first_evaluator, dict(first_event.captures), facts
    )
    finding.matches_at_least = saturated
    return finding


def _pattern_functions(
    counts: Mapping[str, int],
    events: Mapping[str, list[Event]],
    input_lines: Sequence[int | None] = (),
) -> dict[str, Any]:
    """The functions conditions use to look across a rule's patterns and lines:
    ``matched(p)``, ``count(p)``, ``only(p, ...)`` (some of these patterns matched and no other
    pattern of the rule did), ``first(p, name)`` / ``last(p, name)``, a capture of the
    first or last line pattern ``p`` matched (``None`` when there is none), and
    ``followed_by(p, q)``, a line of ``q`` on the line right after one of ``p``, and
    ``at_end(p)``, a line of ``p`` among the last lines of its input (false where the input's
    length is not known)."""

    def capture(pattern_id: str, name: str, index: int) -> object | None:
        found = events.get(pattern_id) or []
        return found[index].captures.get(name) if found else None

    def followed_by(before: str, after: str) -> bool:
        starts = {event.order for event in events.get(before) or []}
        return any(
            (source, line - 1) in starts
            for source, line in (event.order for event in events.get(after) or [])
        )

    return {
        "matched": lambda pid: counts.get(pid, 0) > 0,
        "count": lambda pid: counts.get(pid, 0),
        "only": lambda *pids: (
            any(counts.get(p, 0) > 0 for p in pids)
            and all(p in pids for p, n in counts.items() if n > 0)
        ),
        "first": lambda pid, name: capture(pid, name, 0),
        "last": lambda pid, name: capture(pid, name, -1),
        "followed_by": followed_by,
        "at_end": lambda pid: any(near_end(e, input_lines) for e in events.get(pid) or []),
    }


def _one_per_line(events: Iterable[Event]) -> list[Event]:
    """Events in reading order, keeping for each line the one with the most captures."""
    best: dict[tuple[int, int], Event] = {}
    for event in events:
        kept = best.get(event.order)
        if kept is None or len(event.captures) > len(kept.captures):
            best[event.order] = event
    return [best[order] for order in sorted(best)]


def _evaluator(
    rule: Rule,
    facts: Mapping[str, object],
    captures: Mapping[str, object],
    functions: Mapping[str, Any],
) -> Evaluator:
    evaluator = Evaluator({**facts, **captures}, functions)
    for name, expression in rule.derived.items():
        evaluator.set(name, evaluator.value(expression))
    return evaluator


def _finding(
    rule: Rule,
    events: list[Event],
    matches: int,
    evaluator: Evaluator,
    captures: Mapping[str, object],
    facts: Mapping[str, object],
) -> Finding:
    confidence = rule.confidence
    notes = []
    for adjustment in rule.adjust:
        if evaluator.holds(adjustment.when):
            confidence += adjustment.by
            notes.append(adjustment.reason)
    values: dict[str, FactValue] = {k: _plain(v) for k, v in captures.items()}
    for name in rule.derived:
        values[name] = _plain(evaluator.value(name))
    tested = sorted(
        {n for c in (*rule.conditions, *(a.when for a in rule.adjust)) for n in names_in(c)}
    )
    fact_evidence = [
        Evidence(source="facts", fact=name, value=_plain(facts[name]))
        for name in tested
        if _is_evidence(facts.get(name)) and name not in values
    ]
    for evidence in fact_evidence:
        assert evidence.fact is not None
        values[evidence.fact] = evidence.value
    for name in _template_names(rule):
        if name not in values and facts.get(name) is not None:
            values[name] = _plain(facts[name])
    return Finding(
        rule=rule,
        events=events,
        matches=matches,
        values=values,
        confidence=min(1.0, max(0.0, confidence)),
        notes=notes,
        fact_evidence=fact_evidence,
    )


def _is_evidence(value: object) -> bool:
    """A tested fact worth showing: known, and not a plain "no" (False, an empty list)."""
    if value is None or value is False:
        return False
    return not (isinstance(value, (list, tuple, dict, str)) and not value)


def _template_names(rule: Rule) -> set[str]:
    names: set[str] = set()
    for template in (rule.summary, rule.explanation, *rule.fix):
        names |= template_names(template)
    return names


def rank(
    findings: Sequence[Finding],
    went_on: Mapping[int, tuple[int, int]] | None = None,
    progressed: Mapping[int, tuple[int, int]] | None = None,
) -> list[Diagnosis]:
    """Merge confirmations, mark explained findings and order them (see module doc).

    ``went_on`` gives, per input, where the job said it went on to succeed (its last success
    line): a finding whose every line comes before it is something the job survived.
    ``progressed`` gives, per input, its last progress line (a loss logged): a finding whose
    every line comes before it is survived too when no other finding has a line after it.
    """
    fired = list(findings)
    findings = _merge_confirmations(fired)
    findings = _fold_general(findings)
    _mark_survived(findings, went_on or {}, progressed or {}, fired)
    _mark_explained(findings)
    findings = _merge_same_cause(findings)

    def key(f: Finding) -> tuple[int, float, tuple[int, int], int, str]:
        tier = 2 if f.rule.role is Role.ADVICE else (1 if f.explained_by else 0)
        return (tier, -round(f.confidence, 2), f.first_order, -f.specificity, f.rule.id)

    ordered = sorted(findings, key=key)
    return [_diagnosis(i, f) for i, f in enumerate(ordered, start=1)]


def _merge_confirmations(findings: list[Finding]) -> list[Finding]:
    """Fold confirmations into a root (or cascade) of their cause, one boost per cause.

    Confirmations of one cause are first gathered into the strongest of them (the kernel's
    oom-kill line and the cgroup's oom_kill counter are one piece of evidence, not two); that
    group then raises the strongest root of the same cause halfway to 1, or stands alone.
    """
    others = [f for f in findings if f.rule.role is not Role.CONFIRMATION]
    groups: dict[str, list[Finding]] = {}
    for finding in findings:
        if finding.rule.role is Role.CONFIRMATION:
            groups.setdefault(finding.rule.cause, []).append(finding)
    kept: list[Finding] = []
    for cause, group in groups.items():
        lead = max(group, key=lambda f: f.confidence)
        for extra in group:
            if extra is not lead:
                _absorb(lead, extra)
        targets = [
            f
            for f in others
            if f.rule.cause == cause and f.rule.role in (Role.ROOT, Role.CASCADE, Role.GENERIC)
        ]
        if not targets:
            kept.append(lead)
            continue
        target = max(targets, key=lambda f: f.confidence)
        target.confidence += (1.0 - target.confidence) * 0.5
        _absorb(target, lead)
        target.notes.append(f"confirmed by {lead.rule.id}: {lead.rule.title}")
    return others + kept


_SPECIFIC = (Role.ROOT, Role.CASCADE)
_GENERAL = (Role.GENERIC, Role.FALLBACK)


def _fold_general(findings: list[Finding]) -> list[Finding]:
    """Fold ``generic`` and ``fallback`` findings into a specific finding of their cause, and
    drop fallbacks once something else names a likely cause.

    A catalogue's "cudaErrorIllegalAddress" beside the rule that knows PyTorch's wording of the
    same error is one diagnosis with both lines as evidence; a traceback's terminal exception
    named by the fallback is only news when no rule found what raised it.
    """
    kept: list[Finding] = []
    for finding in findings:
        if finding.rule.role not in _GENERAL:
            kept.append(finding)
            continue
        peers = [f for f in findings if f.rule.cause == finding.rule.cause and f is not finding]
        specific = [f for f in peers if f.rule.role in _SPECIFIC]
        if finding.rule.role is Role.FALLBACK:
            specific = specific or [f for f in peers if f.rule.role is Role.GENERIC]
        if specific:
            _absorb(max(specific, key=lambda f: f.confidence), finding)
            continue
        if finding.rule.role is Role.FALLBACK:
            # Fallbacks of one cause name one terminal error (the exception, the exit code
            # and the error line that ended the job): one diagnosis, led by the strongest.
            lead = _strongest(f for f in findings if _same_fallback(f, finding))
            if lead is not finding:
                _absorb(lead, finding)
                continue
        # Two catalogues that both know one line (DCGM's and the driver's "fallen off the
        # bus") make one diagnosis: the first of the most confident takes the other.
        same_line = [
            (f.confidence, -i, f)
            for i, f in enumerate(findings)
            if f.rule.cause == finding.rule.cause
            and f.rule.role is Role.GENERIC
            and _shares_a_line(f, finding)
        ]
        best = max(same_line, key=lambda item: item[:2])[2] if same_line else finding
        if best is not finding:
            _absorb(best, finding)
        else:
            kept.append(finding)
    likely = any(
        f.rule.role not in (Role.ADVICE, Role.FALLBACK) and f.confidence >= EXPLAINER_MIN_CONFIDENCE
        for f in kept
    )
    return [f for f in kept if not (likely and f.rule.role is Role.FALLBACK)]


def _same_fallback(one: Finding, other: Finding) -> bool:
    return one.rule.role is Role.FALLBACK and one.rule.cause == other.rule.cause


def _strongest(findings: Iterable[Finding]) -> Finding:
    """The most confident finding; of equals, the one whose first line comes first."""
    return min(findings, key=lambda f: (-f.confidence, f.first_order, f.rule.id))


def _shares_a_line(one: Finding, other: Finding) -> bool:
    lines = {(e.source, e.line) for e in one.events}
    return any((e.source, e.line) in lines for e in other.events)


def _mark_survived(
    findings: list[Finding],
    went_on: Mapping[int, tuple[int, int]],
    progressed: Mapping[int, tuple[int, int]],
    fired: Sequence[Finding],
) -> None:
    """Halve the confidence of a finding whose every line the log follows with a success line
    in the same input (an out-of-memory the job retried after, a warning it ran on from), or
    with progress lines after which nothing failed: the input logs training going on after
    the finding's lines, and no rule that ``fired`` (fallbacks included) read a line after
    that progress."""
    for finding in findings:
        if finding.rule.role is Role.ADVICE or not finding.events:
            continue
        if all(e.order < went_on.get(e.order[0], e.order) for e in finding.events):
            finding.confidence *= SURVIVED_FACTOR
            finding.notes.append("the log goes on to a success line after this: the job went on")
        elif _ran_on(finding, fired, progressed):
            finding.confidence *= SURVIVED_FACTOR
            finding.notes.append("training went on after this and nothing failed after it")


def _ran_on(
    finding: Finding, fired: Sequence[Finding], progressed: Mapping[int, tuple[int, int]]
) -> bool:
    """Whether each input of ``finding``'s lines logs progress after them, with no line of a
    finding (other than advice) after that progress."""
    if not all(e.order < progressed.get(e.order[0], e.order) for e in finding.events):
        return False
    sources = {e.order[0] for e in finding.events}
    return not any(
        e.order[0] in sources and e.order > progressed[e.order[0]]
        for other in fired
        if other.rule.role is not Role.ADVICE
        for e in other.events
    )


def _absorb(target: Finding, other: Finding) -> None:
    """Add another finding's evidence and values to ``target``."""
    # Two patterns on one line (a catalogue name inside a rule's message) are one piece of
    # evidence: lines already shown are not shown or counted twice.
    seen = {e.order for e in target.events}
    fresh = [e for e in other.events if e.order not in seen]
    target.events = sorted([*target.events, *fresh], key=lambda e: e.order)
    if fresh or not other.events:
        target.matches += other.matches
    target.matches_at_least = target.matches_at_least or other.matches_at_least
    known = {(e.fact, repr(e.value)) for e in target.fact_evidence}
    target.fact_evidence.extend(
        e for e in other.fact_evidence if (e.fact, repr(e.value)) not in known
    )
    target.notes.extend(n for n in other.notes if n not in target.notes)
    for name, value in other.values.items():
        target.values.setdefault(name, value)


def _mark_explained(findings: list[Finding]) -> None:
    """Mark each finding with the likely causes that explain it, and halve its confidence.

    ``other`` explains ``finding`` when it lists its rule id or cause in ``explains``, or
    implicitly (:func:`_explains_implicitly`) when ``finding`` is a consequence cause or a
    cascade. When two findings explain each other the one that names the other in ``explains``
    (while the other explains it only implicitly) is the root; otherwise the earlier one.
    """
    # A weak lead does not get to demote other findings: only a likely cause explains.
    explainers = [
        f
        for f in findings
        if f.rule.role is not Role.ADVICE and f.confidence >= EXPLAINER_MIN_CONFIDENCE
    ]
    consequences = consequence_causes()
    for finding in findings:
        if finding.rule.role is Role.ADVICE:
            continue
        for other in explainers:
            if other is finding or not _explains(other, finding, consequences):
                continue
            if _explains(finding, other, consequences) and _root_of_mutual(finding, other):
                continue
            finding.explained_by.append(other.rule.id)
        if finding.explained_by:
            finding.confidence *= EXPLAINED_FACTOR


def _explains(other: Finding, finding: Finding, consequences: frozenset[str]) -> bool:
    """Whether ``other`` (a likely cause) explains ``finding``: listed, or implicitly."""
    return _lists(other, finding) or _explains_implicitly(other, finding, consequences)


def _lists(other: Finding, finding: Finding) -> bool:
    """Whether ``other``'s rule names ``finding``'s rule or cause in its ``explains``."""
    return finding.rule.id in other.rule.explains or finding.rule.cause in other.rule.explains


def _root_of_mutual(finding: Finding, other: Finding) -> bool:
    """Of two findings that explain each other, whether ``finding`` is the root: a rule that
    names the other outright knows better than an implicit reading (an impossible allocation
    size explains the out-of-memory on its own line); otherwise the earlier failure."""
    names_other, named_by_other = _lists(finding, other), _lists(other, finding)
    if names_other != named_by_other:
        return names_other
    return finding.first_order <= other.first_order


def _explains_implicitly(other: Finding, finding: Finding, consequences: frozenset[str]) -> bool:
    """A cause that is not itself a consequence nor a cascade explains every finding of a
    consequence cause (taxonomy ``consequences``) and every cascade, of another cause; a
    failure of any other cause reported before it explains how the process ended
    (:data:`~gpudoctor.rulebook.taxonomy.ENDING_CAUSES`)."""
    if other.rule.role in (Role.CASCADE, Role.FALLBACK) or other.rule.cause == finding.rule.cause:
        return False
    if other.rule.cause in consequences:
        return (
            finding.rule.cause in ENDING_CAUSES
            and other.rule.cause not in ENDING_CAUSES
            and other.first_order < finding.first_order
        )
    return finding.rule.cause in consequences or finding.rule.role is Role.CASCADE


def _merge_same_cause(findings: list[Finding]) -> list[Finding]:
    """Fold a finding explained by a rule of its own cause into that rule's diagnosis: one
    cause, one diagnosis, with all its evidence (the kernel's assertion line and PyTorch's
    "device-side assert triggered" are the same failure)."""
    by_id = {f.rule.id: f for f in findings}
    kept = []
    merged_into: dict[str, str] = {}
    for finding in findings:
        parents = [
            by_id[rule_id]
            for rule_id in finding.explained_by
            if rule_id in by_id and by_id[rule_id].rule.cause == finding.rule.cause
        ]
        if not parents or finding.rule.role is Role.ADVICE:
            kept.append(finding)
            continue
        parent = max(parents, key=lambda f: f.confidence)
        _absorb(parent, finding)
        merged_into[finding.rule.id] = parent.rule.id
    for finding in kept:  # "explained by" names the diagnoses that remain
        finding.explained_by = list(
            dict.fromkeys(merged_into.get(rule_id, rule_id) for rule_id in finding.explained_by)
        )
    return kept


def _diagnosis(rank_no: int, finding: Finding) -> Diagnosis:
    rule = finding.rule
    evidence = [Evidence(e.source, e.line, e.text) for e in _pick_evidence(finding.events)]
    evidence.extend(finding.fact_evidence)
    return Diagnosis(
        rank=rank_no,
        rule=rule.id,
        cause=rule.cause,
        role=rule.role.value,
        severity=rule.severity.value,
        confidence=round(finding.confidence, 2),
        title=rule.title,
        summary=render_template(rule.summary, finding.values),
        explanation=render_template(rule.explanation, finding.values).strip(),
        evidence=tuple(evidence),
        matches=finding.matches,
        matches_at_least=finding.matches_at_least,
        facts=dict(finding.values),
        fix=tuple(render_template(step, finding.values) for step in rule.fix),
        references=rule.references,
        explained_by=tuple(finding.explained_by),
        notes=tuple(finding.notes),
    )


def _pick_evidence(events: list[Event]) -> list[Event]:
    """At most :data:`MAX_EVIDENCE` lines, in reading order: the first line of each pattern
    that matched (so merged and confirming rules show), then the earliest others."""
    if len(events) <= MAX_EVIDENCE:
        return events
    chosen: list[Event] = []
    seen: set[str] = set()
    for event in events:
        if event.key not in seen and len(chosen) < MAX_EVIDENCE:
            seen.add(event.key)
            chosen.append(event)
    for event in events:
        if len(chosen) >= MAX_EVIDENCE:
            break
        if event not in chosen:
            chosen.append(event)
    return sorted(chosen, key=lambda e: e.order)
