"""Helpers shared by the benchmarks: timing commands and making realistic logs."""

from __future__ import annotations

import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

GPUDOCTOR = [sys.executable, "-m", "gpudoctor"]


def measured_source() -> str:
    """The directory the gpudoctor these benchmarks time is imported from: the installed one,
    or the tree ``PYTHONPATH`` names. Printed first, so that a run meant for another tree (a
    worktree of older code) cannot time the installed package unnoticed."""
    import gpudoctor

    return str(Path(gpudoctor.__file__).resolve().parent.parent)


def gpudoctor_command() -> list[str]:
    """The installed console script when it is beside this interpreter, else ``-m``."""
    script = Path(sys.executable).with_name("gpudoctor")
    return [str(script)] if script.exists() else GPUDOCTOR


def run_timed(command: list[str], repeat: int = 1, *, pipe: bool = False) -> tuple[float, int]:
    """Median wall time in seconds over ``repeat`` runs, and the exit code of the last.

    ``pipe`` sends standard output to a pipe instead of /dev/null: GNU grep stops at the
    first match when its output is /dev/null, which would time nothing of the file."""
    times = []
    code = 0
    out = subprocess.PIPE if pipe else subprocess.DEVNULL
    for _ in range(repeat):
        start = time.perf_counter()
        done = subprocess.run(command, stdout=out, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
        code = done.returncode
    return statistics.median(times), code


def peak_rss_of(command: list[str]) -> int:
    """Peak resident memory of one run of ``command``, in bytes (Linux)."""
    code = (
        "import resource, subprocess, sys\n"
        "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    out = subprocess.run([sys.executable, "-c", code, *command], capture_output=True, text=True)
    return int(out.stdout.strip()) * 1024


def self_rss() -> int:
    """Peak resident memory of this process so far, in bytes."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def have(tool: str) -> bool:
    """Whether a command-line tool is on PATH."""
    return shutil.which(tool) is not None


_STEP = (
    "{ts} | INFO | trainer.py:412 | epoch {epoch} step {step}/{steps} loss {loss:.4f} "
    "lr {lr:.2e} grad_norm {gn:.3f} tokens/s {tps} mem {mem:.1f}GiB\n"
)
_NOISE = [
    "{ts} | WARNING | torch/utils/data/dataloader.py:557: UserWarning: This DataLoader will "
    "create 8 worker processes in total.\n",
    "{ts} | INFO | checkpoint saved to /scratch/run-42/ckpt/step_{step}.pt\n",
    "[rank{rank}]:[W {ts} ProcessGroupNCCL.cpp:4115] NCCL INFO comm 0x5591 rank {rank} nranks 8 "
    "cudaDev {rank} busId 1b000 - Init COMPLETE\n",
    "Epoch {epoch}:  42%|████▏     | 420/1000 [02:11<03:01,  3.20it/s, loss={loss:.3f}]\r"
    "Epoch {epoch}:  43%|████▎     | 430/1000 [02:14<02:58,  3.20it/s, loss={loss:.3f}]\n",
]
_FAILURE_TAIL = (
    "Traceback (most recent call last):\n"
    '  File "/home/user/train.py", line 88, in <module>\n'
    "    loss.backward()\n"
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
    "capacity of 79.15 GiB of which 1.12 GiB is free. Including non-PyTorch memory, this process "
    "has 78.02 GiB memory in use. Of the allocated memory 75.10 GiB is allocated by PyTorch, and "
    "1.41 GiB is reserved by PyTorch but unallocated.\n"
)


def write_training_log(path: Path, size_bytes: int, seed: int = 7, tail: str | None = None) -> int:
    """Write a realistic training log of about ``size_bytes`` ending in ``tail`` (by default
    a PyTorch out-of-memory traceback); returns its size in bytes."""
    rng = random.Random(seed)
    written = 0
    step = 0
    with open(path, "w", encoding="utf-8") as out:
        while written < size_bytes:
            lines = []
            for _ in range(2000):
                step += 1
                fields = {
                    "ts": f"2026-11-02 1{step % 10}:{step % 60:02d}:{step % 59:02d}",
                    "epoch": step // 5000,
                    "step": step,
                    "steps": 500000,
                    "loss": rng.random() * 3,
                    "lr": 3e-4 * rng.random(),
                    "gn": rng.random() * 4,
                    "tps": rng.randint(9000, 12000),
                    "mem": 60 + rng.random() * 10,
                    "rank": step % 8,
                }
                template = _STEP if rng.random() > 0.05 else rng.choice(_NOISE)
                lines.append(template.format(**fields))
                written += len(lines[-1].encode("utf-8"))
                if written >= size_bytes:
                    break  # a small log stays small (within one line of the size asked)
            out.write("".join(lines))
        out.write(_FAILURE_TAIL if tail is None else tail)
    return path.stat().st_size
