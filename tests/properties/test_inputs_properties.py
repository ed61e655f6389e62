"""Property-based tests: whatever a log, a snapshot file or a rule file holds, gpudoctor
answers with facts, a report or one clear error — never an exception from inside."""

from __future__ import annotations

import contextlib
import json
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpudoctor.errors import RuleErrors, SnapshotError
from gpudoctor.logs.structure import READERS, structure_facts, structure_patterns
from gpudoctor.pipeline import LogInput, make_scanner, scan_logs
from gpudoctor.rulebook.book import RuleBook
from gpudoctor.rulebook.loader import load_rules
from gpudoctor.snapshot.model import load_snapshot

TempDirs = pytest.TempPathFactory
SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))

# Pieces of the shapes the structure readers look for, so that random logs reach their code.
FRAGMENTS = [
    "Traceback (most recent call last):",
    '  File "/home/u/train.py", line 12, in <module>',
    '  File "/opt/conda/lib/python3.11/site-packages/torch/nn/module.py", line 9, in f',
    "RuntimeError: CUDA error: an illegal memory access was encountered",
    "[rank3]: ValueError: bad value",
    "The above exception was the direct cause of the following exception:",
    "Caught RuntimeError in DataLoader worker process 0.",
    "Original Traceback (most recent call last):",
    "Killed",
    "Segmentation fault (core dumped)",
    "exitcode  : -9 (pid: 4242)",
    "srun: error: node-3: task 1: Out Of Memory",
    "epoch 1 step 20 loss nan grad_norm inf mem 31.2GiB",
    "{'loss': 0.52, 'grad_norm': 1.3, 'epoch': 0.4}",
    "| NVIDIA-SMI 535.54.03    Driver Version: 535.54.03    CUDA Version: 12.2 |",
    "|  0  N/A  N/A   1234  C  python  10000MiB |",
    "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.",
]
log_lines = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=80)), max_size=40).map(
    lambda lines: "\n".join(lines)
)


def _facts_of(text: str) -> dict[str, object]:
    book = RuleBook(())
    scan = scan_logs([LogInput.from_text("p.log", text)], make_scanner(book))
    return structure_facts(scan.hits)


@SETTINGS
@given(log_lines)
def test_structure_readers_never_raise_and_give_only_declared_facts(text: str) -> None:
    facts = _facts_of(text)
    declared = {spec.name for reader in READERS for spec in reader.FACTS}
    assert set(facts) <= declared


@SETTINGS
@given(st.permutations(FRAGMENTS))
def test_every_reader_pattern_is_scanned_whatever_the_order(lines: list[str]) -> None:
    assert structure_patterns()  # every reader contributes patterns to the single pass
    assert _facts_of("\n".join(lines))  # the fragments always yield some facts


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=5)
        | st.dictionaries(st.text(string.ascii_lowercase + "_", max_size=12), children, max_size=6)
    ),
    max_leaves=40,
)
snapshot_like = st.fixed_dictionaries(
    {"schema": st.sampled_from(["gpudoctor.snapshot/1", "gpudoctor.snapshot/2", "x", 3])},
    optional={
        "gpus": json_values,
        "host": json_values,
        "driver": json_values,
        "versions": json_values,
        "kernel_log": json_values,
        "sources": json_values,
    },
)


@SETTINGS
@given(st.one_of(snapshot_like, json_values))
def test_any_json_is_a_snapshot_or_one_snapshot_error(
    tmp_path_factory: TempDirs, value: object
) -> None:
    path = Path(tmp_path_factory.mktemp("snap")) / "s.json"
    path.write_text(json.dumps(value), encoding="utf-8")
    try:
        load_snapshot(path)
    except SnapshotError as exc:
        assert str(exc).startswith(str(path))


@SETTINGS
@given(st.binary(max_size=600))
def test_any_bytes_are_a_snapshot_or_one_snapshot_error(
    tmp_path_factory: TempDirs, data: bytes
) -> None:
    path = Path(tmp_path_factory.mktemp("snap")) / "s.json"
    path.write_bytes(data)
    with contextlib.suppress(SnapshotError):
        load_snapshot(path)


RULE_KEYS = ["id", "cause", "title", "severity", "role", "confidence", "patterns", "summary",
             "fix", "references", "examples", "conditions", "explains", "match"]  # fmt: skip
rule_like = st.dictionaries(st.sampled_from(RULE_KEYS), json_values, max_size=len(RULE_KEYS))


@SETTINGS
@given(st.one_of(rule_like.map(json.dumps), st.text(max_size=300)))
def test_any_rule_file_loads_or_gives_located_errors(tmp_path_factory: TempDirs, text: str) -> None:
    path = Path(tmp_path_factory.mktemp("rules")) / "r.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        load_rules([path])
    except RuleErrors as exc:
        assert exc.errors
        assert all(str(error).startswith(f"{path}:") for error in exc.errors)
