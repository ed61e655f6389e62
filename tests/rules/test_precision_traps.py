"""Harmless logs (warnings a run survives, dtype errors, a healthy nvidia-smi table) that must
get no GPU cause with confidence >= 0.5."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor.pipeline import explain_text
from gpudoctor.rulebook.book import load_rulebook

TRAPS = Path(__file__).parents[1] / "fixtures" / "precision_traps"


@pytest.mark.parametrize("name", sorted(p.name for p in TRAPS.glob("*.log")))
def test_no_gpu_cause(name: str) -> None:
    report = explain_text((TRAPS / name).read_text(), load_rulebook([]))
    alarms = [d for d in report.causes if d.cause != "app_exception" and d.confidence >= 0.5]
    assert alarms == []


@pytest.mark.parametrize("name", ["dtype.log", "dtype2.log", "dtype4.log"])
def test_dtype_mismatch_is_an_application_error(name: str) -> None:
    report = explain_text((TRAPS / name).read_text(), load_rulebook([]))
    assert report.causes[0].rule == "torch-dtype-mismatch"


def test_cpu_and_cuda_types_are_still_a_device_mismatch() -> None:
    text = (
        "RuntimeError: Input type (torch.FloatTensor) and weight type "
        "(torch.cuda.FloatTensor) should be the same\n"
    )
    assert explain_text(text, load_rulebook([])).causes[0].cause == "device_mismatch"


def test_numpy_on_cuda_tensor_is_a_lead_not_an_alarm() -> None:
    text = "TypeError: can't convert cuda:0 device type tensor to numpy.\n"
    causes = explain_text(text, load_rulebook([])).causes
    assert causes[0].cause == "device_mismatch"
    assert causes[0].confidence < 0.5


NCCL_LEADS = {
    # ncclInvalidUsage: the program called NCCL wrongly (ranks sharing a GPU, mismatched
    # collectives), which is not a communication failure
    "invalid-usage": (
        "RuntimeError: NCCL error in: /opt/src/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:"
        "1207, invalid usage, NCCL version 2.14.3\n"
        "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\n"
    ),
    # Horovod's notice names an exception on another rank (or a rank that finished early) as
    # its reason: that rank's log holds the cause, not the network
    "horovod-shutdown": (
        "[1,2]<stderr>:RuntimeError: Horovod has been shut down. This was caused by an exception "
        "on one of the ranks or an attempt to allreduce, allgather or broadcast a tensor after "
        "one of the ranks finished execution.\n"
    ),
}


@pytest.mark.parametrize("name", sorted(NCCL_LEADS))
def test_nccl_messages_that_blame_the_program_are_leads_not_alarms(name: str) -> None:
    causes = explain_text(NCCL_LEADS[name], load_rulebook([])).causes
    nccl = [d for d in causes if d.cause == "nccl_failure"]
    assert nccl
    assert nccl[0].confidence < 0.5


LEADS = {
    # srun reports every task of a step it ended; Slurm names its own memory kills otherwise
    "srun-killed-tasks": (
        "".join(f"srun: error: gpu-b12: task {t}: Killed\n" for t in (4, 1, 6, 3)),
        "host_oom",
    ),
    # printed by JAX on every machine without a GPU backend, including those without a GPU
    "jax-no-gpu": (
        "WARNING:absl:No GPU/TPU found, falling back to CPU. (Set TF_CPP_MIN_LOG_LEVEL=0 and "
        "rerun for more info.)\n",
        "cuda_libs_missing",
    ),
    # one operator's minimum capability in xFormers' list of refused operators
    "xformers-one-operator": (
        "NotImplementedError: No operator found for `memory_efficient_attention_forward` with "
        "inputs:\n"
        "`fa3F@0.0.0` is not supported because:\n"
        "    requires device with capability > (9, 0) but your GPU has capability (8, 9) "
        "(too old)\n"
        "`cutlassF-pt` is not supported because:\n"
        "    dtype=torch.float64 (supported: {torch.float16, torch.bfloat16, torch.float32})\n",
        "arch_mismatch",
    ),
    # the driver lowering clocks for heat: the run goes on
    "temperature-threshold": (
        "Driver temperature threshold met on GPU #1. Expect reduced performance.\n",
        "thermal_power",
    ),
    # a sanitizer's error count alone may count races or failed API calls
    "sanitizer-summary": ("========= ERROR SUMMARY: 3 errors\n", "illegal_memory_access"),
    # every NVLink link of a GPU down: a card without NVLink, or no fabric manager
    "dcgm-every-nvlink-down": (
        "+-----  Integration  -------+---------------------------------------------+\n"
        "| PCIe                      | Fail - All                                  |\n"
        "| Warning                   | GPU 2's NvLink link 0 is currently down Run |\n"
        "|                           | a field diagnostic on the GPU., GPU 2's     |\n"
        "|                           | NvLink link 1 is currently down Run a field |\n"
        "|                           | diagnostic on the GPU., GPU 2's NvLink link |\n"
        "|                           | 2 is currently down Run a field diagnostic  |\n"
        "|                           | on the GPU., GPU 2's NvLink link 3 is       |\n"
        "|                           | currently down Run a field diagnostic on    |\n"
        "| Warning                   | GPU 3's NvLink link 0 is currently down Run |\n"
        "| Warning                   | GPU 3's NvLink link 1 is currently down Run |\n",
        "xid_hardware",
    ),
    # a program that catches the missing driver and goes on (on the CPU)
    "caught-no-driver": (
        "Warning: caught exception 'Found no NVIDIA driver on your system. Please check that you "
        "have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx'"
        ", memory monitor disabled\n"
        "Loading weights [4f1c2d9a07] from /srv/models/base.safetensors\n",
        "cuda_libs_missing",
    ),
    # a kernel that cannot start because an import fails is a broken environment
    "kernel-restart-failed-on-import": (
        "ImportError: cannot import name 'shortcut_factory' from 'prompt_toolkit.shortcuts'\n"
        "[W 09:14:02.118 NotebookApp] KernelRestarter: restart failed\n"
        "[W 09:14:02.119 NotebookApp] Kernel 5d0c1b7e-2f4a-4c8e-9b61-0a7d3e5f2c48 died, removing "
        "from map.\n",
        "app_exception",
    ),
    # NVLink events the driver itself grades Nonfatal (Blackwell's Xid 144-150)
    "nvlink-nonfatal": (
        "[ 9120.551203] NVRM: Xid (PCI:0000:9a:00): 145, RLW_SRC_TRACK Nonfatal XC0 i0 Link 3 "
        "(0x00000004 0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)\n"
        "[ 9120.551377] NVRM: Xid (PCI:0000:9a:00): 144, SAW_MVB Nonfatal XC0 i0 Link 3 "
        "(0x00000001 0x00000008 0x00000000 0x00000000 0x00000000 0x00000000)\n",
        "xid_hardware",
    ),
    # ONNX Runtime retries on the CPU and the session runs
    "ort-cpu-fallback": (
        "EP Error C:\\srv\\ort\\onnxruntime_pybind_state.cc:891 CUDA_PATH is set but CUDA wasnt "
        "able to be loaded. Please install the correct version of CUDA and cuDNN as mentioned in "
        "the GPU requirements page, make sure they're in the PATH, and that your GPU is "
        "supported.\n when using ['CUDAExecutionProvider']\n"
        "Falling back to ['CPUExecutionProvider'] and retrying.\n",
        "cuda_libs_missing",
    ),
    # Slurm's note that a step's cgroup reached its limit (page cache counts); the step ran on
    "slurm-memory-limit-at-some-point": (
        "2048+0 records in\n2048+0 records out\n"
        "slurmstepd: error: Exceeded step memory limit at some point.\n",
        "host_oom",
    ),
    # Caffe2's note at import in every CPU-only run, with the loader's reason
    "caffe2-cpu-only": (
        "WARNING:root:This caffe2 python run does not have GPU support. Will run in CPU only "
        "mode.\nWARNING:root:Debug message: libcudart.so.9.2: cannot open shared object file: "
        "No such file or directory\n",
        "cuda_libs_missing",
    ),
    # the device plugin's DaemonSet lands on every node, GPU or not
    "device-plugin-without-driver": (
        'Error: failed to start container "nvidia-device-plugin-ctr": Error response from '
        "daemon: OCI runtime create failed: error running hook #0: error running hook: exit "
        "status 1, stdout: , stderr: nvidia-container-cli: initialization error: load library "
        "failed: libnvidia-ml.so.1: cannot open shared object file: no such file or directory: "
        "unknown\n",
        "cuda_libs_missing",
    ),
    # a shared-memory segment that was not there to open: removed early, not a full /dev/shm
    "shm-segment-missing": (
        "RuntimeError: unable to open shared memory object </torch_5120_1187300412_4> in "
        "read-write mode: No such file or directory (2)\n",
        "shm_exhausted",
    ),
    # xFormers' import warning naming a CPU-only torch, and nothing failing after it
    "xformers-sees-a-cpu-torch": (
        "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
        "    PyTorch 2.5.1+cu124 with CUDA 1204 (you have 2.5.1+cpu)\n"
        "    Python  3.11.9 (you have 3.11.9)\n",
        "cuda_libs_missing",
    ),
    # a CUDA library that failed to load, in a program's own words: a lead, not a verdict
    "cuda-library-failed-in-other-words": (
        "2026/03/01 10:00:00 gpu.go:212: failed to open libcublasLt.so.12 (searched 4 paths)\n",
        "cuda_libs_missing",
    ),
    # TensorFlow's start-up probe failing with an unknown error, the run going on (on the CPU)
    "tf-cuinit-unknown-then-runs": (
        "[10:02:11 - Predict] Loading model weights from /srv/models/basecaller.tar.gz\n"
        "2025-06-11 10:02:11.480337: E tensorflow/stream_executor/cuda/cuda_driver.cc:271] "
        "failed call to cuInit: CUDA_ERROR_UNKNOWN: unknown error\n"
        "[10:02:12 - Predict] Processing 12 long region(s) with batching.\n"
        "[10:02:14 - BAMFile] Creating pool of 8 BAM file sets.\n",
        "driver_cuda_mismatch",
    ),
    # a kernel call trace through the driver, its first line cut off: where, not what
    "kernel-trace-through-nvidia": (
        "[ 812.100231]  _nv043512rm+0x3a/0x60 [nvidia]\n"
        "[ 812.100298]  rm_ioctl+0x5d/0x4f0 [nvidia]\n"
        "[ 812.100340]  nvidia_unlocked_ioctl+0x41c/0x940 [nvidia]\n"
        "[ 812.100351]  __x64_sys_ioctl+0x95/0xd0\n",
        "xid_hardware",
    ),
}


@pytest.mark.parametrize("name", sorted(LEADS))
def test_ambiguous_lines_are_leads_not_alarms(name: str) -> None:
    text, cause = LEADS[name]
    causes = explain_text(text, load_rulebook([])).causes
    assert causes[0].cause == cause
    assert causes[0].confidence < 0.5


def test_slurm_memory_limit_with_a_killed_task_is_a_memory_kill() -> None:
    text = (
        "srun: error: gpu-a07: task 0: Killed\n"
        "slurmstepd: error: Exceeded step memory limit at some point.\n"
    )
    causes = explain_text(text, load_rulebook([])).causes
    assert causes[0].cause == "host_oom"
    assert causes[0].confidence >= 0.5


def test_missing_main_guard_is_named_below_an_alarm_with_the_program_bug_beside_it() -> None:
    """Spawn's bootstrapping error is certain about what happened and not about which cause
    to file it under (a worker failure or the program's own bug): labellers of real logs
    split, so it ranks first as a lead, not an alarm, with the application error listed."""
    text = (
        "Traceback (most recent call last):\n"
        '  File "<string>", line 1, in <module>\n'
        '  File "C:\\Python311\\Lib\\multiprocessing\\spawn.py", line 122, in spawn_main\n'
        "RuntimeError:\n"
        "        An attempt has been made to start a new process before the\n"
        "        current process has finished its bootstrapping phase.\n"
    )
    causes = explain_text(text, load_rulebook()).causes
    assert causes[0].rule == "multiprocessing-spawn-bootstrap"
    assert causes[0].confidence < 0.5
    assert "app_exception" in [d.cause for d in causes[:3]]


def test_an_arch_warning_whose_own_list_has_a_cubin_for_the_gpu_is_no_alarm() -> None:
    """PyTorch releases before 1.13 warned whenever the GPU's exact architecture was not in
    the build's list; sm_70 cubins run on a 7.5 GPU. Without sm_70 (only PTX) it stays."""
    warning = (
        "UserWarning:\nTesla T4 with CUDA capability sm_75 is not compatible with the current "
        "PyTorch installation.\nThe current PyTorch install supports CUDA capabilities {}.\n"
    )
    book = load_rulebook()
    covered = explain_text(warning.format("sm_37 sm_50 sm_60 sm_61 sm_70 compute_70"), book)
    assert covered.causes[0].cause == "arch_mismatch" and covered.causes[0].confidence < 0.3
    ptx_only = explain_text(warning.format("sm_37 sm_50 sm_60 sm_61 compute_61"), book)
    assert ptx_only.causes[0].cause == "arch_mismatch" and ptx_only.causes[0].confidence >= 0.9


def test_fbgemm_dll_failing_to_load_is_a_lead_not_a_missing_cuda_library() -> None:
    """torch's CPU matrix library lacks the OpenMP runtime, not a CUDA DLL."""
    text = (
        "ERROR    Could not load torch: [WinError 126] The specified module could not be found. "
        'Error loading "C:\\sd\\venv\\lib\\site-packages\\torch\\lib\\fbgemm.dll" or one of its '
        "dependencies.\n"
    )
    first = explain_text(text, load_rulebook()).causes[0]
    assert first.cause == "cuda_libs_missing" and first.confidence < 0.5
    shm = text.replace("fbgemm.dll", "shm.dll")
    assert explain_text(shm, load_rulebook()).causes[0].confidence >= 0.5


def test_an_invalid_device_ordinal_before_a_segfault_is_the_story() -> None:
    """The program asked for a GPU that is not there, and crashed after: the segfault is how it
    ended, not why."""
    text = (
        "[Error] [carb.gym.plugin] Gym cuda error: invalid device ordinal: "
        "../source/plugins/gym/impl/GymPhysX.cu: 512\n"
        "[Error] [carb.gym.plugin] Failed to acquire the state tensor\n"
        "Segmentation fault (core dumped)\n"
    )
    causes = explain_text(text, load_rulebook()).causes
    assert causes[0].cause == "app_exception"
    segfault = next(d for d in causes if d.cause == "segfault_native")
    assert segfault.confidence < 0.5 and segfault.explained_by
