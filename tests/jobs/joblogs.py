"""Multi-rank logs generated from PyTorch's, NCCL's and the kernel's message formats.

Every line is built from the format strings in PyTorch's source (ProcessGroupNCCL.cpp,
CUDACachingAllocator.cpp, torchelastic's ChildFailedError) and the kernel's NVRM Xid line,
with invented numbers, hosts and pids.
"""

from __future__ import annotations

from pathlib import Path


def glog(rank: int, level: str, minute: int, second: int, text: str) -> str:
    """A c10 log line with PyTorch's ``[rank{r}]:`` prefix and a glog header."""
    return (
        f"[rank{rank}]:[{level}1126 14:{minute:02d}:{second:02d}.{rank * 1000 + 17:06d} "
        f"{51000 + rank} ProcessGroupNCCL.cpp:632] {text}"
    )


def watchdog_timeout(rank: int, minute: int = 12, second: int = 40, seq: int = 4811) -> list[str]:
    """The lines one rank writes when its NCCL watchdog gives up on an all-reduce."""
    pg = f"[PG ID 0 PG GUID 0(default_pg) Rank {rank}]"
    return [
        glog(
            rank,
            "E",
            minute,
            second,
            f"{pg} Watchdog caught collective operation timeout: WorkNCCL(SeqNum={seq}, "
            "OpType=ALLREDUCE, NumelIn=25165824, NumelOut=25165824, Timeout(ms)=600000) ran "
            "for 600017 milliseconds before timing out.",
        ),
        glog(
            rank,
            "E",
            minute,
            second,
            f"{pg} Some NCCL operations have failed or timed out. Due to the asynchronous "
            "nature of CUDA kernels, subsequent GPU operations might run on "
            "corrupted/incomplete data.",
        ),
        glog(
            rank,
            "E",
            minute,
            second,
            f"{pg} To avoid data inconsistency, we are taking the entire process down.",
        ),
    ]


def training(rank: int, steps: int = 3) -> list[str]:
    """A few ordinary progress lines."""
    return [f"[rank{rank}]: step {s} loss {2.5 - s * 0.01:.3f}" for s in range(1, steps + 1)]


def cuda_oom(rank: int, gpu: int) -> list[str]:
    """The traceback and message of PyTorch's caching allocator running out of memory."""
    return [
        f"[rank{rank}]: Traceback (most recent call last):",
        f'[rank{rank}]:   File "/work/trainer/step.py", line 88, in forward',
        f"[rank{rank}]:     hidden = self.mlp(hidden)",
        f"[rank{rank}]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.25 GiB. "
        f"GPU {gpu} has a total capacity of 79.11 GiB of which 1.06 GiB is free. Including "
        "non-PyTorch memory, this process has 78.02 GiB memory in use. Of the allocated memory "
        "74.61 GiB is allocated by PyTorch, and 2.12 GiB is reserved by PyTorch but "
        "unallocated. If reserved but unallocated memory is large try setting "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.",
    ]


def write(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def oom_among_timeouts(folder: Path, ranks: int = 64, culprit: int = 3) -> list[Path]:
    """rank0.log … rank{n-1}.log: one rank runs out of memory, the others time out later."""
    files = []
    for rank in range(ranks):
        lines = training(rank)
        if rank == culprit:
            # its timestamped line comes before the others' timeouts
            lines += [glog(rank, "W", 2, 11, "[Rank 3] skipping NCCL abort: error already set")]
            lines += cuda_oom(rank, gpu=rank % 8)
        else:
            lines += watchdog_timeout(rank)
        files.append(write(folder / f"rank{rank}.log", lines))
    return files


def elastic_root_cause(rank: int, host: str, exitcode: int = 1) -> list[str]:
    """torchelastic's ChildFailedError table naming ``rank`` as the first failure."""
    rule = "=" * 56
    return [
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
        rule,
        "/work/trainer/train.py FAILED",
        "-" * 56,
        "Failures:",
        "  <NO_OTHER_FAILURES>",
        "-" * 56,
        "Root Cause (first observed failure):",
        "[0]:",
        "  time      : 2026-11-26_14:02:12",
        f"  host      : {host}",
        f"  rank      : {rank} (local_rank: {rank % 8})",
        f"  exitcode  : {exitcode} (pid: 61{rank:03d})",
        "  error_file: <N/A>",
        "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
        rule,
    ]


def xid_kernel_log(host: str, xid: int = 79) -> list[str]:
    """A node's kernel log (syslog form) with an Xid."""
    return [
        f"Nov 26 14:01:58 {host} kernel: NVRM: GPU at PCI:0000:bd:00: GPU-5e1c0d3a-7b2f-4c44",
        f"Nov 26 14:01:58 {host} kernel: NVRM: Xid (PCI:0000:bd:00): {xid}, pid='<unknown>', "
        "name=<unknown>, GPU has fallen off the bus.",
        f"Nov 26 14:01:58 {host} kernel: NVRM: GPU 0000:bd:00.0: GPU has fallen off the bus.",
    ]


def illegal_access(rank: int, minute: int, second: int) -> list[str]:
    """A CUDA illegal memory access, raised after a timestamped c10 warning on ``rank``."""
    return [
        glog(rank, "W", minute, second, "CUDA kernel launch reported an error"),
        f"[rank{rank}]: torch.AcceleratorError: CUDA error: an illegal memory access was "
        "encountered",
    ]


def progress(rank: int, minute: int, second: int, step: int) -> str:
    """A Python logging progress line with its timestamp (asctime)."""
    return (
        f"[rank{rank}]: 2026-11-26 14:{minute:02d}:{second:02d},250 INFO trainer: step {step} "
        f"loss {2.0 + step / 1000:.4f}"
    )


def nccl_bootstrap(host: str, rank: int, address: str) -> str:
    """NCCL's line naming the address a rank's bootstrap network uses."""
    prefix = f"{host}:{4400 + rank}:{4500 + rank} [{rank % 8}]"
    return f"{prefix} NCCL INFO Bootstrap : Using ib0:{address}<0>"


def nccl_peer_closed(host: str, rank: int, peer: str) -> str:
    """NCCL's warning when a peer's socket closed (peer: a host name or an address)."""
    return (
        f"{host}:{4400 + rank}:{4600 + rank} [{rank % 8}] NCCL WARN Net : Connection closed by "
        f"remote peer {peer}<39211>"
    )
