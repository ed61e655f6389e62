"""A line pasted cut short still names its cause when the part that was kept is the
signature: issue threads and chat pastes often end mid-line ("... It will restart",
"(errno: 98 - Addr"), and the end a pattern used to require is then missing."""

from __future__ import annotations

import pytest

from gpudoctor.pipeline import explain_text
from gpudoctor.rulebook.book import RuleBook, load_rulebook


@pytest.fixture(scope="module")
def book() -> RuleBook:
    return load_rulebook()


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("[    3.118204] nvidia: version magic '6.8.0-45-generic SMP preempt mod_unload "
         "modversions ' should be '6.8.0-49-gen", "nvidia-kernel-module-not-loaded"),
        ("Warning 03/02/2026 22:41:10 Display 4101: Display driver nvlddmkm stopped responding an",
         "cuda-launch-timeout"),
        ("The kernel for notebooks/train_vit.ipynb appears to have died. It will restart",
         "jupyter-kernel-died"),
        ("[ 4411.201773] i915 0000:00:02.0: [drm] GPU HANG: ecode 12:1:85dffffb, in python3",
         "intel-gpu-hang-reset"),
        ("[W socket.cpp:464] [c10d] The server socket has failed to bind to 0.0.0.0:29511 "
         "(errno: 98 - Addr", "distributed-port-in-use"),
        ("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 2 "
         "(pid: 5120) of bina", "torchelastic-child-failed"),
        ("RuntimeError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] "
         "via c10d key-value store by key '0', but store->get('0') got error: Sock",
         "distributed-rendezvous-timeout"),
        (" 40%|####      | 2/5 [00:03<00:04, 1.50s/it]LLVM ERROR: Cannot select: intrinsi",
         "torch-gpu-arch-unsupported"),
        ("node-2:4410:4471 [1] misc/shmutils.cc:72 NCCL WARN Error: failed to extend "
         "/dev/shm/nccl-Qx81Ta", "nccl-shm-segment-failed"),
        ("gpu-b:7120:7120 [0] init.cc:871 NCCL WARN Duplicate GPU detected : rank 5 and rank 1 "
         "both", "nccl-duplicate-gpu"),
        ("I tensorflow/core/common_runtime/gpu/gpu_device.cc:1700] Ignoring visible gpu device "
         "(device: 0, name: Quadro K2200, pci bus id: 0000:03:00.0, compute capability: 5.0) "
         "with Cuda compute capability 5.0. T", "torch-gpu-arch-unsupported"),
    ],
)  # fmt: skip
def test_a_line_cut_after_its_signature_still_fires(book: RuleBook, text: str, rule: str) -> None:
    assert rule in [d.rule for d in explain_text(text + "\n", book).causes]


def test_the_cut_assertion_keeps_what_was_kept_of_its_condition(book: RuleBook) -> None:
    text = "python3: /src/ext/csrc/pool.cpp:88: void Pool::release(int): Assertion `slot < cap\n"
    first = explain_text(text, book).causes[0]
    assert first.rule == "native-abort"
    assert "slot < cap" in first.summary


def test_tensorflow_ignoring_a_gpu_for_its_core_count_is_not_its_architecture(
    book: RuleBook,
) -> None:
    text = (
        "I tensorflow/core/common_runtime/gpu/gpu_device.cc:1700] Ignoring visible gpu device "
        "(device: 0, name: Quadro K2200, pci bus id: 0000:03:00.0, compute capability: 5.0) with "
        "core count: 5. The minimum required count is 8.\n"
    )
    assert "arch_mismatch" not in [d.cause for d in explain_text(text, book).causes]
