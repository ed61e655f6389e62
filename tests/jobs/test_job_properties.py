"""Property: whatever the lines and names of a job's logs, reading it as one job gives a
report every format renders, with the first failure first and ranks renumbered — never an
exception from inside."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpudoctor.logs.origin import file_origin, line_origin, line_time
from gpudoctor.pipeline import LogInput, diagnose
from gpudoctor.render.markdown import render_markdown
from gpudoctor.render.text import render_text
from gpudoctor.rulebook.book import load_rulebook

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
BOOK = load_rulebook(())

PREFIXES = [
    "",
    "  3: ",
    "[rank7]:",
    "[default2]:",
    "[gpu-node-04:9]: ",
    "worker-2: ",
    "12: [rank12]:",
]
MESSAGES = [
    "[E1126 14:12:40.000017 51000 ProcessGroupNCCL.cpp:632] [Rank 3] Watchdog caught collective "
    "operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
    "Timeout(ms)=600000) ran for 600017 milliseconds before timing out.",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.25 GiB. GPU 3 has a total "
    "capacity of 79.11 GiB of which 1.06 GiB is free.",
    "Root Cause (first observed failure):",
    "  rank      : 5 (local_rank: 5)",
    "  host      : gpu-node-02",
    "To our best knowledge, ranks [1, 6] are the lagging ranks that caused this timeout.",
    "gpu-node-01:1:2 [0] NCCL INFO Bootstrap : Using ib0:10.0.0.1<0>",
    "gpu-node-01:1:2 [0] NCCL WARN Net : Connection closed by remote peer 10.0.0.2<4000>",
    "gpu-node-01:1:2 [0] NCCL INFO comm 0x1f rank 0 nranks 16 cudaDev 0 busId 1b000",
    "Nov 26 14:01:58 gpu-node-02 kernel: NVRM: Xid (PCI:0000:bd:00): 79, pid=1, GPU has fallen "
    "off the bus.",
    "2026-11-26 14:05:00,100 INFO step 10 loss 2.31",
    "step 3 loss nan",
]
NAMES = [
    "rank0.log",
    "logs/rank-12.txt",
    "gpu-node-07/out.log",
    "job.77.3.out",
    "x/attempt_0/1/stderr.log",
    "k8s/t-worker-1.log",
    "train.log",
]

lines = st.lists(
    st.tuples(st.sampled_from(PREFIXES), st.sampled_from(MESSAGES) | st.text(max_size=60)),
    max_size=12,
)


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from(NAMES), lines), min_size=1, max_size=5))
def test_any_job_is_read_and_rendered(files: list[tuple[str, list[tuple[str, str]]]]) -> None:
    inputs = [
        LogInput.from_text(f"{index}/{name}", "".join(p + m + "\n" for p, m in body))
        for index, (name, body) in enumerate(files)
    ]
    report = diagnose(BOOK, inputs)
    assert [d.rank for d in report.diagnoses] == list(range(1, len(report.diagnoses) + 1))
    json.dumps(report.to_dict())
    render_text(report, 80)
    render_text(report, 80, verbose=True)
    render_markdown(report)
    if report.job is not None and report.job.first_failure is not None:
        rule = report.job.first_failure.rule
        if rule is not None and report.job.first_failure.how in ("earliest", "launcher", "peer"):
            assert report.diagnoses[0].rule == rule


@SETTINGS
@given(st.text(max_size=200))
def test_origins_of_any_text(text: str) -> None:
    origin = line_origin(text)
    assert origin.rank is None or origin.rank >= 0
    time = line_time(text)
    assert time is None or 0 <= time < 367 * 86400
    file_origin(text)
