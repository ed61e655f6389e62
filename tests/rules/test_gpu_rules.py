"""GPU rules on whole logs: which rule ranks first, and which line is its evidence.

The fixtures in ``tests/fixtures/logs/gpu/`` are written from the frameworks' message formats.
The misleading cases matter most: a cuDNN/cuBLAS error after an OOM, an illegal access after a
device-side assert, an NCCL error whose text is a CUDA out-of-memory.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor.pipeline import explain_text
from gpudoctor.report import Diagnosis, Report
from gpudoctor.rulebook.book import RuleBook, load_rulebook

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "logs" / "gpu"


@pytest.fixture(scope="module")
def book() -> RuleBook:
    return load_rulebook()


def explain(book: RuleBook, name: str) -> Report:
    return explain_text((FIXTURES / name).read_text(encoding="utf-8"), book, name=name)


def first_line(diagnosis: Diagnosis) -> int | None:
    """Line number of the first log evidence of a diagnosis."""
    return next((e.line for e in diagnosis.evidence if e.line is not None), None)


def line_of(name: str, needle: str) -> int:
    lines = (FIXTURES / name).read_text(encoding="utf-8").splitlines()
    return next(i for i, text in enumerate(lines, start=1) if needle in text)


@pytest.mark.parametrize(
    ("fixture", "rule", "cause", "evidence"),
    [
        # cuBLAS handle creation fails after the allocator's OOM: the OOM is the cause
        ("cublas_after_oom.log", "torch-cuda-oom", "gpu_oom", "CUDA out of memory. Tried"),
        # TF: cuDNN handle errors after the BFC allocator's fatal OOM
        ("tf_cudnn_handle_after_oom.log", "tf-gpu-oom", "gpu_oom", "(rounded to"),
        # the kernel's assertion comes before the illegal access and launch failure it causes
        (
            "illegal_access_after_assert.log",
            "cuda-kernel-assertion",
            "device_side_assert",
            "Assertion `srcIndex < srcSelectDimSize` failed",
        ),
        # NCCL's "unhandled cuda error" whose last error is an out-of-memory
        ("nccl_unhandled_cuda_oom.log", "cuda-raw-oom", "gpu_oom", "Cuda failure 'out of memory'"),
        # the CUDA context itself does not fit: someone else holds the GPU
        (
            "tf_ctx_retain_oom.log",
            "cuda-context-oom",
            "gpu_memory_held_by_other_process",
            "cuDevicePrimaryCtxRetain: CUDA_ERROR_OUT_OF_MEMORY",
        ),
        (
            "smi_busy_context_oom.log",
            "torch-init-oom",
            "gpu_memory_held_by_other_process",
            "in set_device",
        ),
        (
            "torch_oom_fragmentation.log",
            "torch-oom-fragmentation",
            "gpu_oom_fragmentation",
            "reserved by PyTorch but unallocated",
        ),
        (
            "torch_oom_other_process.log",
            "torch-oom-other-process",
            "gpu_memory_held_by_other_process",
            "Process 40121 has 61.20 GiB",
        ),
        ("torch_oom_plain.log", "torch-cuda-oom", "gpu_oom", "CUDA out of memory"),
        (
            "arch_sm120.log",
            "torch-gpu-arch-unsupported",
            "arch_mismatch",
            "with CUDA capability sm_120 is not compatible",
        ),
    ],
)
def test_first_cause_and_its_line(
    book: RuleBook, fixture: str, rule: str, cause: str, evidence: str
) -> None:
    report = explain(book, fixture)
    top = report.causes[0]
    assert (top.rule, top.cause) == (rule, cause)
    assert first_line(top) == line_of(fixture, evidence)


def test_cascades_are_marked_explained(book: RuleBook) -> None:
    report = explain(book, "illegal_access_after_assert.log")
    by_rule = {d.rule: d for d in report.diagnoses}
    assert "cuda-kernel-assertion" in by_rule["cuda-illegal-memory-access"].explained_by
    assert by_rule["cuda-illegal-memory-access"].rank > by_rule["cuda-kernel-assertion"].rank
    assert by_rule["cuda-async-error-advice"].role == "advice"

    report = explain(book, "cublas_after_oom.log")
    cublas = next(d for d in report.diagnoses if d.cause == "cudnn_cublas_init")
    assert cublas.explained_by == ("torch-cuda-oom",)


def test_plain_oom_is_not_called_fragmentation(book: RuleBook) -> None:
    """Reserved (10.95) close to allocated (10.52 GiB): a plain OOM despite the hint."""
    causes = [d.cause for d in explain(book, "torch_oom_plain.log").causes]
    assert "gpu_oom_fragmentation" not in causes
    assert "gpu_memory_held_by_other_process" not in causes


def test_fragmentation_numbers_in_summary(book: RuleBook) -> None:
    top = explain(book, "torch_oom_fragmentation.log").causes[0]
    assert "11.80 GiB" in top.summary and "3.50 GiB" in top.summary


def test_old_driver_from_collect_env_alone(book: RuleBook) -> None:
    """torch built for CUDA 12.4 on driver 470: the vague 'CUDA unknown error' is explained."""
    report = explain(book, "driver_old_collect_env.log")
    assert report.facts["driver_too_old"] is True
    assert report.causes[0].cause == "driver_cuda_mismatch"


def test_tf_without_gpu_is_not_an_alarm(book: RuleBook) -> None:
    report = explain(book, "tf_cpu_only_cudart.log")
    assert all(d.confidence < 0.5 for d in report.causes)


def test_tf_cudart_notice_does_not_hide_the_program_error(book: RuleBook) -> None:
    # TensorFlow's cudart dlerror on a machine without a GPU is a notice: the exception that
    # follows is the cause, and the notice does not explain it away
    report = explain(book, "tf_cudart_then_app_error.log")
    assert report.causes[0].cause == "app_exception"
    assert all(d.confidence < 0.5 for d in report.causes if d.cause != "app_exception")


@pytest.mark.parametrize(
    ("text", "cause"),
    [
        ("RuntimeError: Expected all tensors to be on the same device, but found at least two "
         "devices, cuda:0 and cpu!", "device_mismatch"),
        ("E tensorflow/stream_executor/cuda/cuda_event.cc:48] Error polling for event status: "
         "failed to query event: CUDA_ERROR_LAUNCH_TIMEOUT: the launch timed out and was "
         "terminated", "launch_timeout"),
        ("Failed to initialize NVML: Driver/library version mismatch", "driver_cuda_mismatch"),
        ("[rank3]: RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some "
         "cuda functions before calling NumCudaDevices() that might have already set an error? "
         "Error 804: forward compatibility was attempted on non supported HW",
         "driver_cuda_mismatch"),
        ("ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory",
         "cuda_libs_missing"),
        ("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying "
         "to allocate 8589934592 bytes.", "gpu_oom"),
        ("RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling "
         "`cublasCreate(handle)`", "gpu_oom"),
    ],
)  # fmt: skip
def test_single_lines(book: RuleBook, text: str, cause: str) -> None:
    assert explain_text(text, book).causes[0].cause == cause


@pytest.mark.parametrize(
    "text",
    [
        "W tensorflow/core/common_runtime/bfc_allocator.cc:237] Allocator (GPU_0_bfc) ran out of "
        "memory trying to allocate 2.39GiB with freed_by_count=0. The caller indicates that this "
        "is not a failure, but may mean that there could be performance gains if more memory "
        "were available.",
        "W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic "
        "library 'libnvinfer.so.7'; dlerror: libnvinfer.so.7: cannot open shared object file: "
        "No such file or directory",
        "E tensorflow/compiler/xla/stream_executor/cuda/cuda_dnn.cc:9342] Unable to register "
        "cuDNN factory: Attempting to register factory for plugin cuDNN when one has already "
        "been registered",
        "export CUDA_VISIBLE_DEVICES=0,1",
        "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
    ],
)
def test_near_misses_raise_no_gpu_cause(book: RuleBook, text: str) -> None:
    assert [d for d in explain_text(text, book).causes if d.confidence >= 0.5] == []


@pytest.mark.parametrize(
    ("text", "cause"),
    [
        (
            "ggml_vulkan: Device memory allocation of size 2147483648 failed.\n"
            "terminate called after throwing an instance of 'vk::OutOfDeviceMemoryError'\n"
            "  what():  vk::Device::allocateMemory: ErrorOutOfDeviceMemory\n",
            "gpu_oom",
        ),
        (
            "terminate called after throwing an instance of 'vk::DeviceLostError'\n"
            "  what():  vk::Queue::submit: ErrorDeviceLost\n",
            "launch_timeout",
        ),
        (
            "RuntimeError: level_zero backend failed with error: 20 "
            "(UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)\n",
            "gpu_oom",
        ),
        (
            "[METAL] Command buffer execution failed: Caused GPU Timeout Error "
            "(00000002:kIOGPUCommandBufferCallbackErrorTimeout)\n",
            "launch_timeout",
        ),
        (
            "RuntimeError: Device(id:1) memory isn't enough and alloc failed, kernel name: "
            "Default/network-WithLossCell/_backbone-Net/conv2-Conv2d/Conv2D-op12, "
            "alloc size: 1610612736B.\n",
            "gpu_oom",
        ),
    ],
)
def test_other_gpu_apis_name_the_same_causes(book: RuleBook, text: str, cause: str) -> None:
    assert explain_text(text, book).causes[0].cause == cause


@pytest.mark.parametrize(
    ("text", "cause"),
    [
        ("./solver: symbol lookup error: ./solver: undefined symbol: cuMemAddressReserve_v2\n",
         "driver_cuda_mismatch"),
        ("    raise cudnnExceptions[status]\nlibcudnn.cudnnStatusArchMismatch\n", "arch_mismatch"),
        ("  File \"/opt/app/kernels.py\", line 88, in build\n"
         "cupy_backends.cuda.libs.nvrtc.NVRTCError: NVRTC_ERROR_INVALID_OPTION (5)\n",
         "arch_mismatch"),
        ("src/scatter_kernel.cu(57): error: no instance of overloaded function \"atomicAdd\" "
         "matches the argument list\n"
         "            argument types are: (__half *, __half)\n"
         "ninja: build stopped: subcommand failed.\n", "arch_mismatch"),
        ("Fatal Python error: PyEval_SaveThread: the function must be called with the GIL held, "
         "but the GIL is released (the current Python thread state is NULL)\n"
         "Python runtime state: initialized\n", "segfault_native"),
        ("[2026.03.02-10.11.12:345][  0]LogVulkanRHI: Error: Out of device memory while "
         "allocating a 64.00MB texture\n"
         "Signal 11 caught.\n"
         "Segmentation fault (core dumped)\n", "gpu_oom"),
    ],
)  # fmt: skip
def test_failures_named_by_loaders_compilers_and_wrappers(
    book: RuleBook, text: str, cause: str
) -> None:
    """A driver entry point the loader cannot find, a wrapper's exception class for a cuDNN
    status, NVRTC refusing its options, an atomic the target architecture lacks, CPython's own
    fatal error, an engine's GPU memory shortage it then crashed from."""
    causes = explain_text(text, book).causes
    assert causes[0].cause == cause


def test_nccl_sockets_over_a_bridge_explain_the_system_error(book: RuleBook) -> None:
    text = (
        "node-a:3112:3190 [0] NCCL INFO NET/Socket : Using [0]eth0:10.1.0.7<0> "
        "[1]br-1f2e3d4c5b6a:172.18.0.1<0>\n"
        "node-a:3112:3190 [0] NCCL INFO Using network Socket\n"
        "torch.distributed.DistBackendError: NCCL error in: "
        "../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, unhandled system error "
        "(run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1\n"
    )
    causes = explain_text(text, book).causes
    assert causes[0].rule == "nccl-socket-over-bridge-interfaces"
    assert causes[0].confidence >= 0.5
    assert [d.cause for d in causes].count("nccl_failure") == 1


def test_nccl_bridge_interfaces_alone_are_a_lead(book: RuleBook) -> None:
    text = (
        "node-a:3112:3190 [0] NCCL INFO NET/Socket : Using [0]eth0:10.1.0.7<0> "
        "[1]veth4a1b2c3:fe80::1%veth4a1b2c3<0>\n"
    )
    causes = explain_text(text, book).causes
    assert causes[0].cause == "nccl_failure" and causes[0].confidence < 0.5


@pytest.mark.parametrize(
    ("text", "cause", "rule"),
    [
        (" 12%|#2        | 3/25 [00:04<00:31, 1.42s/it]LLVM ERROR: Cannot select: intrinsic "
         "%llvm.nvvm.shfl.sync.bfly.i32\n", "arch_mismatch", "torch-gpu-arch-unsupported"),
        ("ERROR: Your GPU does not support Int8 Matmul!\n"
         "python3: /build/bnb/csrc/ops.cu:412: int igemmlt(cublasLtHandle_t, int, int, int): "
         "Assertion `false' failed.\n", "arch_mismatch", "torch-gpu-arch-unsupported"),
        ("2026-02-03 11:20:41.118204: W tensorflow/compiler/xla/stream_executor/platform/default/"
         "dso_loader.cc:64] Could not load dynamic library 'libnvinfer.so.8'; dlerror: "
         "libnvrtc.so.12: cannot open shared object file: No such file or directory\n"
         "2026-02-03 11:20:41.118290: F tensorflow/compiler/tf2tensorrt/stub/nvinfer_stub.cc:49] "
         "getInferLibVersion symbol not found.\n"
         "Aborted (core dumped)\n", "cuda_libs_missing", "cuda-libs-missing"),
        ("building 'fastconv._C' extension\n"
         "csrc/conv_cudnn.cu:3:10: fatal error: cudnn.h: No such file or directory\n"
         "error: command '/usr/local/cuda/bin/nvcc' failed with exit code 1\n",
         "cuda_libs_missing", "cuda-toolkit-not-found"),
        ("Unhandled Exception: System.ApplicationException: CUDA error occurred while copying "
         "the results back: out of memory\n", "gpu_oom", None),
        ("2026-04-02 08:14:21,551\tWARNING algorithm.py:811 -- Worker crashed during call to "
         "`step_attempt()`. To try to continue training without failed worker(s), set "
         "`ignore_worker_failures=True`.\n", "host_oom", "ray-worker-died-unexpectedly"),
    ],
)  # fmt: skip
def test_terminal_errors_of_jit_compilers_builds_and_wrappers(
    book: RuleBook, text: str, cause: str, rule: str | None
) -> None:
    """LLVM's selector failing on an NVPTX intrinsic, bitsandbytes' int8 refusal before its
    assert, TensorFlow's TensorRT stub aborting, a build missing cuDNN's header, a wrapper that
    says when the CUDA error occurred, a Ray worker that died without an error."""
    first = explain_text(text, book).causes[0]
    assert first.cause == cause
    if rule is not None:
        assert first.rule == rule


@pytest.mark.parametrize(
    "text",
    [
        # TF-TRT's probe at import, nothing needing TensorRT afterwards
        "2026-02-03 11:20:41.118204: W tensorflow/compiler/xla/stream_executor/platform/default/"
        "dso_loader.cc:64] Could not load dynamic library 'libnvinfer.so.8'; dlerror: "
        "libnvrtc.so.12: cannot open shared object file: No such file or directory\n"
        "Epoch 1/10\n",
        # an extension written for a torch that still had THC
        "csrc/ext.cpp:4:10: fatal error: THC/THC.h: No such file or directory\n",
        # CMake finding the header is not a failure
        "-- Found CUDNN: /usr/include/cudnn.h\n",
    ],
)
def test_loader_and_header_look_alikes_raise_no_gpu_cause(book: RuleBook, text: str) -> None:
    assert [d for d in explain_text(text, book).causes if d.confidence >= 0.5] == []


def test_host_assertion_is_a_native_abort_with_its_condition(book: RuleBook) -> None:
    text = "python3: /src/pool.cpp:88: void Pool::release(int): Assertion `slot < cap' failed.\n"
    first = explain_text(text, book).causes[0]
    assert first.cause == "segfault_native"
    assert "slot < cap" in first.summary


@pytest.mark.parametrize(
    ("text", "cause", "rule"),
    [
        ("RuntimeError: No compatible CUDA binary found at /srv/venv/lib/python3.12/site-packages/"
         "bitsandbytes/libbitsandbytes_cuda129.so\n", "cuda_libs_missing",
         "bitsandbytes-cuda-setup-failed"),
        ("🚨 CUDA SETUP ERROR: Missing dependency: libcublasLt.so.12 🚨\n"
         "CUDA 12.x runtime libraries were not found in the LD_LIBRARY_PATH.\n",
         "cuda_libs_missing", "bitsandbytes-cuda-setup-failed"),
        ("deepspeed.ops.op_builder.builder.MissingCUDAException: Unable to run "
         "/opt/cuda/bin/nvcc, unable to compile CUDA op(s): [Errno 2] No such file or directory\n",
         "cuda_libs_missing", "cuda-toolkit-not-found"),
        ("RuntimeError: Workspace can't be allocated, no enough memory.\n", "gpu_oom",
         "cuda-raw-oom"),
        ("Cuda failure csrc/includes/context.h:52: 'out of memory'\n", "gpu_oom",
         "cuda-runtime-errors-memory-allocation"),
        ('time=2026-05-02T09:12:44.118Z level=WARN source=amd_linux.go:470 msg="dropping ROCm '
         'device — no rocblas support for gfx target" id=0 gfx=gfx1032\n', "arch_mismatch",
         "rocm-no-kernels-for-gpu"),
        ("numba.cuda.cudadrv.error.CudaDriverError: Driver missing function: cuLibraryLoadData\n",
         "driver_cuda_mismatch", "cuda-driver-too-old"),
        ("numba.cuda.cudadrv.error.NvvmSupportError: libNVVM is not available\n",
         "cuda_libs_missing", "cuda-libs-missing"),
        ("FileNotFoundError: Unable to find cuda_runtime.h from /opt/cuda-12.6/include\n",
         "cuda_libs_missing", "cuda-toolkit-not-found"),
    ],
)  # fmt: skip
def test_messages_in_the_formats_of_the_libraries_sources(
    book: RuleBook, text: str, cause: str, rule: str | None
) -> None:
    """bitsandbytes' binary selection and dependency report, DeepSpeed's op builder, inference
    workspace and CUDA check, Ollama's ROCm discovery, numba-cuda's driver and NVVM bindings."""
    first = explain_text(text, book).causes[0]
    assert first.cause == cause
    if rule is not None:
        assert first.rule == rule


@pytest.mark.parametrize(
    ("text", "cause", "rule"),
    [
        # older NVRTC without the builtins library's name
        ("Could not find nvcc. Using runtime compiler.\n"
         "exception: Error compiling program: nvrtc: error: failed to load builtins for "
         "compute_86.\n", "cuda_libs_missing", "cuda-libs-missing"),
        # a run-time link by a program whose nvJitLink is older than its device code
        ("JIT link of the kernels failed\n"
         "ERROR 4 in nvvmAddNVVMContainerToProgram, may need newer version of nvJitLink library\n"
         "nvJitLink error: Internal error\nAborted (core dumped)\n",
         "driver_cuda_mismatch", "cuda-build-version-mismatch"),
        # the shell's prompt right after a model started loading: the process vanished
        ("PS D:\\work\\chat> python .\\chat.py --model mixtral-8x7b\n"
         "Loading checkpoint shards:   0%|          | 0/19 [00:00<?, ?it/s]\n"
         "PS D:\\work\\chat>\n", "host_oom", "silent-exit-while-loading-model"),
        # kubectl describe node, the allocatable line pointed at in the paste
        ("Capacity:\n  cpu:   64\n  nvidia.com/gpu:   4\nAllocatable:\n  cpu:   63\n"
         "  nvidia.com/gpu:   3     <-- why?\n", "xid_hardware", "k8s-gpu-unhealthy-allocatable"),
        # an MD reporter whose energy leapt and stayed
        ("#\"Step\",\"Potential Energy (kJ/mole)\",\"Temperature (K)\"\n"
         "20000,-81234.5,301.2\n21000,-81190.7,300.8\n22000,4.1e+22,8.2e+13\n"
         "23000,9.4e+21,8.1e+13\n", "nan_blowup", "numeric-table-exploded"),
        # Ray's warning about a 64 MiB /dev/shm, where the log ends before the failure
        ("2026-04-11 10:02:13,551\tWARNING services.py:2009 -- WARNING: The object store is using "
         "/tmp instead of /dev/shm because /dev/shm has only 67108864 bytes available. This will "
         "harm performance!\nINFO 04-11 10:02:15 llm_engine.py:98] Initializing an LLM engine\n",
         "shm_exhausted", "dev-shm-small-in-log"),
    ],
)  # fmt: skip
def test_formats_and_shapes_of_the_thirty_first_round(
    book: RuleBook, text: str, cause: str, rule: str
) -> None:
    """NVRTC's nameless builtins failure, an nvJitLink too old for its code, a process that
    returned to the shell while loading, a GPU withdrawn from allocatable, a table of values
    that blew up, a container's small /dev/shm."""
    first = explain_text(text, book).causes[0]
    assert (first.cause, first.rule) == (cause, rule)


def test_a_small_dev_shm_is_a_lead_and_a_large_one_nothing(book: RuleBook) -> None:
    warning = (
        "WARNING: The object store is using /tmp instead of /dev/shm because /dev/shm has only "
        "{} bytes available. This will harm performance!\n"
    )
    small = explain_text(warning.format(67108864), book).causes
    assert small[0].rule == "dev-shm-small-in-log" and small[0].confidence < 0.5
    large = explain_text(warning.format(2147483648), book).causes
    assert "dev-shm-small-in-log" not in [d.rule for d in large]


@pytest.mark.parametrize(
    ("text", "cause", "rule"),
    [
        # an options dump that asked for the CPU, then a CUDA call without a driver
        ("----------------- Options ---------------\n"
         "               batch_size: 4\n"
         "                  gpu_ids: -1                            \t[default: 0]\n"
         "Traceback (most recent call last):\n"
         '  File "train.py", line 40, in <module>\n'
         "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an "
         "NVIDIA GPU and installed a driver\n", "app_exception", "cuda-called-on-cpu-run"),
        ("$ python detect.py --source clip.mp4 --device cpu\n"
         "AssertionError: Torch not compiled with CUDA enabled\n",
         "app_exception", "cuda-called-on-cpu-run"),
        # an extension built with a toolkit of another CUDA than torch's: a version mismatch
        ("      RuntimeError:\n"
         "      The detected CUDA version (12.4) mismatches the version that was used to "
         "compile\n      PyTorch (11.8). Please make sure to use the same CUDA versions.\n",
         "driver_cuda_mismatch", "cuda-build-version-mismatch"),
        # torch's shared-memory error cut where the paste ended, inside the segment's name
        ("    fd, size = storage._share_fd_()\nRuntimeError: unable to write to file </torch_\n",
         "shm_exhausted", "torch-shared-memory-failed"),
        # the job's store gone: the rank that hosted it died first
        ("Traceback (most recent call last):\n"
         '  File "train.py", line 88, in <module>\n'
         "    dist.barrier()\n"
         "torch.distributed.DistNetworkError: failed to recv, got 0 bytes\n",
         "nccl_failure", "distributed-store-connection-lost"),
    ],
)  # fmt: skip
def test_formats_and_shapes_of_the_thirty_second_round(
    book: RuleBook, text: str, cause: str, rule: str
) -> None:
    """A CUDA call in a run told to use the CPU, a toolkit of another CUDA than torch's, a
    shared-memory error cut short, a rank that lost the job's store."""
    first = explain_text(text, book).causes[0]
    assert (first.cause, first.rule) == (cause, rule)


def test_lightning_all_gpus_is_not_a_cpu_request(book: RuleBook) -> None:
    text = "trainer: {gpus: -1, precision: 16}\nRuntimeError: No CUDA GPUs are available\n"
    assert "cuda-called-on-cpu-run" not in [d.rule for d in explain_text(text, book).causes]


def test_tensorrt_builder_skipping_tactics_is_no_likely_oom(book: RuleBook) -> None:
    oom = (
        "[03/02/2026-11:04:05] [TRT] [E] 2: [virtualMemoryBuffer.cpp::resizePhysical::145] "
        "Error Code 2: OutOfMemory (no further information)\n"
        "[03/02/2026-11:04:05] [TRT] [W] Requested amount of GPU memory (8589934592 bytes) could "
        "not be allocated. There may not be enough free memory for allocation to succeed.\n"
    )
    skipped = (
        "[03/02/2026-11:04:05] [TRT] [W] Skipping tactic 4 due to insufficient memory on "
        "requested size of 8589934592 detected for tactic 0x0000000000000021.\n"
    )
    alone = explain_text(oom, book).causes[0]
    assert (alone.cause, alone.confidence >= 0.5) == ("gpu_oom", True)
    assert [d for d in explain_text(oom + skipped, book).causes if d.confidence >= 0.5] == []
    assert not explain_text(skipped, book).causes


def test_the_watchdogs_store_warning_at_exit_is_no_alarm(book: RuleBook) -> None:
    text = (
        "[rank1]:[W1125 10:11:12.345678 4121 ProcessGroupNCCL.cpp:1250] [PG 0 (default_pg) Rank "
        '1] Failed to check the "should dump" flag on TCPStore, (maybe TCPStore server has shut '
        "down too early), with error: Connection reset by peer\n"
    )
    assert [d for d in explain_text(text, book).causes if d.confidence >= 0.5] == []


def test_a_warning_that_names_an_error_the_reader_might_meet_is_no_alarm(book: RuleBook) -> None:
    warning = (
        "UserWarning: Found duplicate ['libcudart.so', 'libcudart.so.11.0'] files.. We'll flip a "
        "coin and try one of these, in order to fail forward.\n"
        "If you get `CUDA error: invalid device function` errors, the above might be the cause "
        "and the solution is to make sure only one ['libcudart.so'] in the paths\n"
    )
    assert [d for d in explain_text(warning, book).causes if d.confidence >= 0.5] == []
    failed = warning + "RuntimeError: CUDA error: invalid device function\n"
    assert explain_text(failed, book).causes[0].cause == "arch_mismatch"
