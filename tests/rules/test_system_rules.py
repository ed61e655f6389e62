"""System-level rules (host memory, shared memory, DataLoader, NCCL, Xid, NaN, native crashes).

Each fixture in ``tests/fixtures/logs/system/`` is written from the real message formats of
PyTorch, NCCL, the Linux kernel and Jupyter. The tests check which rule ranks first *and which
line it rests on*, because a rule that fires on the wrong line still looks "covered".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor.pipeline import explain_text
from gpudoctor.report import Diagnosis, Report
from gpudoctor.rulebook.book import RuleBook, load_rulebook

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "logs" / "system"
ALARM = 0.5


@pytest.fixture(scope="module")
def book() -> RuleBook:
    return load_rulebook()


def explain(book: RuleBook, name: str) -> Report:
    return explain_text((FIXTURES / name).read_text(encoding="utf-8"), book, name=name)


def find(report: Report, rule_id: str) -> Diagnosis:
    for diagnosis in report.diagnoses:
        if diagnosis.rule == rule_id:
            return diagnosis
    raise AssertionError(f"{rule_id} did not fire: {[d.rule for d in report.diagnoses]}")


def test_rank_oom_outranks_nccl_timeouts_of_the_other_ranks(book: RuleBook) -> None:
    report = explain(book, "nccl-timeouts-after-rank-oom.log")
    top = report.causes[0]
    assert top.cause == "gpu_oom"
    assert "CUDA out of memory. Tried to allocate 1.95 GiB" in top.evidence[0].text
    timeout = find(report, "nccl-watchdog-timeout")
    assert timeout.explained_by, "the watchdog timeouts are a cascade of the OOM"
    assert timeout.rank > top.rank
    assert "[Rank 0] Watchdog caught collective operation timeout" in timeout.evidence[0].text
    # torchrun's summary is the same failure (nccl_failure): merged into the timeout's evidence
    assert "torchelastic-child-failed" not in [d.rule for d in report.diagnoses]
    assert any("ChildFailedError" in e.text for e in timeout.evidence)
    # the watchdog's abort is a consequence too
    assert find(report, "native-abort").explained_by


def test_segfault_on_one_rank_outranks_the_timeouts(book: RuleBook) -> None:
    report = explain(book, "segfault-rank-then-timeouts.log")
    top = report.causes[0]
    assert top.rule == "process-segfault"
    assert "exitcode  : -11" in top.evidence[0].text
    assert "process-segfault" in find(report, "nccl-watchdog-timeout").explained_by


def test_killed_with_kernel_oom_line_is_confirmed_host_oom(book: RuleBook) -> None:
    report = explain(book, "killed-then-dmesg.log")
    top = report.causes[0]
    assert top.rule == "process-sigkill"
    assert top.cause == "host_oom"
    assert top.evidence[0].text == "Killed"
    assert any("Out of memory: Killed process 90210" in e.text for e in top.evidence)
    assert top.confidence >= 0.8  # the kernel's line confirms the bare "Killed"
    assert top.facts.get("pid") == 90210
    assert all(d.rule != "linux-oom-killer" for d in report.diagnoses)  # merged, not repeated


def test_bare_killed_alone_is_a_lower_confidence_host_oom(book: RuleBook) -> None:
    report = explain_text("epoch 1 step 10 loss 2.31\nKilled\n", book)
    top = report.causes[0]
    assert (top.rule, top.cause) == ("process-sigkill", "host_oom")
    assert 0.5 <= top.confidence < 0.8


def test_bus_error_in_worker_is_shared_memory_not_host_oom(book: RuleBook) -> None:
    report = explain(book, "dataloader-bus-error.log")
    top = report.causes[0]
    assert (top.rule, top.cause) == ("dataloader-worker-bus-error", "shm_exhausted")
    assert "Unexpected bus error encountered in worker" in top.evidence[0].text
    assert any("killed by signal: Bus error" in e.text for e in top.evidence)
    assert "dataloader-worker-bus-error" in find(report, "dataloader-worker-exited").explained_by
    assert all(d.cause != "host_oom" for d in report.diagnoses)


def test_jupyter_death_with_oom_kill_is_host_oom(book: RuleBook) -> None:
    report = explain(book, "jupyter-died-host-oom.log")
    top = report.causes[0]
    assert (top.rule, top.cause) == ("linux-oom-killer", "host_oom")
    assert "Memory cgroup out of memory: Killed process 41207 (python)" in top.evidence[0].text
    died = find(report, "jupyter-kernel-died")
    assert died.explained_by == ("linux-oom-killer",)
    assert "restarting kernel (1/5)" in died.evidence[0].text


def test_jupyter_death_alone_is_the_diagnosis(book: RuleBook) -> None:
    text = "The kernel appears to have died. It will restart automatically.\n"
    top = explain_text(text, book).causes[0]
    assert (top.rule, top.cause) == ("jupyter-kernel-died", "jupyter_kernel_died")


def test_nan_loss_explains_the_later_device_assert(book: RuleBook) -> None:
    report = explain(book, "nan-then-device-assert.log")
    top = report.causes[0]
    assert top.cause == "nan_blowup"
    assert top.evidence[0].text == "epoch 4 iter 320 | loss: nan | lr 0.0100"
    for diagnosis in report.causes:
        if diagnosis.cause == "device_side_assert":
            assert diagnosis.explained_by and diagnosis.rank > top.rank


def test_dataloader_application_exception_is_not_a_worker_crash(book: RuleBook) -> None:
    report = explain(book, "dataloader-app-exception.log")
    alarms = [d for d in report.causes if d.cause != "app_exception" and d.confidence >= ALARM]
    assert alarms == []
    assert all(d.cause != "dataloader_worker_crash" for d in report.diagnoses)


def test_healthy_run_with_routine_overflow_and_nccl_info_is_quiet(book: RuleBook) -> None:
    report = explain(book, "healthy-fp16-nccl.log")
    assert [d.rule for d in report.causes] == []


@pytest.mark.parametrize(
    ("text", "rule", "cause"),
    [
        (
            "Exception: Current loss scale already at minimum - cannot decrease scale anymore.",
            "fp16-loss-scale-collapse",
            "nan_blowup",
        ),
        (
            "RuntimeError: Too many open files. Communication with the workers is no longer "
            "possible. Please increase the limit using `ulimit -n` in the shell",
            "too-many-open-files",
            "fd_limit_exhausted",
        ),
        ("RuntimeError: received 0 items of ancdata", "too-many-open-files", "fd_limit_exhausted"),
        (
            "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with "
            "multiprocessing, you must use the 'spawn' start method",
            "cuda-reinit-forked-subprocess",
            "fork_cuda_reinit",
        ),
        (
            "NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, name=python, GPU has fallen off the bus.",
            "nvrm-gpu-fallen-off-bus",
            "xid_hardware",
        ),
        (
            "NVRM: Xid (PCI:0000:01:00): 95, pid=7062, Uncontained: FBHUB. RST: Yes, D-RST: No",
            "nvrm-xid-memory-error",
            "xid_hardware",
        ),
        (
            "node1:99:99 [0] NCCL WARN Bootstrap : no socket interface found",
            "nccl-network-interface",
            "nccl_failure",
        ),
        (
            "include/shm.h:48 NCCL WARN Error while creating shared memory segment "
            "nccl-shm-recv-1a2b-0-1-3 (size 9637888)",
            "nccl-shm-segment-failed",
            "shm_exhausted",
        ),
        (
            "Process finished with exit code -1073741819 (0xC0000005)",
            "process-segfault",
            "segfault_native",
        ),
        (
            "            HW Power Brake Slowdown       : Active",
            "gpu-thermal-power",
            "thermal_power",
        ),
    ],
)
def test_single_message_formats(book: RuleBook, text: str, rule: str, cause: str) -> None:
    top = explain_text(text + "\n", book).causes[0]
    assert (top.rule, top.cause) == (rule, cause)
    assert top.evidence[0].text == text


def test_xid_13_is_an_application_fault_not_hardware(book: RuleBook) -> None:
    text = (
        "NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp "
        "Exception on (GPC 7, TPC 7, SM 0): Out Of Range Address\n"
    )
    report = explain_text(text, book)
    assert [d.cause for d in report.causes] == ["illegal_memory_access"]
    assert report.causes[0].confidence < ALARM + 0.1


def test_routine_loss_scale_reduction_is_not_a_blowup(book: RuleBook) -> None:
    text = "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0\n"
    assert explain_text(text, book).causes == ()
