"""The engine: which rules fire, with what confidence, in which order."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor.engine import Finding
from gpudoctor.pipeline import LogInput, build_report, make_scanner, scan_logs
from gpudoctor.report import Report
from gpudoctor.rulebook.book import RuleBook, load_rulebook
from gpudoctor.templates import render_template

FIXTURES = Path(__file__).parent / "fixtures"
LOGS = FIXTURES / "logs" / "ranking"


@pytest.fixture(scope="module")
def book() -> RuleBook:
    return load_rulebook([FIXTURES / "rules" / "ranking"], bundled=False)


def explain(book: RuleBook, *names: str, facts: dict[str, object] | None = None) -> Report:
    logs = [LogInput(n, (lambda p=LOGS / n: open(p, "rb"))) for n in names]  # type: ignore[misc]
    return build_report(book, scan_logs(logs, make_scanner(book)), facts)


def test_root_outranks_the_cascade_it_explains(book: RuleBook) -> None:
    report = explain(book, "assert-then-illegal.log")
    causes = report.causes
    assert [d.rule for d in causes] == ["t-kernel-assertion", "t-illegal-access"]
    illegal = causes[1]
    # explained by t-device-assert, which was merged into t-kernel-assertion (same cause)
    assert illegal.explained_by == ("t-kernel-assertion",)
    assert illegal.confidence == pytest.approx(0.45)  # 0.9 halved: explained by the assert


def test_same_cause_explained_finding_is_merged_into_its_explainer(book: RuleBook) -> None:
    (assertion,) = [
        d
        for d in explain(book, "assert-then-illegal.log").causes
        if d.cause == "device_side_assert"
    ]
    assert assertion.rule == "t-kernel-assertion"
    assert assertion.confidence == pytest.approx(0.95)
    assert [e.line for e in assertion.evidence] == [2, 3]  # its own line, then the merged one
    assert assertion.summary == "The kernel checked t >= 0 && t < n_classes and it was false."


def test_advice_is_never_a_cause(book: RuleBook) -> None:
    report = explain(book, "assert-then-illegal.log")
    advice = [d for d in report.diagnoses if not d.is_cause]
    assert [d.rule for d in advice] == ["t-async-advice"]
    assert advice[0].rank == len(report.diagnoses)  # last, despite its 0.95 prior


def test_confirmation_merges_into_its_root(book: RuleBook) -> None:
    report = explain(book, "killed-with-dmesg.log")
    (diagnosis,) = report.causes
    assert diagnosis.rule == "t-killed"
    assert diagnosis.confidence == pytest.approx(0.8)  # 0.6 + (1 - 0.6) / 2
    assert [e.line for e in diagnosis.evidence] == [1, 3]
    assert diagnosis.notes == ("confirmed by t-oom-kill: Kernel OOM killer",)


def test_confirmations_of_one_cause_count_once(book: RuleBook) -> None:
    (diagnosis,) = explain(book, "killed-two-confirmations.log").causes
    assert diagnosis.rule == "t-killed"
    assert diagnosis.confidence == pytest.approx(0.8)  # one boost, not two
    assert [e.line for e in diagnosis.evidence] == [1, 2, 3]
    assert diagnosis.notes == ("confirmed by t-oom-kill: Kernel OOM killer",)


def test_confirmation_stands_alone_without_its_root(book: RuleBook, tmp_path: Path) -> None:
    log = tmp_path / "dmesg.log"
    log.write_text("Out of memory: Killed process 77 (python)\n")
    report = build_report(
        book, scan_logs([LogInput("dmesg.log", lambda: open(log, "rb"))], make_scanner(book))
    )
    (diagnosis,) = report.causes
    assert diagnosis.rule == "t-oom-kill"
    assert diagnosis.summary == "The kernel killed pid 77."
    assert diagnosis.facts["pid"] == 77


def test_cascade_alone_is_the_answer(book: RuleBook, tmp_path: Path) -> None:
    log = tmp_path / "only-timeout.log"
    log.write_text("[Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5)\n")
    report = build_report(
        book, scan_logs([LogInput("t", lambda: open(log, "rb"))], make_scanner(book))
    )
    assert [d.rule for d in report.causes] == ["t-nccl-timeout"]
    assert report.causes[0].confidence == pytest.approx(0.9)


def test_cascade_with_its_root_ranks_below_even_when_earlier(book: RuleBook) -> None:
    report = explain(book, "nccl-after-kill.log")
    assert [d.rule for d in report.causes] == ["t-killed", "t-nccl-timeout"]
    assert report.causes[1].explained_by == ("t-killed",)


def test_a_weak_lead_explains_nothing(tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "t-nccl-timeout.yaml").write_text(
        (FIXTURES / "rules/ranking/t-nccl-timeout.yaml").read_text()
    )
    weak = (
        (FIXTURES / "rules/ranking/t-killed.yaml")
        .read_text()
        .replace("confidence: 0.6", "confidence: 0.3")
    )
    (rules / "t-killed.yaml").write_text(weak)
    book = load_rulebook([rules], bundled=False)
    log = tmp_path / "t.log"
    log.write_text(
        "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5)\nKilled\n"
    )
    report = build_report(
        book, scan_logs([LogInput("t", lambda: open(log, "rb"))], make_scanner(book))
    )
    timeout = next(d for d in report.causes if d.rule == "t-nccl-timeout")
    assert timeout.explained_by == ()
    assert timeout.confidence == pytest.approx(0.9)
    assert report.causes[0].rule == "t-nccl-timeout"


def test_earlier_event_wins_between_equal_roots(book: RuleBook, tmp_path: Path) -> None:
    log = tmp_path / "two.log"
    log.write_text(
        "CUDA error: an illegal memory access was encountered\n"
        "CUDA error: device-side assert triggered\n"
    )
    report = build_report(
        book, scan_logs([LogInput("t", lambda: open(log, "rb"))], make_scanner(book))
    )
    # The assert explains illegal_memory_access, so it still leads: causality over time.
    assert [d.rule for d in report.causes] == ["t-device-assert", "t-illegal-access"]
    assert report.causes[0].evidence[0].line == 2


def test_facts_only_rule_with_adjustment(book: RuleBook) -> None:
    report = explain(book, "killed.log", facts={"gpu_lost_count": 1, "xid_codes": [79]})
    lost = next(d for d in report.causes if d.rule == "t-gpu-lost")
    assert lost.confidence == pytest.approx(0.9)
    assert lost.summary == "1 GPU(s) no longer answer."
    assert [(e.fact, e.value) for e in lost.evidence] == [
        ("gpu_lost_count", 1),
        ("xid_codes", [79]),
    ]
    assert lost.notes == ("the kernel log shows Xid 79",)
    assert report.causes[0].rule == "t-gpu-lost"  # 0.9 beats Killed's 0.6


def test_facts_that_say_no_are_not_evidence(book: RuleBook) -> None:
    report = explain(book, "killed.log", facts={"gpu_lost_count": 2, "xid_codes": []})
    lost = next(d for d in report.causes if d.rule == "t-gpu-lost")
    assert [(e.fact, e.value) for e in lost.evidence] == [("gpu_lost_count", 2)]
    assert lost.confidence == pytest.approx(0.7)


def test_unknown_facts_make_conditions_false(book: RuleBook) -> None:
    report = explain(book, "killed.log")
    assert [d.rule for d in report.causes] == ["t-killed"]


def test_nothing_matches_gives_empty_report(book: RuleBook, tmp_path: Path) -> None:
    log = tmp_path / "fine.log"
    log.write_text("epoch 1 loss 0.3\nepoch 2 loss 0.2\n")
    report = build_report(
        book, scan_logs([LogInput("fine", lambda: open(log, "rb"))], make_scanner(book))
    )
    assert report.diagnoses == ()
    assert report.inputs[0].lines == 2


def test_first_and_last_captures_reach_across_lines(book: RuleBook, tmp_path: Path) -> None:
    log = tmp_path / "late.log"
    log.write_text("".join(f"epoch {n}\n" for n in range(1, 8)) + "CUDA out of memory\n")
    report = build_report(
        book, scan_logs([LogInput("t", lambda: open(log, "rb"))], make_scanner(book))
    )
    (late,) = [d for d in report.causes if d.rule == "t-oom-late"]
    assert late.summary == "Out of memory at epoch 7."
    early = tmp_path / "early.log"
    early.write_text("epoch 1\nepoch 2\nCUDA out of memory\n")
    report = build_report(
        book, scan_logs([LogInput("t", lambda: open(early, "rb"))], make_scanner(book))
    )
    assert "t-oom-late" not in [d.rule for d in report.diagnoses]


def test_templates_are_safe_and_typed() -> None:
    values = {"req": 2 * 1024**3, "frac": 0.345, "name": "x"}
    assert render_template("{req:size} {frac:pct} {name}", values) == "2.00 GiB 34% x"
    assert render_template("{name.__class__} {0} {name!r}", values) == "{name.__class__} {0} 'x'"
    assert render_template("unbalanced {", values) == "unbalanced {"
    assert render_template("{{literal}} {name:>3}", values) == "{literal}   x"


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("A worker died ({signal}); the job stopped.", "A worker died; the job stopped."),
        ("Exited (exit code {code}) at once.", "Exited at once."),
        ("({signal}) first", "first"),
        ("Process {pid} was killed.", "Process (pid unknown) was killed."),
        ("Needs {free_bytes:size}.", "Needs (free bytes unknown)."),
        ("({signal} in {name})", "((signal unknown) in x)"),  # not alone: say it
        ("Killed {pid}", "Killed (pid unknown)"),
    ],
)
def test_an_unknown_value_is_never_a_placeholder(template: str, expected: str) -> None:
    assert render_template(template, {"name": "x"}) == expected


def test_unknown_fields_are_those_printed_as_unknown() -> None:
    from gpudoctor.templates import unknown_fields

    template = "Process {pid} died ({signal}) on {host}."
    assert unknown_fields(template, {"host": "n1"}) == ["pid"]  # the parenthetical drops
    assert unknown_fields(template, {"pid": 7, "host": "n1"}) == []
    assert unknown_fields(template, {}) == ["pid", "host"]


def test_the_engine_gives_conditions_exactly_the_pattern_functions_lint_knows() -> None:
    from gpudoctor.engine import _pattern_functions
    from gpudoctor.rulebook.conditions import PATTERN_FUNCTIONS

    functions = _pattern_functions({"a": 2}, {"a": []})
    assert sorted(functions) == sorted(PATTERN_FUNCTIONS)
    assert functions["matched"]("a") is True and functions["count"]("b") == 0
    assert functions["first"]("a", "x") is None


@pytest.fixture(scope="module")
def general_book() -> RuleBook:
    return load_rulebook([FIXTURES / "rules" / "general"], bundled=False)


def _explain_text(book: RuleBook, text: str) -> Report:
    log = LogInput.from_text("job.log", text)
    return build_report(book, scan_logs([log], make_scanner(book)))


def test_generic_finding_folds_into_the_specific_rule_of_its_cause(general_book: RuleBook) -> None:
    report = _explain_text(
        general_book,
        "RuntimeError: CUDA error: an illegal memory access was encountered\n"
        "Search for `cudaErrorIllegalAddress' in the CUDA docs\n",
    )
    (diagnosis,) = report.causes
    assert diagnosis.rule == "t-illegal-wording"
    assert diagnosis.confidence == pytest.approx(0.85)
    assert [e.line for e in diagnosis.evidence] == [1, 2]


def test_generic_finding_stands_alone_without_a_specific_rule(general_book: RuleBook) -> None:
    (diagnosis,) = _explain_text(general_book, "kernel failed: cudaErrorIllegalAddress\n").causes
    assert (diagnosis.rule, diagnosis.role) == ("t-code-illegal", "generic")


def test_fallback_names_the_terminal_error_when_nothing_else_fires(
    general_book: RuleBook,
) -> None:
    (diagnosis,) = _explain_text(general_book, "step 3\nValueError: bad shape\n").causes
    assert diagnosis.rule == "t-exception-fallback"
    assert diagnosis.summary == "The job ended on ValueError."


def test_fallback_is_dropped_once_a_likely_cause_is_found(general_book: RuleBook) -> None:
    report = _explain_text(general_book, "ValueError: worker failed\nKilled\n")
    assert [d.rule for d in report.causes] == ["t-killed-lead"]


@pytest.mark.parametrize(
    "success", ["Training complete", "GPU 00000000:41:00.0 was successfully reset."]
)
def test_a_failure_the_log_goes_on_from_is_demoted(general_book: RuleBook, success: str) -> None:
    crash = _explain_text(
        general_book, "RuntimeError: CUDA error: an illegal memory access was encountered\n"
    )
    survived = _explain_text(
        general_book,
        "RuntimeError: CUDA error: an illegal memory access was encountered\n"
        f"retrying the batch on the CPU\n{success}\n",
    )
    assert crash.causes[0].confidence == pytest.approx(0.85)
    (diagnosis,) = survived.causes
    assert diagnosis.confidence == pytest.approx(0.42)  # 0.85 halved, shown to two places
    assert any("went on" in note for note in diagnosis.notes)


def test_a_success_line_before_the_failure_changes_nothing(general_book: RuleBook) -> None:
    report = _explain_text(
        general_book,
        "Training complete\nRuntimeError: CUDA error: an illegal memory access was encountered\n",
    )
    assert report.causes[0].confidence == pytest.approx(0.85)


GENERIC_RULE = """id: {id}
cause: xid_hardware
title: "{title}"
severity: error
role: generic
confidence: {confidence}
patterns:
  - id: line
    regex: '{regex}'
summary: 'The GPU stopped answering.'
explanation: 'A test rule.'
fix: ['Reboot.']
references: ['https://example.org/doc']
examples:
  match: ['{example}']
  no_match: ['all is well']
"""


def generic_book(tmp_path: Path) -> RuleBook:
    rules = tmp_path / "rules"
    rules.mkdir()
    for rule_id, title, confidence, regex, example in (
        (
            "t-dcgm-bus",
            "DCGM: GPU off the bus",
            0.75,
            "GPU [0-9]+ has fallen off",
            "GPU 2 has fallen off",
        ),
        (
            "t-driver-bus",
            "the driver says so",
            0.7,
            "has fallen off the bus",
            "has fallen off the bus",
        ),
        ("t-ecc", "an ECC error", 0.6, "double bit ECC error", "double bit ECC error"),
    ):
        text = GENERIC_RULE.format(
            id=rule_id, title=title, confidence=confidence, regex=regex, example=example
        )
        (rules / f"{rule_id}.yaml").write_text(text)
    return load_rulebook([rules], bundled=False)


def causes_in(tmp_path: Path, text: str) -> list[str]:
    """The rules of the causes the generic test pack finds in ``text``."""
    book = generic_book(tmp_path)
    log = tmp_path / "t.log"
    log.write_text(text)
    scan = scan_logs([LogInput("t", lambda: open(log, "rb"))], make_scanner(book))
    return [d.rule for d in build_report(book, scan).causes]


def test_two_generic_rules_on_one_line_make_one_diagnosis(tmp_path: Path) -> None:
    text = "health: GPU 3 has fallen off the bus\nGPU 1: double bit ECC error\n"
    # the two that read the same line are one (the more confident); the ECC line stays its own
    assert causes_in(tmp_path, text) == ["t-dcgm-bus", "t-ecc"]


def test_generic_rules_of_one_cause_on_different_lines_stay_apart(tmp_path: Path) -> None:
    text = "kernel: GPU at 3b has fallen off the bus\nGPU 1: double bit ECC error\n"
    assert causes_in(tmp_path, text) == ["t-driver-bus", "t-ecc"]


ONLY_RULE = """\
id: t-only
cause: gpu_oom
title: t
severity: error
role: root
confidence: 0.7
patterns:
  - {id: strong, regex: 'STRONG'}
  - {id: weak, regex: 'WEAK'}
  - {id: other, regex: 'OTHER'}
adjust:
  - {when: 'only("weak")', by: -0.3, reason: 'only the weak line'}
  - {when: 'only("strong", "other")', by: 0.1, reason: 'no weak line'}
summary: s
fix: [f]
references: [https://example.org]
examples: {match: ['STRONG'], no_match: ['x']}
"""


def _one_rule_finding(tmp_path: Path, rule_text: str, logs: list[LogInput]) -> Finding | None:
    """What a book of this one rule finds in ``logs``."""
    from gpudoctor.engine import evaluate_rule
    from gpudoctor.rulebook.loader import load_rules

    rule_id = rule_text.split("\n", 1)[0].removeprefix("id: ")
    path = tmp_path / f"{rule_id}.yaml"
    path.write_text(rule_text)
    [rule] = load_rules([path]).rules
    scan = scan_logs(logs, make_scanner(RuleBook((rule,))))
    return evaluate_rule(rule, scan.hits, {}, [summary.lines for summary in scan.inputs])


@pytest.mark.parametrize(
    ("text", "confidence"),
    [
        ("WEAK", 0.4),  # only the weak pattern: lowered
        ("WEAK\nSTRONG", 0.7),  # another pattern matched too: neither adjust applies
        ("STRONG", 0.8),  # only patterns among strong and other
        ("STRONG\nOTHER", 0.8),
        ("OTHER\nWEAK", 0.7),
    ],
)
def test_only_means_no_other_pattern_of_the_rule_matched(
    tmp_path: Path, text: str, confidence: float
) -> None:
    finding = _one_rule_finding(tmp_path, ONLY_RULE, [LogInput.from_text("t", text)])
    assert finding is not None
    assert finding.confidence == pytest.approx(confidence)


FOLLOWED_RULE = """\
id: t-followed
cause: host_oom
title: t
severity: error
role: root
confidence: 0.5
patterns:
  - {id: loading, regex: 'LOADING'}
  - {id: prompt, regex: '^PROMPT$'}
conditions:
  - 'followed_by("loading", "prompt")'
summary: s
fix: [f]
references: [https://example.org]
examples: {match: ["LOADING\\nPROMPT"], no_match: ['x']}
"""


@pytest.mark.parametrize(
    ("text", "fires"),
    [
        ("LOADING\nPROMPT", True),
        ("PROMPT\nstart\nLOADING 1\nLOADING 2\nPROMPT", True),  # the last loading line
        ("LOADING\nLoaded.\nPROMPT", False),  # a line between: the program went on
        ("PROMPT\nLOADING", False),  # the prompt before it
    ],
)
def test_followed_by_means_on_the_very_next_line(tmp_path: Path, text: str, fires: bool) -> None:
    finding = _one_rule_finding(tmp_path, FOLLOWED_RULE, [LogInput.from_text("t", text)])
    assert (finding is not None) is fires


def test_followed_by_does_not_cross_inputs(tmp_path: Path) -> None:
    logs = [LogInput.from_text("a", "LOADING"), LogInput.from_text("b", "x\nPROMPT")]
    assert _one_rule_finding(tmp_path, FOLLOWED_RULE, logs) is None


AT_END_RULE = FOLLOWED_RULE.replace("t-followed", "t-at-end").replace(
    'followed_by("loading", "prompt")', 'at_end("loading")'
)


@pytest.mark.parametrize(
    ("text", "fires"),
    [
        ("LOADING", True),
        ("start\nLOADING 1\nstep 1\nstep 2\nstep 3\nstep 4", True),  # four lines after it
        ("LOADING 1\nstep 1\nstep 2\nstep 3\nstep 4\nstep 5", False),  # five: it went on
        ("step 1\n" * 40 + "LOADING\n", True),
    ],
)
def test_at_end_means_among_the_last_five_lines(tmp_path: Path, text: str, fires: bool) -> None:
    finding = _one_rule_finding(tmp_path, AT_END_RULE, [LogInput.from_text("t", text)])
    assert (finding is not None) is fires


def test_at_end_is_per_input(tmp_path: Path) -> None:
    logs = [LogInput.from_text("a", "LOADING\n" + "step\n" * 9), LogInput.from_text("b", "x")]
    assert _one_rule_finding(tmp_path, AT_END_RULE, logs) is None
    logs = [LogInput.from_text("a", "x\n" * 9), LogInput.from_text("b", "LOADING")]
    assert _one_rule_finding(tmp_path, AT_END_RULE, logs) is not None


def test_a_failure_training_went_on_from_is_demoted(general_book: RuleBook) -> None:
    survived = _explain_text(
        general_book,
        "RuntimeError: CUDA error: an illegal memory access was encountered\n"
        "epoch 1 loss: 0.5214\nepoch 2 loss: 0.4107\n",
    )
    (diagnosis,) = survived.causes
    assert diagnosis.confidence == pytest.approx(0.42)  # 0.85 halved
    assert any("training went on" in note for note in diagnosis.notes)


@pytest.mark.parametrize(
    ("bar", "demoted"),
    [
        ("Tokenizing: 100%|##########| 4000/4000 [00:03<00:00, 1290.32it/s]\n", True),
        ("DONE: 100%| 96/96 [elapsed: 00:02 remaining: 00:00]\n", True),
        # a bar that stopped short of its total, or a count with no bar, is not progress
        ("Tokenizing:  41%|####      | 1640/4000 [00:01<00:02, 1290.32it/s]\n", False),
        ("100% of 4000 samples checked\n", False),
    ],
)
def test_a_progress_bar_at_its_total_is_progress(
    general_book: RuleBook, bar: str, demoted: bool
) -> None:
    report = _explain_text(
        general_book,
        "RuntimeError: CUDA error: an illegal memory access was encountered\n" + bar,
    )
    (diagnosis,) = report.causes
    assert diagnosis.confidence == pytest.approx(0.42 if demoted else 0.85)


@pytest.mark.parametrize("ending", ["ValueError: bad shape\n", "Killed\n"])
def test_progress_with_a_failure_after_it_demotes_nothing(
    general_book: RuleBook, ending: str
) -> None:
    report = _explain_text(
        general_book,
        "RuntimeError: CUDA error: an illegal memory access was encountered\n"
        f"epoch 1 loss: 0.5214\nepoch 2 loss: 0.4107\n{ending}",
    )
    assert report.causes[0].confidence == pytest.approx(0.85)
    assert not any("training went on" in n for d in report.causes for n in d.notes)


def test_fallbacks_of_one_cause_are_one_diagnosis(general_book: RuleBook) -> None:
    # the exception and the exit code that follows it name one terminal error
    report = _explain_text(general_book, "ValueError: bad shape\nworker exited with code 1\n")
    (diagnosis,) = report.causes
    assert diagnosis.rule == "t-exception-fallback"
    assert [e.line for e in diagnosis.evidence] == [1, 2]
