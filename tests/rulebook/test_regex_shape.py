"""The shape of a regex: literal text, anchors, constructs that backtrack in other engines."""

from __future__ import annotations

import pytest

from gpudoctor.rulebook.regex_shape import (
    backtracking_problems,
    costly_leading_repeat,
    is_anchored,
    literal_runs,
    longest_literal,
    named_groups,
    required_literals,
)


def test_group_openers_are_not_literal_text() -> None:
    assert longest_literal(r"(?P<name>ab)(?:cd)") in {"ab", "cd"}
    assert is_anchored(r"(?i)^foo")
    assert is_anchored(r"foo$")
    assert not is_anchored(r"foo\$")


@pytest.mark.parametrize(
    "regex",
    [
        r"(a+)+b",
        r"(\w+\s?)*x",
        r"(.*a){3,}",
        r"([a-z]+)*$",
        r"(?P<n>\d+)+",
    ],
)
def test_nested_quantifiers_are_flagged(regex: str) -> None:
    assert any("nested quantifiers" in p for p in backtracking_problems(regex))


@pytest.mark.parametrize("regex", [r"(\w|\d)+", r"(a|ab)*c", r"(?:x|xy){2,}", r"(?:[a-z]|\w)+"])
def test_overlapping_alternations_under_a_quantifier_are_flagged(regex: str) -> None:
    assert any("alternation" in p for p in backtracking_problems(regex))


@pytest.mark.parametrize(
    "regex",
    [
        r"(?:\s+(?:sm|compute)_\d+)*",  # each repeat is followed by something different
        r"(?:[^,]+,)*",
        r"(?:\d+\.)+\d+",
        r"(?:foo|bar)+",
        r"(a|b){1}",
        r"DataLoader worker \(pid\(?s?\)? (?P<pid>[\d, ]+)\) exited unexpectedly",
    ],
)
def test_safe_repetitions_pass(regex: str) -> None:
    assert backtracking_problems(regex) == []


def test_literal_runs_break_at_escapes_classes_and_groups() -> None:
    runs = [r for r in literal_runs(r"CUDA error: (?P<what>[a-z ]+)\. at line \d+") if r]
    assert runs == ["CUDA error: ", " at line "]
    assert longest_literal(r"ab\dcdef") == "cdef"


def test_named_groups_in_both_spellings() -> None:
    assert named_groups(r"(?P<pid>\d+) (?<signal>\w+) (?:x)(y)") == {"pid", "signal"}


def test_an_unparsable_pattern_is_not_analysed_but_obvious_nesting_is_seen() -> None:
    assert backtracking_problems(r"(unclosed") == []
    assert backtracking_problems(r"(a+)+(") == ["nested quantifiers ((a+)+)"]


@pytest.mark.parametrize(
    ("regex", "expected"),
    [
        (r"CUDA out of memory\. Tried", ("cuda out of memory. tried",)),
        (r"(?:error|failure) in cuDNN", (" in cudnn",)),  # the longer requirement wins
        (r"(?:CUBLAS|CUDNN)_x", ("blas", "dnn")),  # one of the branches (after "CU")
        (r"x*abc", ("abc",)),
        (r"(?:abc)?defg", ("defg",)),  # an optional group requires nothing
        (r"(?:abcd)+x", ("abcd",)),  # a group repeated at least once does
        (r"(?i)Killed", ("killed",)),
        (r"Ünïcode error", ("code error",)),  # non-ASCII ends a literal
    ],
)
def test_required_literals_are_what_every_match_contains(
    regex: str, expected: tuple[str, ...]
) -> None:
    assert required_literals(regex) == expected


@pytest.mark.parametrize(
    "regex",
    [
        r"(?:foo|)",  # a branch that needs nothing
        r"\d+",
        r"[[:alpha:]]+ foo",  # Python would read a class and a literal "]"
        r"\pL+x",
        r"\x{41}bc",
        r"(?U)ab+c",
        r"(unclosed",
    ],
)
def test_patterns_without_a_known_requirement_get_none(regex: str) -> None:
    assert required_literals(regex) is None


@pytest.mark.parametrize(
    ("regex", "found"),
    [
        (r"(?P<feature>\b\w[\w ]{0,40}?) is only supported", "{0,40}"),
        (r"[A-Za-z][\w.-]{0,60}\d:\s", "{0,60}"),
        (r"(?:[^\n]{0,50}|x) failed", "{0,50}"),
        (r"is only supported on (?:GPUs|devices)", ""),  # starts at its literal text
        (r"^\s*\w{0,40} x", ""),  # anchored to the line start
        (r"Target (?P<t>-?\d{1,12}) is out of bounds", ""),  # after a literal
        (r"\d{1,3}:\s", ""),  # a short count
        (r"(?:error|fail)[^\n]{0,80}x", ""),  # literal alternatives come first
    ],
)
def test_costly_leading_repeats_are_found_before_any_literal(regex: str, found: str) -> None:
    assert costly_leading_repeat(regex) == found


def test_no_structure_reader_pattern_begins_with_a_costly_repeat() -> None:
    # Rule files are checked by `rules lint`; the readers' own patterns are code.
    from gpudoctor.logs.structure import structure_patterns

    costly = {
        spec.key: costly_leading_repeat(spec.regex)
        for spec in structure_patterns()
        if costly_leading_repeat(spec.regex)
    }
    assert costly == {}
