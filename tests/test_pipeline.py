"""The core call behind explain, diagnose (and run): :func:`gpudoctor.pipeline.diagnose`."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor.logs.reader import EMPTY_INPUT
from gpudoctor.pipeline import LogInput, diagnose, kernel_log_input
from gpudoctor.rulebook.book import RuleBook, load_rulebook
from gpudoctor.snapshot import load_snapshot

TESTS = Path(__file__).parent
SNAPSHOTS = TESTS / "snapshot" / "fixtures"
OOM_LOG = TESTS.parent / "examples" / "logs" / "pytorch-oom.log"


@pytest.fixture(scope="module")
def book() -> RuleBook:
    return load_rulebook([])


def test_logs_alone(book: RuleBook) -> None:
    report = diagnose(book, [LogInput.from_path(OOM_LOG, "train.log")])
    assert [(i.kind, i.name) for i in report.inputs] == [("log", "train.log")]
    assert report.causes[0].cause == "gpu_oom"
    assert report.causes[0].evidence[0].source == "train.log"


def test_snapshot_adds_its_kernel_log_facts_and_sources(book: RuleBook) -> None:
    snapshot = load_snapshot(SNAPSHOTS / "gpu-lost.json")
    report = diagnose(book, [], snapshot, "snap.json")
    kinds = [i.kind for i in report.inputs]
    assert kinds[0] == "kernel"
    assert kinds[1] == "snapshot"
    assert report.inputs[1].name == "snap.json"
    assert len([k for k in kinds if k == "source"]) == len(snapshot.sources)
    assert report.facts["gpu_lost_count"] == 1
    assert report.causes[0].cause == "xid_hardware"
    kernel = kernel_log_input(snapshot)
    assert kernel is not None
    assert report.causes[0].evidence[0].source == kernel.name


def test_unreadable_and_empty_logs_are_recorded_not_raised(book: RuleBook, tmp_path: Path) -> None:
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    report = diagnose(
        book, [LogInput.from_path(tmp_path / "missing.log"), LogInput.from_path(empty)]
    )
    missing, blank = report.inputs
    assert missing.error is not None and not missing.empty
    assert blank.empty and blank.error is None
    assert blank.warnings == (f"{empty}: {EMPTY_INPUT}",)
    assert report.diagnoses == ()


def test_text_input(book: RuleBook) -> None:
    log = LogInput.from_text("<captured>", OOM_LOG.read_text(encoding="utf-8"), kind="stdin")
    report = diagnose(book, [log])
    assert report.inputs[0].kind == "stdin"
    assert report.inputs[0].lines == len(OOM_LOG.read_text(encoding="utf-8").splitlines())
    assert report.causes[0].cause == "gpu_oom"
