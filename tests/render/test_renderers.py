"""Renderers: golden outputs at fixed width without colour, JSON contract, redaction."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest

from gpudoctor.pipeline import LogInput, build_report, make_scanner, scan_logs
from gpudoctor.render.json import render_json
from gpudoctor.render.markdown import render_markdown
from gpudoctor.render.redact import redact
from gpudoctor.render.text import render_text
from gpudoctor.report import Report
from gpudoctor.rulebook.book import load_rulebook

FIXTURES = Path(__file__).parents[1] / "fixtures"
GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("GPUDOCTOR_UPDATE_GOLDEN") == "1"


def report_for(log_name: str) -> Report:
    book = load_rulebook([FIXTURES / "rules" / "ranking"], bundled=False)
    path = FIXTURES / "logs" / "ranking" / log_name
    scan = scan_logs([LogInput(log_name, lambda: open(path, "rb"))], make_scanner(book))
    return dataclasses.replace(build_report(book, scan), version="0.0.0-test")


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("log", ["assert-then-illegal.log", "killed-with-dmesg.log"])
def test_text_golden(log: str) -> None:
    styled = render_text(report_for(log), width=80)
    check_golden(log.replace(".log", ".txt"), styled.plain())


def test_text_colour_adds_ansi_only() -> None:
    styled = render_text(report_for("killed.log"), width=80)
    coloured = styled.to_ansi(80)
    assert "\x1b[" in coloured
    assert "\x1b[" not in styled.plain()


@pytest.mark.parametrize("log", ["assert-then-illegal.log"])
def test_markdown_golden(log: str) -> None:
    check_golden(log.replace(".log", ".md"), render_markdown(report_for(log)))


def test_json_follows_the_contract() -> None:
    data = json.loads(render_json(report_for("assert-then-illegal.log")))
    assert data["schema"] == "gpudoctor.report/1"
    assert data["gpudoctor"] == "0.0.0-test"
    assert data["inputs"] == [
        {"kind": "log", "name": "assert-then-illegal.log", "lines": 6, "bytes": 473}
    ]
    first = data["diagnoses"][0]
    assert first["rank"] == 1
    assert first["rule"] == "t-kernel-assertion"
    assert first["cause"] == "device_side_assert"
    assert first["role"] == "root"
    assert first["severity"] == "error"
    assert first["confidence"] == 0.95
    assert [e["line"] for e in first["evidence"]] == [2, 3]
    assert first["evidence"][1] == {
        "source": "assert-then-illegal.log",
        "line": 3,
        "text": "RuntimeError: CUDA error: device-side assert triggered",
    }
    assert first["facts"] == {"condition": "t >= 0 && t < n_classes"}
    assert first["fix"] == ["Check the labels."]
    assert first["references"] == ["https://example.org/assert"]
    assert [d["rule"] for d in data["diagnoses"]] == [
        "t-kernel-assertion",
        "t-illegal-access",
        "t-async-advice",
    ]


def test_empty_report_says_so_plainly() -> None:
    empty = Report(inputs=(), diagnoses=())
    assert "No known failure signature was found" in render_text(empty).plain()
    assert "No known failure signature was found" in render_markdown(empty)
    assert json.loads(render_json(empty))["diagnoses"] == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('File "/home/alice/proj/train.py", line 3', 'File "/home/<user>/proj/train.py", line 3'),
        ("C:\\Users\\Bob\\train.py", "C:\\Users\\<user>\\train.py"),
        ("MASTER_ADDR=10.1.2.3 port 29500", "MASTER_ADDR=<ip> port 29500"),
        ("connect to fe80::1ff:fe23:4567:890a failed", "connect to <ip> failed"),
        ("node gpu-node-17.cluster.example.com down", "node <host> down"),
        ("ssh alice@login01", "ssh <user>@<host>"),
        ("  host      : node-a17", "  host      : <host>"),
        ("node-a17:2203:2210 [3] NCCL INFO ok", "<host>:2203:2210 [3] NCCL INFO ok"),
        ("HF token hf_abcdefghijklmnopqrstuvwxyz012345", "HF token <token>"),
        ("export WANDB_API_KEY=0123456789abcdef", "export WANDB_API_KEY=<redacted>"),
        ("UUID: GPU-5ad4f1f3-2b1c-8d3e-9f00-123456789abc)", "UUID: GPU-<uuid>)"),
        ("Serial Number : 1320421012345", "Serial Number : <serial>"),
        ("see https://pytorch.org/docs/stable/notes/cuda.html", "see https://pytorch.org/docs/stable/notes/cuda.html"),
        ("CUDA error: out of memory", "CUDA error: out of memory"),
    ],
)  # fmt: skip
def test_redaction(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_redaction_of_known_host_names() -> None:
    assert redact("[trainer-7:1234] NCCL WARN", ["trainer-7"]) == "[<host>:1234] NCCL WARN"


def test_markdown_redacts_unless_asked_not_to(tmp_path: Path) -> None:
    report = report_for("assert-then-illegal.log")
    ev = dataclasses.replace(report.diagnoses[0].evidence[0], source="/home/alice/run.log")
    d0 = dataclasses.replace(report.diagnoses[0], evidence=(ev,))
    report = dataclasses.replace(report, diagnoses=(d0, *report.diagnoses[1:]))
    assert "/home/<user>/run.log" in render_markdown(report)
    assert "/home/alice/run.log" in render_markdown(report, redact_output=False)
