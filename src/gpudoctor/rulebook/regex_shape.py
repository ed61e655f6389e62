"""The shape of a regular expression, read without running it: its literal text, the literal
text every match must contain (:func:`required_literals`, the scanner's prefilter), whether it
is anchored, and constructs that would backtrack catastrophically in a backtracking engine
(Python ``re``, PCRE, Java) — a quantified group whose body is itself unbounded (``(a+)+``,
``(\\w+\\s?)*``), or a quantified alternation whose branches can start with the same
character (``(\\w|\\d)+``, ``(a|ab)*``). RE2, which gpudoctor runs, is linear in any case;
``rules lint`` uses this to flag patterns people would copy into other tools. It also finds
what is costly for RE2 itself in the one set every log is scanned with: a long counted
repetition of a broad class before any literal text (:func:`costly_leading_repeat`).

The structure is read with CPython's own regex parser (``re._parser``, a private module: the
only one here that touches it). RE2 syntax used by rules is a subset of Python's for what
matters here; a pattern it cannot parse is simply not analysed.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

try:  # Python 3.11+: the parser lives in re._parser (sre_parse is a deprecated alias).
    from re import _constants as _sre_constants  # type: ignore[attr-defined]
    from re import _parser as _sre_parser  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python < 3.11
    import sre_constants as _sre_constants
    import sre_parse as _sre_parser

_NESTED_QUANTIFIER = re.compile(r"\((?:[^()\\]|\\.)*[+*](?:[^()\\]|\\.)*\)[+*{]")
_META = re.compile(r"\\[dDwWsSbB]|\\.|\[[^\]]*\]|[.^$|?*+(){}]")
_GROUP_OPENER = re.compile(r"\(\?(?:P<\w+>|<\w+>|:|[imsxU-]+:?|[=!]|<[=!])")
_NAMED_GROUP = re.compile(r"\(\?P?<(\w+)>")

_OP = _sre_constants
_REPEATS = {_OP.MAX_REPEAT, _OP.MIN_REPEAT} | (
    {_OP.POSSESSIVE_REPEAT} if hasattr(_OP, "POSSESSIVE_REPEAT") else set()
)
_UNBOUNDED = _OP.MAXREPEAT


def longest_literal(regex: str) -> str:
    """The longest run of plain characters in a regex (escapes and classes break runs).

    Group openers such as ``(?:``, ``(?P<name>`` and inline flags are not literal text.
    """
    return max(literal_runs(regex), key=len, default="")


def is_anchored(regex: str) -> bool:
    """Whether the pattern is tied to the start or the end of the line."""
    body = re.sub(r"^\(\?[imsU]+\)", "", regex)
    return body.startswith("^") or body.startswith("(?:^|") or _ends_with_anchor(body)


def _ends_with_anchor(regex: str) -> bool:
    return regex.endswith("$") and not regex.endswith("\\$")


def backtracking_problems(regex: str) -> list[str]:
    """Constructs that would backtrack catastrophically in a backtracking engine.

    Returns a short description of each one found (empty when the pattern is safe or cannot be
    parsed by Python's regex parser).
    """
    problems: list[str] = []
    try:
        tree = _parse(regex)
    except (re.error, OverflowError, RecursionError, ValueError):
        return ["nested quantifiers ((a+)+)"] if _NESTED_QUANTIFIER.search(regex) else []
    _walk(list(tree), problems)
    for body in _quantified_group_bodies(regex):
        overlap = _overlapping_alternatives(body)
        if overlap:
            problems.append(f"a repeated alternation whose branches can match alike ({overlap})")
    return problems


LEADING_REPEAT_LIMIT = 8
"""A counted repetition of a broad class longer than this, before any literal text, is costly
in the one-pass set (:func:`costly_leading_repeat`)."""
_BROAD_CLASS = 10
"""A class of at least this many characters (or a negated one) is broad."""


def costly_leading_repeat(regex: str) -> str:
    """The first counted repetition of a broad class with an upper bound above
    :data:`LEADING_REPEAT_LIMIT` that comes before any literal text (``\\w[\\w ]{0,40}?is
    only``), as text to show; ``""`` when there is none or the pattern is anchored to the
    line start.

    The scanner matches every pattern at once with one RE2 set, whose DFA follows every
    pattern that may begin at the current byte. A pattern that may begin at any word
    character and then counts up to N of them keeps N states alive at every position of
    every log: one such pattern slowed the one-pass scan of the whole pack by about a tenth.
    Text after a literal is cheap: the DFA only enters it once the literal matched.
    """
    try:
        tree = _parse(regex)
    except (re.error, OverflowError, RecursionError, ValueError):
        return ""
    return _leading_repeat(list(tree))


def _leading_repeat(items: list[Any]) -> str:
    for op, value in items:
        if op == _OP.LITERAL:
            return ""
        if op == _OP.AT:
            if str(value) in ("AT_BEGINNING", "AT_BEGINNING_LINE", "AT_BEGINNING_STRING"):
                return ""
            continue
        if op in _REPEATS:
            _low, high, body = value
            broad = _first_chars(list(body))
            if (
                high != _UNBOUNDED
                and high > LEADING_REPEAT_LIMIT
                and (broad.negated or len(broad.chars) >= _BROAD_CLASS)
            ):
                return f"{{{_low},{high}}}"
            continue
        if op == _OP.SUBPATTERN:
            found = _leading_repeat(list(value[-1]))
            if found or not _nullable([(op, value)]):
                return found
            continue
        if op == _OP.BRANCH:
            return next((f for b in value[1] if (f := _leading_repeat(list(b)))), "")
    return ""


def _parse(regex: str) -> Any:
    return _sre_parser.parse(_GROUP_OPENER.sub(_keep_named, regex))


def _keep_named(match: re.Match[str]) -> str:
    # Python's parser understands every opener except RE2's "(?<name>"; normalise that one.
    text = match.group(0)
    if text.startswith("(?<") and text[3:4] not in ("=", "!"):
        return "(?P<" + text[3:]
    return text


@dataclass(frozen=True)
class _CharSet:
    """A set of characters, possibly negated (``[^,]``); ``_CharSet(True)`` is any character."""

    negated: bool = False
    chars: frozenset[str] = frozenset()

    def __or__(self, other: _CharSet) -> _CharSet:
        if not self.negated and not other.negated:
            return _CharSet(False, self.chars | other.chars)
        if self.negated and other.negated:
            return _CharSet(True, self.chars & other.chars)
        pos, neg = (other, self) if self.negated else (self, other)
        return _CharSet(True, neg.chars - pos.chars)

    def meets(self, other: _CharSet) -> bool:
        if self.negated and other.negated:
            return True
        if self.negated or other.negated:
            pos, neg = (other, self) if self.negated else (self, other)
            return bool(pos.chars - neg.chars)
        return bool(self.chars & other.chars)

    @property
    def empty(self) -> bool:
        return not self.negated and not self.chars


_NOTHING = _CharSet()
_ANY = _CharSet(True)


def _walk(items: list[Any], problems: list[str]) -> None:
    for op, value in items:
        if op in _REPEATS:
            _low, high, body = value
            if (high == _UNBOUNDED or high > 1) and _ambiguous_iterations(list(body)):
                problems.append("nested quantifiers ((a+)+): the group repeats a repetition")
        for child in _children(op, value):
            _walk(child, problems)


def _ambiguous_iterations(body: list[Any]) -> bool:
    """Whether a repeated ``body`` can split the same text between its parts in many ways.

    True when an unbounded repeat inside the body can also match what comes right after it —
    later in the body, or the start of the next iteration: ``(a+)+``, ``(\\w+\\s?)*``,
    ``(.*a){3,}``. ``(?:\\s+sm_\\d+)*`` is safe: what follows each repeat differs from it.
    """
    return _repeat_meets_follower(body, _first_chars(body))


def _repeat_meets_follower(items: list[Any], after: _CharSet) -> bool:
    """Whether an unbounded repeat in ``items`` overlaps what can follow it (``after`` ends)."""
    for index, (op, value) in enumerate(items):
        follow = _first_chars(items[index + 1 :])
        if _nullable(items[index + 1 :]):
            follow = follow | after
        if op in _REPEATS and value[1] == _UNBOUNDED:
            inner = _first_chars(list(value[2]))
            if not inner.empty and inner.meets(follow):
                return True
        if any(_repeat_meets_follower(child, follow) for child in _children(op, value)):
            return True
    return False


def _children(op: Any, value: Any) -> list[list[Any]]:
    """The nested sequences of one parsed node (repeat body, group content, branches)."""
    if op in _REPEATS:
        return [list(value[2])]
    if op == _OP.SUBPATTERN:
        return [list(value[-1])]
    if op == _OP.BRANCH:
        return [list(b) for b in value[1]]
    return []


def _quantified_group_bodies(regex: str) -> list[str]:
    """The text of every group followed by ``*``, ``+`` or ``{n,}`` / ``{n,m}`` with m > 1."""
    bodies: list[str] = []
    stack: list[int] = []
    i, n = 0, len(regex)
    while i < n:
        c = regex[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            i = _class_end(regex, i)
            continue
        if c == "(":
            stack.append(i)
        elif c == ")" and stack:
            start = stack.pop()
            if _repeats_many(regex[i + 1 :]):
                group = regex[start : i + 1]
                opener = _GROUP_OPENER.match(group)
                bodies.append(group[len(opener.group(0)) if opener else 1 : -1])
        i += 1
    return bodies


def _repeats_many(rest: str) -> bool:
    """Whether the text right after a group is a quantifier allowing more than one repeat."""
    return rest[:1] in ("*", "+") or bool(re.match(r"\{(?:\d*,\d*|[2-9]\d*|1\d+)\}", rest))


def _class_end(regex: str, start: int) -> int:
    i = start + 1
    if regex[i : i + 1] == "^":
        i += 1
    if regex[i : i + 1] == "]":
        i += 1
    while i < len(regex) and regex[i] != "]":
        i += 2 if regex[i] == "\\" else 1
    return i + 1


def _top_level_alternatives(body: str) -> list[str]:
    parts, depth, current, i = [], 0, "", 0
    while i < len(body):
        c = body[i]
        if c == "\\":
            current += body[i : i + 2]
            i += 2
            continue
        if c == "[":
            end = _class_end(body, i)
            current += body[i:end]
            i = end
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        if c == "|" and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += c
        i += 1
    parts.append(current)
    return parts


def _overlapping_alternatives(body: str) -> str:
    """Two alternatives of a repeated group that can start with the same character."""
    alternatives = _top_level_alternatives(body)
    if len(alternatives) < 2:
        return ""
    firsts = []
    for alternative in alternatives:
        try:
            firsts.append(_first_chars(list(_parse(alternative))))
        except (re.error, OverflowError, RecursionError, ValueError):
            return ""
    for i, first in enumerate(firsts):
        for j in range(i + 1, len(firsts)):
            if not first.empty and first.meets(firsts[j]):
                return f"{alternatives[i]} | {alternatives[j]}"
    return ""


def _first_chars(items: list[Any]) -> _CharSet:
    """Characters the sequence can begin with."""
    found = _NOTHING
    for op, value in items:
        if op in (_OP.AT, _OP.ASSERT, _OP.ASSERT_NOT):
            continue
        if op == _OP.LITERAL:
            return found | _CharSet(False, frozenset(chr(value)))
        if op == _OP.NOT_LITERAL:
            return found | _CharSet(True, frozenset(chr(value)))
        if op == _OP.ANY:
            return _ANY
        if op == _OP.IN:
            return found | _class_set(value)
        children = _children(op, value)
        if not children:
            return _ANY
        for child in children:
            found = found | _first_chars(child)
        if not _nullable([(op, value)]):
            return found
    return found


def _nullable(items: list[Any]) -> bool:
    for op, value in items:
        if op in (_OP.AT, _OP.ASSERT, _OP.ASSERT_NOT):
            continue
        if op in _REPEATS:
            if value[0] == 0 or _nullable(list(value[2])):
                continue
            return False
        if op == _OP.SUBPATTERN:
            if _nullable(list(value[-1])):
                continue
            return False
        if op == _OP.BRANCH:
            if any(_nullable(list(b)) for b in value[1]):
                continue
            return False
        return False
    return True


_CATEGORY_CHARS = {
    "CATEGORY_DIGIT": frozenset(string.digits),
    "CATEGORY_SPACE": frozenset(" \t\n\r\f\v"),
    "CATEGORY_WORD": frozenset(string.ascii_letters + string.digits + "_"),
}


def _class_set(value: Iterable[Any]) -> _CharSet:
    members: set[str] = set()
    negated = False
    for op, item in value:
        if op == _OP.NEGATE:
            negated = True
        elif op == _OP.LITERAL:
            members.add(chr(item))
        elif op == _OP.RANGE:
            low, high = item
            if high - low > 512:
                return _ANY
            members |= {chr(c) for c in range(low, high + 1)}
        elif op == _OP.CATEGORY:
            chars = _CATEGORY_CHARS.get(str(item))
            if chars is None:
                return _ANY
            members |= chars
    return _CharSet(negated, frozenset(members))


def literal_runs(regex: str) -> list[str]:
    """The runs of plain characters in a regex (escapes, classes and group openers break them)."""
    return _META.split(_GROUP_OPENER.sub("(", regex))


_RE2_ONLY = re.compile(r"\\[pPQECz]|\\x\{|\[\[?:|\(\?[a-zA-Z]*U")
"""RE2 syntax that Python's parser reads differently or not at all (``[[:alpha:]]`` would
parse as a class followed by a literal ``]``): such a pattern gets no required literal."""


def required_literals(regex: str) -> tuple[str, ...] | None:
    """Literal texts of which every match of ``regex`` contains at least one, lower-cased and
    ASCII only, or ``None`` when no such set is known (the scanner compares them with
    :func:`gpudoctor.logs.scanner.fold_for_literals` of the text).

    Lower-cased so that one comparison with a lower-cased text serves case-sensitive and
    case-insensitive patterns alike (a superset of the lines that can match, never a subset).
    Non-ASCII characters end a literal, since their case folding is not ASCII's.
    """
    if _RE2_ONLY.search(regex):
        return None
    try:
        tree = _parse(regex)
    except (re.error, OverflowError, RecursionError, ValueError):
        return None
    found = _required(list(tree))
    return tuple(sorted(found)) if found else None


def _required(items: list[Any]) -> frozenset[str] | None:
    """The most selective set of alternatives that a match of this sequence must contain."""
    candidates: list[frozenset[str]] = []
    run: list[str] = []

    def end_run() -> None:
        if run:
            candidates.append(frozenset({"".join(run)}))
            run.clear()

    for op, value in items:
        if op == _OP.LITERAL and value < 128:
            run.append(chr(value).lower())
            continue
        end_run()
        if op == _OP.SUBPATTERN:
            inner = _required(list(value[-1]))
        elif op in _REPEATS and value[0] >= 1:
            inner = _required(list(value[2]))
        elif op == _OP.BRANCH:
            branches = [_required(list(b)) for b in value[1]]
            inner = None if any(b is None for b in branches) else frozenset().union(*branches)  # type: ignore[arg-type]
        else:
            inner = None
        if inner:
            candidates.append(inner)
    end_run()
    return max(candidates, key=_selectivity, default=None)


def _selectivity(alternatives: frozenset[str]) -> tuple[int, int]:
    # The shortest alternative decides how often the set is present by chance; fewer is better.
    return min(len(a) for a in alternatives), -len(alternatives)


def named_groups(regex: str) -> set[str]:
    """The names of the regex's named groups (``(?P<name>`` and ``(?<name>``)."""
    return set(_NAMED_GROUP.findall(regex))
