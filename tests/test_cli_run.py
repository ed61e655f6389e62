"""``gpudoctor run -- CMD`` with real child processes, and ``explain --exit-code/--signal``.

No GPU is needed: the ``healthy-8xh100`` scenario feeds the sampler and the snapshot, and one
test injects a GPU probe whose memory grows. Each child is a short Python one-liner.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner

from gpudoctor.cli.app import main
from gpudoctor.pipeline import LogInput, diagnose
from gpudoctor.report import GpuReading
from gpudoctor.rulebook.book import load_rulebook
from gpudoctor.runner.child import TRIM_FROM
from gpudoctor.runner.exit_status import exit_facts
from gpudoctor.runner.job import JobSettings, run_job
from gpudoctor.runner.timeline import timeline_facts

GIB = 1 << 30
PY = sys.executable
OOM_LINE = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB. GPU 0 has a total "
    "capacity of 79.19 GiB of which 1.06 GiB is free. Of the allocated memory 74.02 GiB is "
    "allocated by PyTorch, and 1.87 GiB is reserved by PyTorch but unallocated."
)


def _env() -> dict[str, str]:
    return {**os.environ, "GPUDOCTOR_FAKE_NVML": "healthy-8xh100", "NO_COLOR": "1"}


def _run(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PY, "-m", "gpudoctor", "run", "--interval", "0.1", *args],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=timeout,
    )


def test_success_passes_output_and_code_through_and_prints_nothing_of_its_own() -> None:
    done = _run("--", PY, "-c", "import sys; print('step 1'); print('warn', file=sys.stderr)")
    assert done.returncode == 0
    assert done.stdout == "step 1\n"
    assert done.stderr == "warn\n"


def test_verbose_success_gives_one_line() -> None:
    done = _run("-v", "--", PY, "-c", "pass")
    assert done.returncode == 0
    assert done.stderr.count("\n") == 1
    assert "exited with 0" in done.stderr


def test_a_failing_exit_code_is_passed_through_and_diagnosed() -> None:
    done = _run("--", PY, "-c", "import sys; sys.exit(5)")
    assert done.returncode == 5
    assert "exited with 5" in done.stderr
    assert "[app_exception, fallback]" in done.stderr
    assert "exited with code 5 (reported by gpudoctor run)" in done.stderr


def test_a_pytorch_oom_is_diagnosed_after_the_output(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    log = tmp_path / "job.log"
    code = f"import sys; print('epoch 1'); print({OOM_LINE!r}, file=sys.stderr); sys.exit(1)"
    done = _run("--report", str(report), "--log", str(log), "--", PY, "-c", code)
    assert done.returncode == 1
    assert done.stdout == "epoch 1\n"
    assert done.stderr.startswith(OOM_LINE + "\n")
    diagnosis = done.stderr[len(OOM_LINE) :]
    assert "#1 PyTorch ran out of GPU memory  [gpu_oom, root]" in diagnosis
    assert log.read_text() == f"epoch 1\n{OOM_LINE}\n" or log.read_text() == (
        f"{OOM_LINE}\nepoch 1\n"
    )
    data = json.loads(report.read_text())
    assert data["diagnoses"][0]["cause"] == "gpu_oom"
    assert data["facts"]["exit_code"] == 1
    assert data["facts"]["exit_reporter"] == "gpudoctor run"
    assert data["facts"]["run_gpu_sampled"] is True
    assert data["facts"]["run_gpu_memory_total_bytes"] > 0
    assert data["timeline"]
    assert len(data["timeline"][0]["gpus"]) == 8


def test_a_markdown_report_shows_the_timeline_as_a_chart(tmp_path: Path) -> None:
    report = tmp_path / "report.md"
    code = f"import sys, time; time.sleep(0.5); print({OOM_LINE!r}); sys.exit(1)"
    done = _run("--report", str(report), "--", PY, "-c", code)
    assert done.returncode == 1
    text = report.read_text()
    assert text.startswith("## gpudoctor report")
    assert "### Timeline" in text
    chart = text.split("### Timeline")[1]
    assert [f"GPU {n} memory" in chart for n in range(8)] == [True] * 8


def test_a_child_killed_by_sigkill_exits_137_and_is_named() -> None:
    done = _run("--", PY, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    assert done.returncode == 137
    assert "killed by SIGKILL (exit 137)" in done.stderr
    assert "[host_oom, fallback]" in done.stderr


def test_a_segfault_exits_139_and_is_named() -> None:
    done = _run("--", PY, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)")
    assert done.returncode == 139
    assert "SIGSEGV" in done.stderr
    assert "[segfault_native, fallback]" in done.stderr


def test_a_missing_command_exits_127() -> None:
    done = _run("--", "gpudoctor-no-such-command-here")
    assert done.returncode == 127
    assert "command not found" in done.stderr


_WAITS_FOR_SIGINT = """
import signal, sys, time
def stop(number, frame):
    print("child got SIGINT", flush=True)
    sys.exit(3)
signal.signal(signal.SIGINT, stop)
print("ready", flush=True)
time.sleep(20)
"""

_IGNORES_SIGINT = """
import signal, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
print("ready", flush=True)
time.sleep(20)
"""


def _start(code: str) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [PY, "-m", "gpudoctor", "run", "--interval", "0.1", "--", PY, "-c", code],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    assert process.stdout is not None
    assert process.stdout.readline() == "ready\n"
    return process


def test_ctrl_c_is_forwarded_to_the_child() -> None:
    process = _start(_WAITS_FOR_SIGINT)
    process.send_signal(signal.SIGINT)
    out, _err = process.communicate(timeout=15)
    assert out == "child got SIGINT\n"
    assert process.returncode == 3


def test_a_second_ctrl_c_kills_a_child_that_ignores_the_first() -> None:
    process = _start(_IGNORES_SIGINT)
    process.send_signal(signal.SIGINT)
    time.sleep(0.3)
    assert process.poll() is None  # the first Ctrl-C was ignored by the child
    process.send_signal(signal.SIGINT)
    process.communicate(timeout=15)
    assert process.returncode == 137


def test_a_leftover_grandchild_is_not_orphaned(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    code = (
        "import subprocess, sys; "
        f"p = subprocess.Popen([{PY!r}, '-c', 'import time; time.sleep(30)']); "
        f"open({str(pid_file)!r}, 'w').write(str(p.pid)); sys.exit(2)"
    )
    done = _run("--", PY, "-c", code)
    assert done.returncode == 2
    grandchild = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _alive(grandchild):
        time.sleep(0.05)
    assert not _alive(grandchild)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ")[1][0] != "Z"
    except FileNotFoundError:
        return False


def test_a_chatty_child_is_kept_in_bounded_memory() -> None:
    code = "import sys\nfor i in range(10**6): sys.stdout.write(f'line {i}\\n')"
    with open(os.devnull, "wb") as sink:
        outcome = run_job(
            [PY, "-c", code],
            JobSettings(interval=0, keep_lines=100),
            out_fds=(sink.fileno(), sink.fileno()),
        )
    assert outcome.exit.exit_code == 0
    assert outcome.kept.bytes_seen == sum(len(f"line {i}\n") for i in range(10**6))
    assert outcome.kept.held_bytes < 2 * TRIM_FROM  # of about 6.9 MB printed
    lines = outcome.kept.text().splitlines()
    assert lines[-1] == "line 999999"
    assert len(lines) == 100


class _GrowingGpu:
    """A GPU whose memory in use rises by 1 GiB at every reading."""

    def __init__(self) -> None:
        self.readings = 0

    def read(self) -> tuple[GpuReading, ...]:
        self.readings += 1
        used = (4 + self.readings) * GIB
        return (GpuReading(0, used, 80 * GIB, 95, 66, 310.0, ()),)


def test_memory_growing_in_the_sampler_names_a_leak_from_the_timeline_alone() -> None:
    code = f"import sys, time; time.sleep(1.0); print({OOM_LINE!r}); sys.exit(1)"
    probe = _GrowingGpu()
    with open(os.devnull, "wb") as sink:
        outcome = run_job(
            [PY, "-c", code],
            JobSettings(interval=0.05),
            gpus=probe,
            out_fds=(sink.fileno(), sink.fileno()),
        )
    assert outcome.exit.exit_code == 1
    assert probe.readings >= 8
    ended = outcome.exit
    facts = exit_facts(code=ended.exit_code, reporter="gpudoctor run")
    facts.update(
        timeline_facts(
            outcome.timeline, duration_s=ended.ended_at - ended.started_at, gpu_sampled=True
        )
    )
    assert facts["run_gpu_memory_growing"] is True
    book = load_rulebook([], examples=False)
    logs = [LogInput.from_text("job", outcome.kept.text())]
    assert diagnose(book, logs).causes[0].cause == "gpu_oom"  # the log alone: a plain OOM
    report = diagnose(book, logs, observed_facts=facts)
    assert report.causes[0].rule == "run-gpu-memory-leak"
    assert report.causes[0].cause == "gpu_memory_leak"


def test_explain_takes_the_exit_code_the_user_saw() -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["explain", "--exit-code", "137", "-"], input="epoch 3/10\n")
    assert result.exit_code == 0
    assert "[host_oom, fallback]" in result.output


def test_explain_takes_a_signal_by_name() -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["explain", "--signal", "SEGV", "-"], input="epoch 3/10\n")
    assert "SIGSEGV" in result.output
    refused = runner.invoke(main, ["explain", "--signal", "NOPE", "-"], input="x\n")
    assert refused.exit_code == 2


def test_sigterm_reaches_a_job_that_was_stopped() -> None:
    process = _start(_WAITS_FOR_SIGINT.replace("SIGINT", "SIGTERM"))
    job = _job_of(process.pid)
    try:
        os.kill(job, signal.SIGSTOP)  # someone else stopped it (a debugger, a scheduler)
        time.sleep(0.3)
        process.send_signal(signal.SIGTERM)
        out, _err = process.communicate(timeout=15)
    finally:
        if process.poll() is None:
            os.kill(job, signal.SIGKILL)
            process.kill()
            process.wait()
    assert out == "child got SIGTERM\n"
    assert process.returncode == 3


def _job_of(pid: int) -> int:
    """The pid of gpudoctor's child (the job), once it has started."""
    with open(f"/proc/{pid}/task/{pid}/children") as children:
        return int(children.read().split()[0])
