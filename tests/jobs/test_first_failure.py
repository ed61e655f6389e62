"""A whole job read as one: the first failure first, its consequences collapsed, hangs named."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from gpudoctor.pipeline import LogInput, diagnose
from gpudoctor.render.markdown import render_markdown
from gpudoctor.render.text import render_text
from gpudoctor.report import Report
from gpudoctor.rulebook.book import RuleBook, load_rulebook

sys.path.insert(0, str(Path(__file__).parent))
import joblogs

WATCHDOG = "nccl-watchdog-timeout"


@pytest.fixture(scope="module")
def book() -> RuleBook:
    return load_rulebook(())


def explain(book: RuleBook, files: list[Path]) -> Report:
    return diagnose(book, [LogInput.from_path(f) for f in files])


def by_rule(report: Report, rule: str):  # type: ignore[no-untyped-def]
    return next(d for d in report.diagnoses if d.rule == rule)


def test_one_ranks_oom_among_63_timeouts(book: RuleBook, tmp_path: Path) -> None:
    report = explain(book, joblogs.oom_among_timeouts(tmp_path, ranks=64, culprit=3))
    first = report.diagnoses[0]
    assert (first.cause, first.ranks) == ("gpu_oom", (3,))
    timeouts = by_rule(report, WATCHDOG)
    assert timeouts.ranks == tuple(r for r in range(64) if r != 3)
    assert timeouts.consequence_of == first.rule
    assert report.job is not None
    assert report.job.ranks == tuple(range(64))
    failure = report.job.first_failure
    assert failure is not None
    assert (failure.rule, failure.rank, failure.how) == (first.rule, 3, "earliest")
    assert failure.source is not None and failure.source.endswith("rank3.log")

    text = render_text(report, 100).plain()
    assert "First failure: rank 3, #1 PyTorch ran out of GPU memory" in text
    assert (
        f"#{timeouts.rank} 63 ranks: A NCCL collective timed out (ProcessGroupNCCL watchdog), "
        "a consequence of rank 3's failure, #1 PyTorch ran out of GPU memory"
    ) in " ".join(text.split())
    # collapsed: none of the timeout's evidence or fix steps is printed
    assert "Watchdog caught collective operation timeout" not in text

    markdown = render_markdown(report)
    assert "63 ranks: A NCCL collective timed out" in markdown
    assert markdown.count("### ") == 1  # one section: the root cause


def test_json_says_where_findings_came_from(book: RuleBook, tmp_path: Path) -> None:
    report = explain(book, joblogs.oom_among_timeouts(tmp_path, ranks=8, culprit=6))
    data = json.loads(json.dumps(report.to_dict()))
    assert data["job"]["first_failure"]["rank"] == 6
    assert data["job"]["ranks"] == list(range(8))
    assert data["job"]["hang"] is False
    assert data["diagnoses"][0]["ranks"] == [6]
    timeouts = next(d for d in data["diagnoses"] if d["rule"] == WATCHDOG)
    assert timeouts["ranks"] == [0, 1, 2, 3, 4, 5, 7]
    assert timeouts["consequence_of"] == data["diagnoses"][0]["rule"]


def test_xid_on_one_node_outranks_the_timeouts_on_another(book: RuleBook, tmp_path: Path) -> None:
    files = [
        joblogs.write(tmp_path / "gpu-node-01" / f"rank{r}.log", joblogs.watchdog_timeout(r))
        for r in range(8)
    ]
    files.append(
        joblogs.write(tmp_path / "gpu-node-02" / "kern.log", joblogs.xid_kernel_log("gpu-node-02"))
    )
    report = explain(book, files)
    first = report.diagnoses[0]
    assert first.cause == "xid_hardware"
    assert first.nodes == ("gpu-node-02",)
    timeouts = by_rule(report, WATCHDOG)
    assert timeouts.nodes == ("gpu-node-01",)
    assert timeouts.ranks == tuple(range(8))
    assert timeouts.consequence_of == first.rule
    assert report.job is not None and report.job.first_failure is not None
    assert report.job.first_failure.node == "gpu-node-02"
    assert report.job.first_failure.time == "11-26 14:01:58.000"
    assert report.job.nodes == ("gpu-node-01", "gpu-node-02")
    text = " ".join(render_text(report, 100).plain().split())
    assert "8 ranks on gpu-node-01: A NCCL collective timed out" in text
    assert "a consequence of node gpu-node-02's failure" in text


def test_hang_names_the_rank_that_never_arrived(book: RuleBook, tmp_path: Path) -> None:
    files = []
    for rank in range(8):
        lines = joblogs.training(rank, steps=5)
        if rank != 5:
            lines += joblogs.watchdog_timeout(rank)
        files.append(joblogs.write(tmp_path / f"rank{rank}.log", lines))
    report = explain(book, files)
    job = report.job
    assert job is not None
    assert job.hang
    assert job.timed_out == (0, 1, 2, 3, 4, 6, 7)
    assert job.missing == (5,)
    assert job.first_failure is not None
    assert (job.first_failure.rank, job.first_failure.how) == (5, "missing")
    assert job.first_failure.source == str(tmp_path / "rank5.log")
    assert not any(d.consequence_of for d in report.diagnoses)
    text = " ".join(render_text(report, 200).plain().split())
    assert (
        "Hang or desync: 7 ranks timed out in a collective and none failed first; "
        f"rank 5 never reached it; its log ends where it stopped: {tmp_path / 'rank5.log'}."
    ) in text


def test_hang_takes_the_desync_reports_ranks(book: RuleBook, tmp_path: Path) -> None:
    files = []
    for rank in range(4):
        lines = joblogs.watchdog_timeout(rank)
        if rank == 0:
            lines.append(
                joblogs.glog(
                    0,
                    "E",
                    12,
                    41,
                    "[PG ID 0 PG GUID 0(default_pg) Rank 0] \t - To our best knowledge, ranks "
                    "[2] are the lagging ranks that caused this timeout. They never joined any "
                    "collectives",
                )
            )
        files.append(joblogs.write(tmp_path / f"rank{rank}.log", lines))
    report = explain(book, files)
    assert report.job is not None and report.job.first_failure is not None
    assert report.job.hang
    assert (report.job.first_failure.how, report.job.first_failure.rank) == ("desync", 2)
    assert report.job.missing == (2,)


def test_every_rank_timed_out_and_none_missing(book: RuleBook, tmp_path: Path) -> None:
    files = [
        joblogs.write(tmp_path / f"rank{r}.log", joblogs.watchdog_timeout(r)) for r in range(4)
    ]
    report = explain(book, files)
    assert report.job is not None
    assert report.job.hang and report.job.missing == () and report.job.first_failure is None


def test_srun_labels_in_one_file(book: RuleBook, tmp_path: Path) -> None:
    lines = []
    for rank in range(16):
        lines += [f"{rank:>2}: {line}" for line in joblogs.training(rank, steps=1)]
    for rank in range(16):
        if rank == 9:
            lines += [f"{rank:>2}: {line}" for line in joblogs.cuda_oom(rank, gpu=1)]
        else:
            lines += [f"{rank:>2}: {line}" for line in joblogs.watchdog_timeout(rank)]
    report = explain(book, [joblogs.write(tmp_path / "slurm-77120.out", lines)])
    assert report.diagnoses[0].ranks == (9,)
    assert by_rule(report, WATCHDOG).ranks == tuple(r for r in range(16) if r != 9)
    assert report.job is not None and report.job.first_failure is not None
    assert report.job.first_failure.rank == 9


def test_torchrun_log_dir_tree(book: RuleBook, tmp_path: Path) -> None:
    run = tmp_path / "logs" / "8812_k2j3" / "attempt_0"
    files = []
    for local in range(4):
        if local == 2:
            lines = [line.split("]: ", 1)[1] for line in joblogs.cuda_oom(local, gpu=2)]
        else:
            lines = [
                f"[E ProcessGroupNCCL.cpp:475] [Rank {local}] Watchdog caught collective "
                f"operation timeout: WorkNCCL(SeqNum=77, OpType=BROADCAST, Timeout(ms)=600000) "
                "ran for 600311 milliseconds before timing out."
            ]
        files.append(joblogs.write(run / str(local) / "stderr.log", lines))
        files.append(joblogs.write(run / str(local) / "stdout.log", ["epoch 1"]))
    report = explain(book, files)
    assert report.diagnoses[0].cause == "gpu_oom"
    assert report.diagnoses[0].ranks == (2,)
    assert by_rule(report, WATCHDOG).ranks == (0, 1, 3)


def test_the_rank_torchrun_names_wins_over_the_earliest_line(
    book: RuleBook, tmp_path: Path
) -> None:
    files = [
        joblogs.write(tmp_path / "rank2.log", joblogs.illegal_access(2, minute=5, second=0)),
        joblogs.write(tmp_path / "rank5.log", joblogs.cuda_oom(5, gpu=5)),
        joblogs.write(tmp_path / "agent.log", joblogs.elastic_root_cause(5, "gpu-node-01")),
    ]
    report = explain(book, files)
    assert report.job is not None and report.job.first_failure is not None
    assert report.job.first_failure.how == "launcher"
    assert report.job.first_failure.rank == 5
    assert report.diagnoses[0].cause == "gpu_oom"
    assert [d.rank for d in report.diagnoses] == list(range(1, len(report.diagnoses) + 1))


def test_without_a_pointer_the_earliest_root_comes_first(book: RuleBook, tmp_path: Path) -> None:
    oom = joblogs.cuda_oom(5, gpu=5)[-1].split("]: ", 1)[1]
    files = [  # read first, but written later
        joblogs.write(tmp_path / "rank5.log", [f"2026-11-26 14:09:00,120 ERROR train: {oom}"]),
        joblogs.write(
            tmp_path / "rank2.log",
            [
                joblogs.glog(
                    2,
                    "E",
                    5,
                    0,
                    "[PG ID 0 PG GUID 0(default_pg) Rank 2] Process group watchdog thread "
                    "terminated with exception: CUDA error: an illegal memory access was "
                    "encountered",
                )
            ],
        ),
    ]
    report = explain(book, files)
    assert report.job is not None and report.job.first_failure is not None
    assert report.job.first_failure.how == "earliest"
    assert report.job.first_failure.rank == 2
    assert report.job.first_failure.time == "11-26 14:05:00.002"
    assert report.diagnoses[0].cause == "illegal_memory_access"


def test_a_single_process_log_is_left_as_it_was(book: RuleBook, tmp_path: Path) -> None:
    lines = [line.split("]: ", 1)[1] for line in joblogs.cuda_oom(0, gpu=0)]
    report = explain(book, [joblogs.write(tmp_path / "train.log", lines)])
    assert report.job is None
    assert report.diagnoses[0].ranks == ()
    assert "job" not in report.to_dict()
    assert "ranks" not in report.to_dict()["diagnoses"][0]  # type: ignore[index]


def test_a_traceback_without_timestamps_is_placed_after_its_last_progress_line(
    book: RuleBook, tmp_path: Path
) -> None:
    # rank 5's log is read first, but its last progress line (and so its crash) comes later
    files = [
        joblogs.write(
            tmp_path / "rank5.log",
            [joblogs.progress(5, 9, 0, 900), *joblogs.cuda_oom(5, gpu=5)],
        ),
        joblogs.write(
            tmp_path / "rank2.log",
            [
                joblogs.progress(2, 5, 0, 500),
                "[rank2]: torch.AcceleratorError: CUDA error: an illegal memory access was "
                "encountered",
            ],
        ),
    ]
    report = explain(book, files)
    assert report.job is not None and report.job.first_failure is not None
    assert (report.job.first_failure.how, report.job.first_failure.rank) == ("earliest", 2)
    assert report.job.first_failure.time is None  # its own line has no timestamp
    assert report.diagnoses[0].cause == "illegal_memory_access"
    files.reverse()  # input order does not decide
    assert explain(book, files).diagnoses[0].cause == "illegal_memory_access"


def test_nccls_world_size_names_a_rank_that_wrote_nothing(book: RuleBook, tmp_path: Path) -> None:
    lines = []
    for rank in range(8):  # every rank initialised its communicator...
        lines.append(
            f"{rank}: gpu-node-0{rank // 4}:{7100 + rank}:{7200 + rank} [{rank % 4}] NCCL INFO "
            f"comm 0x5f{rank:02d}a0 rank {rank} nranks 8 cudaDev {rank % 4} busId 1b000 - "
            "Init COMPLETE"
        )
    for rank in range(7):  # ...but rank 7 never wrote again
        lines += [f"{rank}: {line}" for line in joblogs.watchdog_timeout(rank)]
    report = explain(book, [joblogs.write(tmp_path / "job.out", lines)])
    job = report.job
    assert job is not None
    assert job.world_size == 8
    assert job.hang and job.missing == (7,)
    assert job.nodes == ("gpu-node-00", "gpu-node-01")


def test_monitored_barrier_names_the_ranks_that_failed_to_arrive(
    book: RuleBook, tmp_path: Path
) -> None:
    files = [
        joblogs.write(tmp_path / f"rank{r}.log", joblogs.watchdog_timeout(r)) for r in range(4)
    ]
    files.append(
        joblogs.write(
            tmp_path / "rank0-barrier.log",
            [
                "[rank0]: RuntimeError: [Rank 0]: Ranks 1, 3 failed to pass monitoredBarrier in "
                "1800000 ms"
            ],
        )
    )
    report = explain(book, files)
    assert report.job is not None and report.job.first_failure is not None
    assert report.job.first_failure.how == "desync"
    assert report.job.missing == (1, 3)


def test_the_peer_nccl_lost_is_the_first_failure(book: RuleBook, tmp_path: Path) -> None:
    files = []
    for rank in range(4):  # node 01 saw its peer go away, then timed out
        lines = [
            joblogs.nccl_peer_closed("gpu-node-01", rank, "gpu-node-02.cluster.example"),
            *joblogs.watchdog_timeout(rank),
        ]
        files.append(joblogs.write(tmp_path / "gpu-node-01" / f"rank{rank}.log", lines))
    for rank in range(4, 8):  # node 02's processes vanished without a word
        files.append(
            joblogs.write(tmp_path / "gpu-node-02" / f"rank{rank}.log", joblogs.training(rank))
        )
    report = explain(book, files)
    job = report.job
    assert job is not None and job.first_failure is not None
    assert not job.hang
    assert (job.first_failure.how, job.first_failure.node) == ("peer", "gpu-node-02")
    text = " ".join(render_text(report, 100).plain().split())
    assert "First failure: node gpu-node-02" in text
    assert "the peer NCCL lost contact with" in text


def test_a_peer_address_is_mapped_to_its_node_and_its_fault_comes_first(
    book: RuleBook, tmp_path: Path
) -> None:
    files = [
        joblogs.write(
            tmp_path / "gpu-node-01" / "rank0.log",
            [
                joblogs.nccl_bootstrap("gpu-node-01", 0, "10.8.0.11"),
                # an earlier, unrelated error on this node: by time alone it would come first
                joblogs.progress(0, 1, 0, 100),
                "[rank0]: ERROR: Unexpected bus error encountered in worker. This might be "
                "caused by insufficient shared memory (shm).",
                joblogs.nccl_peer_closed("gpu-node-01", 0, "10.8.0.12"),
            ],
        ),
        joblogs.write(
            tmp_path / "gpu-node-02" / "rank1.log",
            [joblogs.nccl_bootstrap("gpu-node-02", 1, "10.8.0.12")],
        ),
        joblogs.write(tmp_path / "gpu-node-02" / "kern.log", joblogs.xid_kernel_log("gpu-node-02")),
    ]
    report = explain(book, files)
    assert report.job is not None and report.job.first_failure is not None
    assert (report.job.first_failure.how, report.job.first_failure.node) == ("peer", "gpu-node-02")
    assert report.diagnoses[0].cause == "xid_hardware"
    shm = next(d for d in report.diagnoses if d.cause == "shm_exhausted")
    assert not shm.explained_by  # a root of its own, earlier in time, yet second


def test_verbose_text_shows_consequences_whole(book: RuleBook, tmp_path: Path) -> None:
    report = explain(book, joblogs.oom_among_timeouts(tmp_path, ranks=4, culprit=1))
    text = render_text(report, 100, verbose=True).plain()
    assert "Watchdog caught collective operation timeout" in text
    assert "From ranks 0, 2-3" in text


def test_a_rank_torchrun_saw_fail_is_no_hang_even_without_its_log(
    book: RuleBook, tmp_path: Path
) -> None:
    files = [
        joblogs.write(tmp_path / f"rank{r}.log", joblogs.watchdog_timeout(r))
        for r in range(8)
        if r != 3
    ]
    files.append(
        joblogs.write(tmp_path / "agent.log", joblogs.elastic_root_cause(3, "gpu-node-01"))
    )
    report = explain(book, files)
    job = report.job
    assert job is not None and job.first_failure is not None
    assert not job.hang
    assert (job.first_failure.how, job.first_failure.rank) == ("launcher", 3)
    assert job.first_failure.node == "gpu-node-01"
    text = " ".join(render_text(report, 100).plain().split())
    assert "First failure: rank 3 on gpu-node-01, its own log has the cause" in text


def test_a_world_size_past_the_rank_bound_is_not_taken(book: RuleBook, tmp_path: Path) -> None:
    """One NCCL line saying 30,000,000 ranks must not make the report build sets that size."""
    files = []
    for rank in range(2):
        lines = [
            f"trainer-{rank}:{900 + rank}:{950 + rank} [0] NCCL INFO comm 0x77{rank} rank {rank} "
            "nranks 30000000 cudaDev 0 busId 1b000 - Init COMPLETE",
            *joblogs.watchdog_timeout(rank),
        ]
        files.append(joblogs.write(tmp_path / f"rank{rank}.log", lines))
    job = explain(book, files).job
    assert job is not None and job.world_size is None and job.missing == ()


def test_no_rank_is_called_missing_from_a_count_that_saturated(
    book: RuleBook, tmp_path: Path
) -> None:
    """Past the scanner's saturation the ranks of the timed-out lines are not all seen: with
    3,000 ranks that all timed out, none may be named as never having arrived."""
    lines = [
        f"{rank}: host-{rank // 8}:{2000 + rank}:{3000 + rank} [0] NCCL INFO comm 0x9{rank:04d} "
        f"rank {rank} nranks 3000 cudaDev {rank % 8} busId 1b000 - Init COMPLETE"
        for rank in range(3000)
    ]
    for rank in range(3000):
        lines += [f"{rank}: {line}" for line in joblogs.watchdog_timeout(rank)]
    job = explain(book, [joblogs.write(tmp_path / "job.out", lines)]).job
    assert job is not None and job.hang
    assert job.missing == ()
