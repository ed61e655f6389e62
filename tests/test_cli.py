"""The command line, through click's CliRunner: exit codes, stdout and stderr apart."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpudoctor.cli import main

FIXTURES = Path(__file__).parent / "fixtures"
RANKING_RULES = FIXTURES / "rules" / "ranking"
OOM_LINE = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
    "capacity of 23.65 GiB of which 1.06 GiB is free. Including non-PyTorch memory, this "
    "process has 22.57 GiB memory in use. Of the allocated memory 21.90 GiB is allocated by "
    "PyTorch, and 310.25 MiB is reserved by PyTorch but unallocated.\n"
)


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def oom_log(tmp_path: Path) -> Path:
    path = tmp_path / "train.log"
    path.write_text("epoch 1 step 10 loss 0.5\n" + OOM_LINE)
    return path


def test_explain_file(runner: CliRunner, oom_log: Path) -> None:
    result = runner.invoke(main, ["explain", "--no-color", str(oom_log)])
    assert result.exit_code == 0, result.output
    assert "found in" in result.stdout
    assert "PyTorch ran out of GPU memory" in result.stdout
    assert f"{oom_log}:2" in result.stdout
    assert result.stderr == ""


def test_explain_stdin(runner: CliRunner) -> None:
    result = runner.invoke(main, ["explain", "--format", "json"], input=OOM_LINE)
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["inputs"] == [
        {"kind": "stdin", "name": "<stdin>", "lines": 1, "bytes": len(OOM_LINE)}
    ]
    first = data["diagnoses"][0]
    assert first["cause"] == "gpu_oom"
    assert first["facts"]["requested_bytes"] == 2 * 1024**3
    assert first["facts"]["free_bytes"] == round(1.06 * 1024**3)


def test_fail_on_sets_exit_code(runner: CliRunner, oom_log: Path) -> None:
    assert runner.invoke(main, ["explain", "--fail-on", "error", str(oom_log)]).exit_code == 1
    assert runner.invoke(main, ["explain", "--fail-on", "critical", str(oom_log)]).exit_code == 0
    strict = ["explain", "--fail-on", "error", "--min-confidence", "0.99", str(oom_log)]
    assert runner.invoke(main, strict).exit_code == 0


def test_nothing_found_is_exit_zero_and_said(runner: CliRunner, tmp_path: Path) -> None:
    log = tmp_path / "fine.log"
    log.write_text("epoch 1 loss 0.3\n")
    result = runner.invoke(main, ["explain", "--fail-on", "info", str(log)])
    assert result.exit_code == 0
    assert "No known failure signature was found" in result.stdout


def test_unreadable_input_exits_3(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(main, ["explain", str(tmp_path / "missing.log")])
    assert result.exit_code == 3
    assert "cannot read" in result.stderr
    assert result.stdout == ""


def test_one_unreadable_input_among_good_ones(
    runner: CliRunner, oom_log: Path, tmp_path: Path
) -> None:
    result = runner.invoke(main, ["explain", str(oom_log), str(tmp_path / "gone.log")])
    assert result.exit_code == 0
    assert "gone.log" in result.stderr
    assert "PyTorch ran out of GPU memory" in result.stdout


def test_an_empty_directory_is_a_usage_error(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "x.log").write_text("RuntimeError: CUDA error: out of memory\n")
    result = runner.invoke(main, ["explain", str(tmp_path)])
    assert result.exit_code == 2
    assert "is a directory with no files in it" in result.stderr


def _job_tree(root: Path, oom_log: Path) -> None:
    """A torchrun --log-dir tree: one rank ran out of memory, the other timed out."""
    (root / "attempt_0" / "0").mkdir(parents=True)
    (root / "attempt_0" / "1").mkdir(parents=True)
    (root / "attempt_0" / "0" / "stderr.log").write_text(
        "[E ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=88, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600412 milliseconds "
        "before timing out.\n"
    )
    (root / "attempt_0" / "1" / "stderr.log").write_bytes(oom_log.read_bytes())


def test_a_directory_is_read_recursively(runner: CliRunner, oom_log: Path, tmp_path: Path) -> None:
    job = tmp_path / "job"
    _job_tree(job, oom_log)
    result = runner.invoke(main, ["explain", "--format", "json", str(job)])
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    names = [i["name"] for i in report["inputs"]]
    assert names == [
        str(job / "attempt_0" / "0" / "stderr.log"),
        str(job / "attempt_0" / "1" / "stderr.log"),
    ]
    assert report["diagnoses"][0]["cause"] == "gpu_oom"


def test_a_recursive_glob_is_expanded(runner: CliRunner, oom_log: Path, tmp_path: Path) -> None:
    job = tmp_path / "job"
    _job_tree(job, oom_log)
    pattern = str(job / "**" / "*.log")
    result = runner.invoke(main, ["explain", "--format", "json", pattern])
    assert result.exit_code == 0, result.stderr
    assert len(json.loads(result.stdout)["inputs"]) == 2
    nothing = runner.invoke(main, ["explain", str(job / "**" / "*.txt")])
    assert nothing.exit_code == 2
    assert "no file matches" in nothing.stderr


def test_diagnose_takes_log_files_as_arguments(runner: CliRunner, oom_log: Path) -> None:
    snapshot = Path(__file__).parent / "snapshot" / "fixtures" / "healthy-8xh100.json"
    args = ["diagnose", "--snapshot", str(snapshot), "--format", "json", str(oom_log)]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["diagnoses"][0]["cause"] == "gpu_oom"


def test_markdown_redacts(runner: CliRunner, tmp_path: Path) -> None:
    log = tmp_path / "t.log"
    log.write_text(f'File "/home/alice/train.py", line 9\n{OOM_LINE}')
    result = runner.invoke(main, ["explain", "--format", "markdown", str(log)])
    assert result.exit_code == 0
    assert result.stdout.startswith("## gpudoctor report")


def test_user_rules_are_added(runner: CliRunner, tmp_path: Path) -> None:
    examples = Path(__file__).parents[1] / "examples" / "rules"
    log = tmp_path / "t.log"
    log.write_text("saving checkpoint\nOSError: [Errno 28] No space left on device\n")
    plain = runner.invoke(main, ["explain", "--format", "json", str(log)])
    assert "warn-checkpoint-disk-full" not in plain.stdout
    result = runner.invoke(
        main, ["explain", "--rules", str(examples), "--format", "json", str(log)]
    )
    assert result.exit_code == 0
    first = json.loads(result.stdout)["diagnoses"][0]
    assert first["rule"] == "warn-checkpoint-disk-full"
    assert first["evidence"][0]["line"] == 2


def test_invalid_user_rules_exit_2_with_locations(runner: CliRunner, tmp_path: Path) -> None:
    log = tmp_path / "t.log"
    log.write_text("x\n")
    result = runner.invoke(main, ["explain", "--rules", str(FIXTURES / "bad_rules"), str(log)])
    assert result.exit_code == 2
    assert f"{FIXTURES / 'bad_rules' / 'unknown-key.yaml'}:4:1: unknown key" in result.stderr
    assert result.stdout == ""


def test_rules_list_and_show(runner: CliRunner) -> None:
    listed = runner.invoke(main, ["rules", "list"])
    assert listed.exit_code == 0
    assert "torch-cuda-oom" in listed.stdout
    shown = runner.invoke(main, ["rules", "show", "torch-cuda-oom"])
    assert shown.exit_code == 0
    assert "id: torch-cuda-oom" in shown.stdout
    missing = runner.invoke(main, ["rules", "show", "torch-cuda-oomm"])
    assert missing.exit_code == 2
    assert "did you mean: torch-cuda-oom" in missing.stderr


def test_rules_lint(runner: CliRunner) -> None:
    bad = runner.invoke(main, ["rules", "lint", str(FIXTURES / "bad_rules")])
    assert bad.exit_code == 2
    assert "unknown-key.yaml:4:1: error: unknown key" in bad.stdout
    good = runner.invoke(main, ["rules", "lint", str(RANKING_RULES)])
    assert good.exit_code == 0
    assert "10 rules checked: 0 errors" in good.stdout


def test_rules_test_runs_examples(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(main, ["rules", "test", str(RANKING_RULES)])
    assert result.exit_code == 0
    assert result.stdout.strip().endswith("20 passed, 0 failed")
    broken = tmp_path / "t-killed.yaml"
    broken.write_text(
        (RANKING_RULES / "t-killed.yaml")
        .read_text()
        .replace("no_match: ['Killed process 12']", "no_match: ['Killed']")
    )
    failed = runner.invoke(main, ["rules", "test", str(broken)])
    assert failed.exit_code == 1
    assert "FAIL" in failed.stdout
    assert "t-killed should not fire on: Killed" in failed.stdout


def test_rules_test_fails_a_summary_that_prints_a_value_as_unknown(
    runner: CliRunner, tmp_path: Path
) -> None:
    rule = (RANKING_RULES / "t-killed.yaml").read_text()
    named = rule.replace(
        "    regex: '^Killed$'",
        "    regex: '^Killed(?: pid (?P<pid>\\d+))?$'\n    captures: {pid: int}",
    ).replace("summary: The process was killed.", "summary: 'Process {pid} was killed.'")
    named = named.replace("match: ['Killed']", "match: ['Killed pid 31']")
    (tmp_path / "t-killed.yaml").write_text(named)
    assert runner.invoke(main, ["rules", "test", str(tmp_path / "t-killed.yaml")]).exit_code == 0

    (tmp_path / "t-killed.yaml").write_text(
        named.replace("match: ['Killed pid 31']", "match: ['Killed']")
    )
    failed = runner.invoke(main, ["rules", "test", str(tmp_path / "t-killed.yaml")])
    assert failed.exit_code == 1
    assert "t-killed should fire on: Killed (its summary prints pid as unknown)" in failed.stdout


def test_lint_one_bundled_file_is_not_a_duplicate(runner: CliRunner) -> None:
    from gpudoctor.rulebook.files import bundled_rules_dir

    target = bundled_rules_dir() / "torch-cuda-oom.yaml"
    relative = os.path.relpath(target)
    result = runner.invoke(main, ["rules", "lint", relative])
    assert result.exit_code == 0, result.output
    assert "1 rule checked: 0 errors" in result.stdout


def test_forced_colour_survives_a_pipe(runner: CliRunner, oom_log: Path) -> None:
    coloured = runner.invoke(main, ["explain", "--color", str(oom_log)])
    assert "\x1b[" in coloured.stdout
    plain = runner.invoke(main, ["explain", "--no-color", str(oom_log)])
    assert "\x1b[" not in plain.stdout


def test_rules_show_of_a_catalogue_rule_shows_that_rule_only() -> None:
    result = CliRunner().invoke(main, ["rules", "show", "nvidia-xid-79"])
    assert result.exit_code == 0
    assert result.stdout.startswith("# generated from an entry of the catalogue ")
    assert "id: nvidia-xid-79\n" in result.stdout
    assert "nvidia-xid-13" not in result.stdout  # not the whole catalogue
