"""Facts read from the lines that report how a process ended, and the signal fallbacks."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from gpudoctor.logs.reader import InputStats, read_blocks
from gpudoctor.logs.scanner import Scanner
from gpudoctor.logs.structure import endings, tracebacks
from gpudoctor.pipeline import explain_text
from gpudoctor.rulebook.book import load_rulebook


def facts_of(text: str) -> dict[str, object]:
    scanner = Scanner([*endings.PATTERNS, *tracebacks.PATTERNS])
    scanner.scan(read_blocks(io.BytesIO(text.encode()), InputStats(name="t")))
    return endings.facts(scanner.hits)


@pytest.mark.parametrize(
    ("line", "code", "signal", "reporter"),
    [
        ("Killed", None, 9, "shell"),
        ("Loading shards:  40%|████      | 2/5 [00:09<00:13]Killed", None, 9, "shell"),
        ("./train.sh: line 7: 31337 Killed                  python train.py", None, 9, "shell"),
        ("zsh: killed     python train.py --bs 8", None, 9, "shell"),
        ("Speicherzugriffsfehler (Speicherabzug geschrieben)", None, 11, "shell"),
        ("已杀死", None, 9, "shell"),
        ("Processus arrêté", None, 9, "shell"),
        ("Erreur de segmentation (core dumped)", None, 11, "shell"),
        ("Violación de segmento", None, 11, "shell"),
        ("段错误 (核心已转储)", None, 11, "shell"),
        ("run.sh: line 3: 777 Getötet                 python a.py", None, 9, "shell"),
        ("Aborted (core dumped)", None, 6, "shell"),
        # the program's last line had no newline: bash's report is glued to it
        ("Loading weights from /srv/models/enc.binAbandon (core dumped)", None, 6, "shell"),
        ("step 12/900 loss 0.31Speicherzugriffsfehler (Speicherabzug geschrieben)", None, 11,
         "shell"),
        # ... or to a progress report without a newline
        ("[>>>>>      ] 310/900, 2.1 task/s, elapsed: 148s, ETA:   281s已杀死", None, 9, "shell"),
        ("eval 40% ETA: 12sKilled", None, 9, "shell"),
        ("Bus error (core dumped)", None, 7, "shell"),
        ("Illegal instruction", None, 4, "shell"),
        # macOS names the signal with its number (Darwin's strsignal)
        ("./run.sh: line 14: 5120 Killed: 9               python sim.py", None, 9, "shell"),
        ("Segmentation fault: 11", None, 11, "shell"),
        ("Abort trap: 6", None, 6, "shell"),
        ("    exitcode  : -9 (pid: 2211)", -9, 9, "torchrun"),
        ("  traceback : Signal 11 (SIGSEGV) received by PID 2211", None, 11, "torchrun"),
        ("E0101 api.py:1] failed (exitcode: 1) local_rank: 0 (pid: 9) of binary: x", 1, None,
         "torchrun"),
        ("[launch.py:320:sigkill_handler] ... exits with return code = -9", -9, 9, "deepspeed"),
        ("subprocess.CalledProcessError: Command '['python', 'x.py']' returned non-zero exit "
         "status 1.", 1, None, "accelerate"),
        ("Command '['python']' died with <Signals.SIGKILL: 9>.", None, 9, "python"),
        ("Process Process-3: exited with exitcode -11", -11, 11, "python"),
        ("process 2 terminated with signal SIGABRT", None, 6, "python"),
        ("CompletedProcess(args=['x'], returncode=-7)", -7, 7, "python"),
        ("srun: error: gpu-node-04: task 3: Killed", None, 9, "slurm"),
        ("srun: error: gpu-node-04: tasks 0-3: Exited with exit code 2", 2, None, "slurm"),
        ("    Exit Code:    137", 137, 9, "kubernetes"),
        ("Process finished with exit code 139 (interrupted by signal 11: SIGSEGV)", 139, 11,
         "ide"),
        ("error: Uncaught SIGSEGV (SEGV_MAPERR) at 0x40 on box7 pid 90 tid 91", None, 11,
         "cosmopolitan"),
        ("Command exited with non-zero status 2", 2, None, "time"),
        ("Command exited with non-zero status 137", 137, 9, "time"),
        ("job exit code: 134", 134, 6, "process"),
        ("[a1b2-n0-0] terminated with exit code (137). Reason [Error]. Message:", 137, 9,
         "process"),
        ("returned error code -9", -9, 9, "process"),
        ("worker was killed by signal 9", None, 9, "process"),
        ("Error: Shard process was signaled to shutdown with signal 7", None, 7, "process"),
        ("child 4 exited with signal 11", None, 11, "process"),
        ("Loading checkpoint shards:  75%|######    | 6/8 [00:12<00:04,  2.02s/it][1]    5150 "
         "killed     python serve.py", None, 9, "shell"),
        ("Loading checkpoint shards:  88%|########8 | 7/8 [00:21<00:03,  3.05s/it]Killed.", None,
         9, "shell"),
        ("a1b2c3   img:1   \"python x\"   2 hours ago   Exited (137) 3 minutes ago", 137, 9,
         "docker"),
        ("train.service: Main process exited, code=killed, status=9/KILL", None, 9, "systemd"),
        ("mpirun noticed that process rank 2 with PID 0 on node n7 exited on signal 11 "
         "(Segmentation fault).", None, 11, "mpi"),
        ('Thread 1 "python" received signal SIGSEGV, Segmentation fault.', None, 11, "gdb"),
        ("*** SIGSEGV received at time=1712345678 on cpu 3 ***", None, 11, "absl"),
        ("Signal (6) received.", None, 6, "triton"),
        ("Signal 11 caught.", None, 11, "unreal"),
        ("[2026.03.02-09.41.17:208][312]LogLinux: Error: Unhandled Exception: SIGSEGV: invalid "
         "attempt to read memory at address 0x0000000000000010", None, 11, "unreal"),
        # MPI_Abort's number is the program's error code: -1 and 9 are not SIGHUP and SIGKILL
        ("MPICH ERROR [Rank 2] [job id 88.0] [nid0007] - Abort(-1) (rank 2 in comm 0): "
         "MPIDI_init: bad configuration", -1, None, "mpi"),
        ("MPI_ABORT was invoked on rank 3 in communicator MPI_COMM_WORLD with errorcode 9.",
         9, None, "mpi"),
        # hydra's box prints the raw wait status of a process that did not exit: the signal,
        # plus 128 when it dumped core; newer releases name the signal
        ("=   EXIT CODE: 9", 9, 9, "mpi"),
        ("=   EXIT CODE: 139", 139, 11, "mpi"),
        ("=   EXIT CODE: 1", 1, None, "mpi"),
        ("=   KILLED BY SIGNAL: 9 (Killed)", None, 9, "mpi"),
        (" *** caught segfault ***", None, 11, "R"),
        ("``*** caught illegal operation ***", None, 4, "R"),
        ("*** caught bus error ***", None, 7, "R"),
    ],
)  # fmt: skip
def test_endings(line: str, code: int | None, signal: int | None, reporter: str) -> None:
    facts = facts_of(line + "\n")
    assert facts.get("exit_code") == code
    assert facts.get("exit_signal") == signal
    assert facts["exit_reporter"] == reporter
    if signal is not None:
        assert facts["exit_signal_name"] == endings.SIGNALS[signal]


@pytest.mark.parametrize(
    "line",
    [
        "Killed 3 stale workers before restart",
        "num_workers_Killed",
        "RuntimeError: DataLoader worker (pid 7714) is killed by signal: Killed.",
        "Error: retrying",
        "Aborted the download, will retry",
        "cudaGetDevice failed with error code 3",
        "the handler was stopped by a signal handler install",
        "Signal (11) received by the handler in 3 ms",
        "Signal 11 caught by the test harness",
        "Unhandled Exception: ValueError: bad input",
        "=   CLEANING UP REMAINING PROCESSES",
        "*** caught warning: deprecated call ***",
    ],
)
def test_not_endings(line: str) -> None:
    assert facts_of(line + "\n") == {}


def test_schedulers() -> None:
    slurm = facts_of(
        "slurmstepd: error: Detected 2 oom_kill events in StepId=1234.0. Some of your "
        "processes may have been killed by the cgroup out-of-memory handler.\n"
        "srun: error: n-12: task 0: Out Of Memory\n"
    )
    assert slurm["oom_killed"] is True
    assert slurm["exit_reporter"] == "slurm"
    timeout = facts_of("slurmstepd: error: *** JOB 99 ON n-3 CANCELLED AT 2025-01-01T10:00:00 "
                       "DUE TO TIME LIMIT ***\n")  # fmt: skip
    assert timeout["time_limit_hit"] is True
    assert timeout["oom_killed"] is False
    node = facts_of("slurmstepd: error: *** JOB 99 ON n-3 CANCELLED AT 2025-01-01 DUE TO NODE "
                    "FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***\n")  # fmt: skip
    assert node["node_failed"] is True
    killed = facts_of("".join(f"srun: error: n-7: task {t}: Killed\n" for t in (2, 0, 5)))
    assert killed["slurm_tasks_killed"] == 3
    assert killed["exit_signal"] == 9
    mixed = facts_of("srun: error: n-7: task 1: Exited with exit code 2\n"
                     "srun: error: n-7: task 0: Killed\n")  # fmt: skip
    assert mixed["slurm_tasks_killed"] == 1
    exited = facts_of("srun: error: n-7: task 1: Exited with exit code 2\n")
    assert "slurm_tasks_killed" not in exited
    assert facts_of("    Reason:       OOMKilled\n")["oom_killed"] is True
    assert facts_of("The node was low on resource: memory.\n")["oom_killed"] is True
    pressure = facts_of("Message: The node had condition: [DiskPressure, MemoryPressure].\n")
    assert pressure["oom_killed"] is True and pressure["oom_killed_by"] == "kubernetes"
    disk = facts_of("Message: The node had condition: [DiskPressure].\n")
    assert disk.get("oom_killed") is not True


@pytest.mark.parametrize(
    ("line", "killer"),
    [
        ('Error: container create failed: msg="runc create failed: unable to start container '
         'process: container init was OOM-killed (memory limit too low?)"', "docker"),
        ("Jun 03 04:05:06 box systemd[1]: llm.service: Failed with result 'oom-kill'.",
         "systemd"),
        ("Jun 03 04:05:06 box systemd-oomd[602]: Killed /user.slice/app-term.scope due to "
         "memory pressure for /user.slice being 81.00% > 50.00% for > 20s", "systemd"),
        ('Jul 21 18:02:40 ws earlyoom[711]: sending SIGTERM to process 90211 uid 1000 "python3": '
         "oom_score 1190, VmRSS 41210 MiB", "earlyoom"),
        ("job 4410.head exceeded MEM usage hard limit (9000 > 8192)", "pbs"),
        ("TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.", "lsf"),
        ("Container killed by YARN for exceeding physical memory limits. 12.4 GB of 12 GB "
         "physical memory used.", "yarn"),
        ("distributed.nanny - WARNING - Worker exceeded 95% memory budget. Restarting", "dask"),
        ("2026-02-11 09:30:12,118 - distributed.nanny.memory - WARNING - Worker "
         "tcp://10.1.4.22:39017 (pid=5120) exceeded 95% memory budget. Restarting...", "dask"),
    ],
)  # fmt: skip
def test_memory_kills_name_their_killer(line: str, killer: str) -> None:
    facts = facts_of(line + "\n")
    assert facts["oom_killed"] is True
    assert facts["oom_killed_by"] == killer


def test_an_oom_killer_announcing_its_settings_killed_nothing() -> None:
    assert facts_of("earlyoom v1.7: mem total 31 GiB, sending SIGTERM at 10 %\n") == {}
    # Dask's memory monitor warning before the limit is not a restart
    assert (
        facts_of(
            "distributed.worker.memory - WARNING - Worker is at 81% memory usage. Pausing worker.\n"
        )
        == {}
    )


def test_open_mpi_error_code_on_its_own_line() -> None:
    facts = facts_of(
        "MPI_ABORT was invoked on rank 0 in communicator MPI_COMM_WORLD\nwith errorcode 6.\n"
    )
    assert facts["exit_code"] == 6
    assert "exit_signal" not in facts


def test_make_reports_the_recipe_exit_status() -> None:
    facts = facts_of("make: *** [Makefile:12: train] Error 137\n")
    assert facts["exit_code"] == 137 and facts["exit_signal"] == 9
    assert facts["exit_reporter"] == "make"
    assert facts_of("make[2]: *** [sub/all] Error 2\n")["exit_code"] == 2


def test_signal_of_code() -> None:
    assert endings.signal_of_code(137) == 9
    assert endings.signal_of_code(-11) == 11
    assert endings.signal_of_code(134) == 6
    assert endings.signal_of_code(1) is None
    assert endings.signal_of_code(255) is None


def test_the_last_signal_and_code_win() -> None:
    facts = facts_of(
        "    exitcode  : -9 (pid: 10)\nsrun: error: n1: task 0: Exited with exit code 1\n"
    )
    assert facts["exit_signal"] == 9
    assert facts["exit_code"] == 1
    assert facts["exit_reporter"] == "torchrun"


# The fallbacks, through the whole pipeline with the bundled rules.


def causes(text: str) -> list[tuple[str, str, float]]:
    report = explain_text(text, load_rulebook())
    return [(d.rule, d.cause, d.confidence) for d in report.causes]


def test_localised_killed_gets_a_diagnosis() -> None:
    found = causes("step 900 loss 2.1\nWriting metrics to out/metrics.jsonl\nGetötet\n")
    assert found[0][:2] == ("fallback-killed-by-signal", "host_oom")
    assert found[0][2] < 0.5


def test_localised_segfault_gets_a_diagnosis() -> None:
    found = causes("loading extension...\nNaruszenie ochrony pamięci (zrzut pamięci)\n")
    assert found[0][:2] == ("fallback-crash-signal", "segfault_native")


@pytest.mark.parametrize(
    "line",
    [
        "./run.sh: Zeile 12:  4242 Getötet                 python train.py --bs 64",
        "./train.sh: строка 7:  9001 Убито                   python train.py",
        "./tools/test.sh: 第 13 行： 30517 已杀死 python3 tools/test.py cfg.py",  # noqa: RUF001
    ],
)
def test_a_script_line_in_another_language_gets_the_signal(line: str) -> None:
    # bash translates both the "line N:" before the job and glibc's name of the signal
    found = causes("epoch 3 done\n" + line + "\n")
    assert found[0][:2] == ("fallback-killed-by-signal", "host_oom")


def test_a_core_dump_in_full_width_parentheses_is_read() -> None:
    # zh_CN's bash prints "(core dumped)" in full-width parentheses
    found = causes("loading extension...\n段错误（核心已转储）\n")  # noqa: RUF001
    assert found[0][:2] == ("fallback-crash-signal", "segfault_native")


def test_english_killed_keeps_its_rule() -> None:
    found = causes("epoch 1\nKilled\n")
    assert found[0][0] == "process-sigkill"
    assert not any(rule.startswith("fallback-") for rule, _, _ in found)


def test_slurm_oom_is_host_oom() -> None:
    found = causes(
        "slurmstepd: error: Detected 1 oom_kill event in StepId=77.batch. Some of your "
        "processes may have been killed by the cgroup out-of-memory handler.\n"
    )
    # the generic scheduler reading folds into the Slurm-specific rule of the same cause
    assert found[0][:2] == ("slurm-oom-kill-event", "host_oom")
    assert found[0][2] >= 0.5
    assert len(found) == 1


def test_exit_code_alone() -> None:
    found = causes("srun: error: n-5: task 2: Exited with exit code 1\n")
    assert found[0][0] == "fallback-exit-code"
    assert causes("worker finished, exit code 0\n") == []


@pytest.mark.parametrize(
    ("line", "signal"),
    [
        ("Error: llama runner process has terminated: signal: killed", 9),
        ("runner exited: signal: segmentation fault (core dumped)", 11),
        ("nvidia-container-cli: exit: signal: aborted", 6),
    ],
)
def test_go_exec_signal_words(line: str, signal: int) -> None:
    facts = facts_of(line + "\n")
    assert facts["exit_signal"] == signal
    assert facts["exit_reporter"] == "go"


def test_a_glued_signal_word_needs_the_core_dump_note() -> None:
    # without bash's "(core dumped)" a word inside a program's own text is not an ending
    assert facts_of("request status=Aborted (by the user)\n") == {}


def test_a_word_inside_a_progress_report_is_not_an_ending() -> None:
    assert facts_of("eval 40%| 2/5 ETA: 3s, stage=Killed-early-stop\n") == {}


def test_a_crash_after_the_job_finished_is_not_an_alarm() -> None:
    crash = (
        "Epoch 40/40 loss 0.12\nSaving final model to out/model.pt\n"
        "Segmentation fault (core dumped)\n"
    )
    during = causes(crash)
    assert during[0][1] == "segfault_native"
    assert during[0][2] >= 0.5
    at_exit = causes(crash.replace("Saving final", "Training complete.\nSaving final"))
    assert at_exit[0][1] == "segfault_native"
    assert at_exit[0][2] < 0.5


TEARDOWN_CRASH = (
    Path(__file__).parents[2] / "fixtures" / "tracebacks" / "shutdown-cascade.log"
).read_text()


def test_a_crash_while_shutting_down_after_an_uncaught_exception() -> None:
    assert facts_of(TEARDOWN_CRASH)["crashed_after_exception"] is True
    found = causes(TEARDOWN_CRASH)
    assert found[0][1] == "app_exception"
    assert all(c < 0.4 for _, cause, c in found if cause == "segfault_native")


def test_a_crash_long_after_a_logged_exception_is_the_crash() -> None:
    progress = "".join(f"step {n} loss 0.{n % 97:02d}\n" for n in range(80))
    text = TEARDOWN_CRASH.replace("Exception ignored", progress + "Exception ignored")
    assert facts_of(text)["crashed_after_exception"] is False
    assert causes(text)[0][1] == "segfault_native"


def test_a_launchers_report_of_a_crashed_child_is_not_an_earlier_exception() -> None:
    text = (
        "Traceback (most recent call last):\n"
        '  File "/opt/env/bin/torchrun", line 8, in <module>\n'
        "    sys.exit(main())\n"
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
        "============================================================\n"
        "train.py FAILED\n"
        "Root Cause (first observed failure):\n"
        "[0]:\n"
        "  rank      : 1 (local_rank: 1)\n"
        "  exitcode  : -11 (pid: 5120)\n"
    )
    facts = facts_of(text)
    assert facts["exit_signal"] == 11
    assert facts["crashed_after_exception"] is False
    assert causes(text)[0][1] == "segfault_native"
