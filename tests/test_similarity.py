"""The similarity fallback: leads from the nearest known signatures when no rule fired."""

from __future__ import annotations

import pytest

from gpudoctor import similarity
from gpudoctor.logs.scanner import Scanner
from gpudoctor.logs.structure import structure_patterns
from gpudoctor.pipeline import LogInput, scan_logs
from gpudoctor.report import Diagnosis
from gpudoctor.rulebook.book import RuleBook, load_rulebook
from gpudoctor.rulebook.model import Role, Rule


@pytest.fixture(scope="module")
def book() -> RuleBook:
    return load_rulebook()


def _leads(text: str, book: RuleBook) -> list[Diagnosis]:
    """The fallback's leads for ``text`` (it is not wired into the pipeline: see its module)."""
    scanner = Scanner([*book.pattern_specs(), *structure_patterns(), *similarity.PATTERNS])
    scan = scan_logs([LogInput.from_text("log", text)], scanner)
    return similarity.similar_diagnoses(book, scan.hits)


def _rule(rule_id: str, cause: str, title: str, examples: tuple[str, ...]) -> Rule:
    from gpudoctor.rulebook.model import Example, Severity

    return Rule(
        id=rule_id,
        cause=cause,
        title=title,
        severity=Severity.ERROR,
        role=Role.ROOT,
        confidence=0.9,
        summary="s",
        explanation="e",
        fix=("f",),
        references=(),
        examples_match=tuple(Example(text=t) for t in examples),
    )


def test_tokens_drop_numbers_and_short_words() -> None:
    assert similarity.tokens("GPU 0: out of memory at 0x7f3a, 12 GiB") == ["gpu", "memory", "gib"]


def test_the_nearest_signature_wins_and_weak_ones_are_dropped() -> None:
    index = similarity.SimilarityIndex(
        [
            _rule("pool-oom", "gpu_oom", "Pool allocation failed", ("pool allocation failed",)),
            _rule("bus", "xid_hardware", "Card fell off the bus", ("card fell off the bus",)),
        ]
    )
    found = index.nearest("FatalError: pool allocation failed while growing")
    assert [m.rule.id for m in found] == ["pool-oom"]
    assert found[0].score > similarity.MIN_SCORE
    assert index.nearest("epoch 3 finished in 42 seconds") == []


def test_a_paraphrased_failure_gets_leads_below_the_alarm_threshold(book: RuleBook) -> None:
    # an uncaught wrapper that no rule knows, around the words of a cuDNN handle failure
    text = (
        "step 40 ok\n"
        "TrainerError: backend said: could not create cudnn handle (status internal error)\n"
    )
    causes = _leads(text, book)
    assert causes, "expected leads"
    assert all(d.confidence <= similarity.MAX_CONFIDENCE for d in causes)
    assert all(d.role == "fallback" and d.title.startswith("Resembles: ") for d in causes)
    assert "cudnn_cublas_init" in [d.cause for d in causes[:3]]
    assert causes[0].evidence[-1].text.startswith("TrainerError")


def test_a_log_without_error_lines_stays_silent(book: RuleBook) -> None:
    text = "epoch 1 loss 0.91\nepoch 2 loss 0.72\nsaved checkpoint to /srv/ckpt/model-2.pt\n"
    assert _leads(text, book) == []


def test_the_index_is_built_once_per_book(book: RuleBook) -> None:
    assert similarity.index_for(book) is similarity.index_for(book)


def test_no_lead_when_the_run_went_on_after_the_error(book: RuleBook) -> None:
    text = (
        "TrainerError: backend said: could not create cudnn handle (status internal error)\n"
        "retrying on the CPU\n"
        "Training complete\n"
    )
    assert _leads(text, book) == []
