"""Rank, node and time of a line, from its prefixes and its file's name."""

from __future__ import annotations

import pytest

from gpudoctor.logs.origin import Origin, file_origin, line_origin, line_time, origin_of

DAY = 86400


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("[rank3]:[E1126 14:02:11.123456 4410 ProcessGroupNCCL.cpp:632] boom", Origin(3)),
        ("[rank12]: Traceback (most recent call last):", Origin(12)),
        ("[default5]:torch.OutOfMemoryError: CUDA out of memory.", Origin(5, local=True)),
        ("  7: RuntimeError: CUDA error: an illegal memory access", Origin(7)),
        ("17: [rank17]:[W1126 14:02:11.5 ProcessGroupNCCL.cpp:9] x", Origin(17)),
        # srun's global task id is kept over torchrun's local rank
        ("  9: [default1]:epoch 3", Origin(9)),
        ("[gpu-node-07:4]: loss 2.31", Origin(4, "gpu-node-07")),
        ("gpu-node-03:48112:48190 [2] NCCL INFO comm 0x7f init", Origin(None, "gpu-node-03")),
        (
            "Nov 26 14:02:11 node-b kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=4410",
            Origin(None, "node-b"),
        ),
        (
            "[E ProcessGroupNCCL.cpp:475] [Rank 6] Watchdog caught collective operation timeout",
            Origin(6),
        ),
        ("[PG ID 0 PG GUID 0(default_pg) Rank 21] Heartbeat monitor timed out!", Origin(21)),
        ("worker-3: [rank26]: RuntimeError: CUDA error", Origin(26, "worker-3")),
        ("gpu17: [default2]:step 40", Origin(2, "gpu17", local=True)),
        ("RuntimeError: CUDA error: an illegal memory access", Origin()),
        ("torch.OutOfMemoryError: CUDA out of memory.", Origin()),
        ("epoch 3 step 120 loss 2.31", Origin()),
        ("14:02:11 starting", Origin()),
        ("Traceback (most recent call last):", Origin()),
        # dotted exception names are not pdsh host names
        ("cv2.error: OpenCV(4.9.0) resize.cpp:4152: error", Origin()),
        ("urllib3.exceptions.ReadTimeoutError: read timed out", Origin()),
        ("torch._C._distributed_c10d.DistBackendError: NCCL error", Origin()),
    ],
)
def test_line_origin(line: str, expected: Origin) -> None:
    assert line_origin(line) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("logs/rank3.log", Origin(3)),
        ("logs/rank-12.txt", Origin(12)),
        ("out/train_rank_5.err", Origin(5)),
        ("runs/node-07/rank3.log", Origin(3, "node-07")),
        ("slurm/job.48211.7.out", Origin(7)),
        ("slurm/train-48211-15.err", Origin(15)),
        ("/tmp/torchelastic_ab12/48211_x9/attempt_0/3/stderr.log", Origin(3, local=True)),
        ("k8s/bert-pretrain-worker-3.log", Origin(None, "bert-pretrain-worker-3")),
        ("k8s/bert-pretrain-master-0/stdout.log", Origin(None, "bert-pretrain-master-0")),
        ("cluster/nid001234.err", Origin(None, "nid001234")),
        ("logs/2026-11-26.log", Origin()),
        ("train.log", Origin()),
        # a model's name and a month are not a Slurm job id and task
        ("runs/resnet50-1.log", Origin()),
        ("runs/run_v12_3.txt", Origin()),
        ("logs/train-2026-11.log", Origin()),
    ],
)
def test_file_origin(name: str, expected: Origin) -> None:
    assert file_origin(name) == expected


def test_line_wins_over_file_and_file_fills_in() -> None:
    assert origin_of("[rank4]: boom", "node-02/rank9.log") == Origin(4, "node-02")
    assert origin_of("boom", "node-02/rank9.log") == Origin(9, "node-02")
    # a global rank from the file name beats a local one from the line
    assert origin_of("[default1]: boom", "slurm/job.77.9.out") == Origin(9)
    # a local rank from the file stands when the line says nothing of its rank
    assert origin_of("boom", "n/attempt_0/2/stderr.log") == Origin(2, local=True)


@pytest.mark.parametrize(
    ("line", "seconds"),
    [
        ("[rank3]:[E1126 14:02:11.250000 4410 ProcessGroupNCCL.cpp:632] x", (330, 14, 2, 11.25)),
        ("2026-11-26T14:02:11.5Z ERROR x", (330, 14, 2, 11.5)),
        ("2026-11-26 14:02:11,250 - ERROR - x", (330, 14, 2, 11.25)),
        ("  time      : 2026-11-26_14:02:11", (330, 14, 2, 11.0)),
        ("Nov 26 14:02:11 node-b kernel: NVRM: Xid", (330, 14, 2, 11.0)),
        ("Jan  3 00:00:01 node-b kernel: x", (2, 0, 0, 1.0)),
        ("I0301 00:00:00.000000 1 x.cc:1] y", (60, 0, 0, 0.0)),
    ],
)
def test_line_time(line: str, seconds: tuple[int, int, int, float]) -> None:
    """(day of a leap year from 0, hour, minute, second): Nov 26 is day 330."""
    days, hours, minutes, rest = seconds
    assert line_time(line) == pytest.approx(days * DAY + hours * 3600 + minutes * 60 + rest)


@pytest.mark.parametrize(
    "line",
    ["epoch 3 loss 2.31", "version 12.4.1", "E9999 14:02:11 not a glog date", "ERROR 25:61:00"],
)
def test_no_time(line: str) -> None:
    assert line_time(line) is None


def test_times_order_across_formats() -> None:
    earlier = line_time("[rank3]:[E1126 14:02:10.900000 1 ProcessGroupNCCL.cpp:1] x")
    later = line_time("Nov 26 14:02:11 node-b kernel: NVRM: Xid 79")
    assert earlier is not None and later is not None and earlier < later


def test_format_time_writes_back_what_was_read() -> None:
    from gpudoctor.logs.origin import format_time

    seconds = line_time("[rank3]:[E1126 14:02:11.250000 4410 ProcessGroupNCCL.cpp:632] x")
    assert seconds is not None
    assert format_time(seconds) == "11-26 14:02:11.250"
    march = line_time("Mar  1 00:00:05 host kernel: x")
    assert march is not None and format_time(march) == "03-01 00:00:05.000"
