"""Hidden causes offered as alternatives behind a strong surface signature.

Each log is written from the message formats with our own numbers, hosts and paths. The
surface diagnosis must stay first; the usual hidden cause must follow it, below the alarm
threshold, and be folded into the real diagnosis when the log shows that cause itself.
"""

from __future__ import annotations

import pytest

from gpudoctor.pipeline import explain_text
from gpudoctor.rulebook.book import RuleBook, load_rulebook

ALARM = 0.5


@pytest.fixture(scope="module")
def book() -> RuleBook:
    return load_rulebook()


def _causes(text: str, book: RuleBook) -> list[tuple[str, float]]:
    return [(d.cause, d.confidence) for d in explain_text(text, book).causes]


@pytest.mark.parametrize(
    ("text", "surface", "hidden"),
    [
        (
            "Traceback (most recent call last):\n"
            '  File "/home/ana/fit.py", line 31, in <module>\n'
            "    logits = head(features)\n"
            "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling "
            "`cublasCreate(handle)`\n",
            "cudnn_cublas_init",
            "gpu_oom",
        ),
        (
            "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling "
            "`cublasCreate(handle)`\n",
            "cudnn_cublas_init",
            "device_side_assert",
        ),
        (
            "2024-03-02 10:00:01.000001: E tensorflow/stream_executor/cuda/cuda_dnn.cc:361] "
            "Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR\n",
            "cudnn_cublas_init",
            "gpu_oom",
        ),
        (
            "[81234.551020] NVRM: Xid (PCI:0000:c1:00): 79, pid=40112, name=python, "
            "GPU has fallen off the bus.\n",
            "xid_hardware",
            "thermal_power",
        ),
        (
            "[I 14:20:01.101 NotebookApp] Kernel started: 11111111-2222-3333-4444-555555555555\n"
            "The kernel appears to have died. It will restart automatically.\n",
            "jupyter_kernel_died",
            "host_oom",
        ),
    ],
)
def test_the_hidden_cause_follows_the_surface_one(
    text: str, surface: str, hidden: str, book: RuleBook
) -> None:
    causes = _causes(text, book)
    names = [c for c, _ in causes]
    assert names[0] == surface
    assert hidden in names[1:3]
    lead = dict(causes)[hidden]
    assert lead < ALARM
    assert lead < causes[0][1]


def test_an_unspecified_launch_failure_offers_the_gpu_first_and_the_kernel_bug_second(
    book: RuleBook,
) -> None:
    causes = _causes(
        "RuntimeError: CUDA error: unspecified launch failure\n"
        "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n",
        book,
    )
    names = [c for c, _ in causes]
    assert names[:2] == ["xid_hardware", "illegal_memory_access"]
    assert all(confidence < ALARM for _, confidence in causes)


def test_the_lead_is_folded_into_a_real_oom(book: RuleBook) -> None:
    text = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a "
        "total capacity of 23.65 GiB of which 101.44 MiB is free.\n"
        "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED\n"
    )
    names = [c for c, _ in _causes(text, book)]
    assert names[0] == "gpu_oom"
    assert names.count("gpu_oom") == 1


def test_the_lead_is_folded_into_an_observed_thermal_finding(book: RuleBook) -> None:
    text = (
        "[ 700.100000] NVRM: Xid (PCI:0000:17:00): 54, pid=3310, name=trainer, Ch 00000000\n"
        "[ 702.200000] NVRM: Xid (PCI:0000:17:00): 79, pid=3310, name=trainer, "
        "GPU has fallen off the bus.\n"
    )
    thermal = [conf for c, conf in _causes(text, book) if c == "thermal_power"]
    assert len(thermal) == 1 and thermal[0] >= ALARM  # Xid 54's finding, the lead folded in


def test_a_healthy_cudnn_log_has_no_lead(book: RuleBook) -> None:
    text = (
        "I tensorflow/stream_executor/platform/default/dso_loader.cc:53] Successfully opened "
        "dynamic library libcudnn.so.8\n"
        "Epoch 1/3 - loss: 0.6931\n"
    )
    assert _causes(text, book) == []


SANITIZER_REPORTS = {
    "whole": (
        "========= COMPUTE-SANITIZER\n"
        '========= Program hit cudaErrorLaunchFailure (error 719) due to "unspecified launch '
        'failure" on CUDA API call to cudaStreamSynchronize.\n'
        "=========     Saved host backtrace up to driver entry point at error\n"
        "=========     Host Frame: [0x2f1a3b] in /usr/lib/x86_64-linux-gnu/libcuda.so.1\n"
        "=========     Host Frame:run_batch(Batch const&) [0x41c2] in /opt/sim/bin/sim\n"
    ),
    # an excerpt that keeps only the report's end
    "excerpt": (
        "=========     Host Frame:run_layer [0x1f2e3] in /opt/infer/bin/serve\n"
        "CUDA error: unspecified launch failure\n"
        "========= Target application returned an error\n"
        "========= ERROR SUMMARY: 212 errors\n"
    ),
}


@pytest.mark.parametrize("name", sorted(SANITIZER_REPORTS))
def test_launch_failure_under_a_memory_checker_is_the_kernel_not_the_gpu(
    name: str, book: RuleBook
) -> None:
    causes = _causes(SANITIZER_REPORTS[name], book)
    assert causes[0][0] == "illegal_memory_access"
    assert all(conf < 0.3 for cause, conf in causes if cause == "xid_hardware")


def test_a_tensorflow_oom_on_the_cpu_device_is_host_memory(book: RuleBook) -> None:
    text = (
        "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating "
        "tensor with shape[512,96,96] and type float on /job:localhost/replica:0/task:0/"
        "device:CPU:0 by allocator cpu\n"
        "Hint: If you want to see a list of allocated tensors when OOM happens, add "
        "report_tensor_allocations_upon_oom to RunOptions for current allocation info.\n"
    )
    causes = _causes(text, book)
    assert causes[0][0] == "host_oom"
    assert "gpu_oom" not in [c for c, _ in causes]


def test_jax_backend_start_up_failing_is_not_a_forked_child(book: RuleBook) -> None:
    text = (
        "CUDA backend failed to initialize: jaxlib/cuda/versions_helpers.cc:90: operation "
        "gpuDeviceGetAttribute(&major, GPU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device) "
        "failed: CUDA_ERROR_NOT_INITIALIZED (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more "
        "info.)\n"
    )
    causes = _causes(text, book)
    assert causes[0][0] == "cuda_libs_missing"
    assert all(conf < ALARM for cause, conf in causes if cause == "fork_cuda_reinit")


@pytest.mark.parametrize(
    "text",
    [
        # a pasted memory table with no RAM left
        "$ free -h\n"
        "               total        used        free      shared  buff/cache   available\n"
        "Mem:           125Gi       124Gi       402Mi        20Mi       610Mi       530Mi\n"
        "Swap:             0B          0B          0B\n",
        # a large allocation, but one a machine can have
        "RuntimeError: [enforce fail at alloc_cpu.cpp:75] err == 0. DefaultCPUAllocator: can't "
        "allocate memory: you tried to allocate 412316860416 bytes. Error code 12 (Cannot "
        "allocate memory)\n",
    ],
)
def test_host_memory_without_an_error_of_its_own_is_host_oom(text: str, book: RuleBook) -> None:
    assert _causes(text, book)[0][0] == "host_oom"


@pytest.mark.parametrize(
    "text",
    [
        "tcmalloc: large alloc 140312553873408 bytes == (nil) @  0x7f9d21a4c887 0x7f9d2031ac29\n"
        "terminate called after throwing an instance of 'std::bad_alloc'\n"
        "  what():  std::bad_alloc\n",
        "terminate called after throwing an instance of 'c10::Error'\n"
        "  what():  [enforce fail at alloc_cpu.cpp:75] err == 0. DefaultCPUAllocator: can't "
        "allocate memory: you tried to allocate 61474836480000 bytes. Error code 12 (Cannot "
        "allocate memory)\n",
    ],
)
def test_an_impossible_allocation_size_is_the_bug_not_the_memory(text: str, book: RuleBook) -> None:
    causes = _causes(text, book)
    assert causes[0][0] == "app_exception"
    assert all(conf < ALARM for cause, conf in causes if cause == "host_oom")


def test_a_toolkit_newer_than_the_driver_is_a_lead_within_a_major(book: RuleBook) -> None:
    banner = "| NVIDIA-SMI 535.183.01   Driver Version: 535.183.01   CUDA Version: 12.2     |\n"
    same_major = banner + "Cuda compilation tools, release 12.6, V12.6.77\n"
    assert _causes(same_major, book)[0] == ("driver_cuda_mismatch", 0.35)
    other_major = banner + "Cuda compilation tools, release 13.0, V13.0.48\n"
    assert _causes(other_major, book)[0] == ("driver_cuda_mismatch", 0.6)


def test_an_oom_with_the_gpu_mostly_free_is_not_a_plain_oom(book: RuleBook) -> None:
    message = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {asked}. GPU 0 has a total "
        "capacity of 15.70 GiB of which {free} is free. Of the allocated memory {held} is "
        "allocated by PyTorch, and 30.00 MiB is reserved by PyTorch but unallocated.\n"
    )
    full = _causes(message.format(asked="2.00 GiB", free="410.00 MiB", held="14.90 GiB"), book)
    assert full[0] == ("gpu_oom", 0.9)
    roomy = _causes(message.format(asked="40.00 MiB", free="12.90 GiB", held="2.10 GiB"), book)
    assert roomy[0][0] == "gpu_oom"
    assert roomy[0][1] < 0.6


def test_a_programs_timeout_hint_does_not_demote_its_illegal_address(book: RuleBook) -> None:
    # COLMAP prints its watchdog hint after every CUDA error it reports
    hint = (
        "This error is likely caused by the graphics card timeout detection mechanism of your "
        "operating system. Please refer to the FAQ in the documentation on how to solve this "
        "problem.\n"
    )
    illegal = _causes(
        "CUDA error at /opt/src/mvs/mat_ops.cu:118 - an illegal memory access was encountered\n"
        + hint,
        book,
    )
    assert illegal[0][0] == "illegal_memory_access" and illegal[0][1] >= ALARM
    assert "launch_timeout" in [c for c, _ in illegal[1:3]]
    # the watchdog's own symptom is still read as the watchdog
    launch = _causes(
        "CUDA error at /opt/src/mvs/patch_match.cu:740 - unspecified launch failure\n" + hint,
        book,
    )
    assert launch[0][0] == "launch_timeout"


@pytest.mark.parametrize(
    ("line", "top"),
    [
        # the rasterizer and the host interface run no compute kernel
        (
            "[ 5120.300400] NVRM: Xid (PCI:0000:0b:00): 31, pid=3301, name=vkgears, Ch 0000002a, "
            "intr 00000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_RAST faulted @ 0x0_00000000. "
            "Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ",
            "xid_hardware",
        ),
        (
            "[ 5120.300400] NVRM: Xid (PCI:0000:0b:00): 13, pid=3301, Graphics Exception on GPC "
            "2: 3D HEIGHT CT Violation. Coordinates: (0x40, 0x1f0)",
            "xid_hardware",
        ),
        # the SM's load/store path: a kernel's bad address
        (
            "[ 5120.300400] NVRM: Xid (PCI:0000:0b:00): 31, pid=3301, name=python3, Ch 00000008, "
            "intr 00000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_2 faulted @ 0x7f22_10000000. "
            "Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_WRITE",
            "illegal_memory_access",
        ),
    ],
)
def test_where_an_xid_13_or_31_faulted_says_whose_fault_it_is(
    line: str, top: str, book: RuleBook
) -> None:
    causes = _causes(line + "\n", book)
    assert causes[0][0] == top
    assert len({c for c, _ in causes}) == len(causes)  # one diagnosis per cause


def test_a_power_clocks_event_is_a_lead_a_thermal_one_an_alarm(book: RuleBook) -> None:
    message = (
        "gpu-health: ErrorCode:DCGM_FR_CLOCKS_EVENT_{kind} GPU:1 Detected clocks event due to "
        "{word} violation in GPU 1.\n"
    )
    power = _causes(message.format(kind="POWER", word="power"), book)
    thermal = _causes(message.format(kind="THERMAL", word="thermal"), book)
    assert power[0][0] == "thermal_power" and power[0][1] < ALARM
    assert thermal[0][0] == "thermal_power" and thermal[0][1] >= ALARM


def test_a_blue_screen_in_the_gpu_driver_defers_to_the_watchdogs_stop_code(book: RuleBook) -> None:
    screen = "Your device ran into a problem and needs to restart.\nStop code: {code}\n"
    tdr = _causes(screen.format(code="VIDEO_TDR_FAILURE") + "What failed: nvlddmkm.sys\n", book)
    assert [c for c, _ in tdr][:2] == ["launch_timeout", "xid_hardware"]
    other = _causes(
        screen.format(code="SYSTEM_SERVICE_EXCEPTION") + "What failed: dxgkrnl.sys\n", book
    )
    assert other[0][0] == "xid_hardware" and other[0][1] >= ALARM


@pytest.mark.parametrize(
    ("line", "top"),
    [
        # the numbers of CUDA < 10.1: 4 was the launch failure (now cudaErrorCudartUnloading)
        (
            "THCudaCheck FAIL file=/opt/cutorch/lib/THC/THCTensorCopy.cu line=31 error=4 : "
            "unspecified launch failure",
            "illegal_memory_access",
        ),
        (
            "RuntimeError: cuda runtime error (4) : unspecified launch failure at "
            "/opt/pytorch/aten/src/THC/THCCachingHostAllocator.cpp:265",
            "illegal_memory_access",
        ),
    ],
)
def test_an_old_logs_error_number_gives_way_to_its_text(
    line: str, top: str, book: RuleBook
) -> None:
    diagnoses = explain_text(line + "\n", book).causes
    assert top in [d.cause for d in diagnoses[:2]]
    assert not any(d.rule == "cuda-runtime-errors-cudart-unloading" for d in diagnoses)


def test_a_thc_check_with_only_its_number_is_still_read(book: RuleBook) -> None:
    line = "THCudaCheck FAIL file=/opt/cutorch/lib/THC/THCGeneral.c line=70 error=35 :\n"
    cause, confidence = _causes(line, book)[0]
    assert cause == "driver_cuda_mismatch"
    assert confidence >= 0.5


def test_a_gpu_that_pytorch_cannot_see_is_a_cpu_build_only_when_the_banner_says_so(
    book: RuleBook,
) -> None:
    error = (
        "ValueError: Invalid CUDA 'device=1' requested. Use 'device=cpu' or pass valid CUDA "
        "device(s) if available, i.e. 'device=0' or 'device=0,1,2,3' for Multi-GPU.\n"
    )
    banner = "Ultralytics 8.2.77 \N{ROCKET} Python-3.11.4 torch-{torch} CUDA:0\n"
    cpu = _causes(banner.format(torch="2.3.1+cpu") + error, book)
    cuda = _causes(banner.format(torch="2.3.1+cu121") + error, book)
    assert cpu[0] == ("cuda_libs_missing", pytest.approx(0.85))
    assert cuda[0][0] == "cuda_libs_missing" and cuda[0][1] < ALARM


def test_nouveau_on_the_gpu_is_a_lead_that_the_nvidia_module_is_not_driving_it(
    book: RuleBook,
) -> None:
    log = (
        "[    5.101300] nouveau 0000:65:00.0: NVIDIA GA106 (b76000a1)\n"
        "[    5.232410] nouveau 0000:65:00.0: DRM: VRAM: 12288 MiB\n"
    )
    causes = _causes(log, book)
    assert causes[0][0] == "driver_cuda_mismatch" and 0.5 <= causes[0][1] < 0.75


_STFT_FAILURE = (
    '  File "/srv/tts/.venv/lib/python3.10/site-packages/torch/functional.py", line 650, in stft\n'
    "    return _VF.stft(input, n_fft, hop_length, win_length, window,\n"
    "RuntimeError: cuFFT error: CUFFT_INTERNAL_ERROR\n"
)


def test_cufft_internal_error_is_read_by_the_build_that_pytorch_ships(book: RuleBook) -> None:
    alone = _causes(_STFT_FAILURE, book)
    assert alone[0][0] == "arch_mismatch" and alone[0][1] < ALARM
    assert "cudnn_cublas_init" in [cause for cause, _ in alone[:3]]
    old = _causes("CUDA used to build PyTorch: 11.7\n" + _STFT_FAILURE, book)
    assert old[0][0] == "arch_mismatch" and old[0][1] >= 0.7
    new = _causes("CUDA used to build PyTorch: 12.1\n" + _STFT_FAILURE, book)
    assert new[0][0] == "cudnn_cublas_init"


@pytest.mark.parametrize(
    ("device", "archs", "fires"),
    [
        ("NVIDIA GeForce RTX 5070, compute capability 12.0", "610,700,750,800,860,890,900", True),
        ("Tesla M60, compute capability 5.2", "610,700,750,800", True),
        ("NVIDIA GeForce RTX 4070, compute capability 8.9", "520,610,700,750,800", False),
        ("NVIDIA A100-SXM4-80GB, compute capability 8.0", "800", False),
    ],
)
def test_a_ggml_build_without_the_gpus_architecture(
    device: str, archs: str, fires: bool, book: RuleBook
) -> None:
    log = (
        "ggml_cuda_init: found 1 CUDA devices:\n"
        f"  Device 0: {device}, VMM: yes\n"
        f"system_info: n_threads = 8 / 16 | CUDA : ARCHS = {archs} | USE_GRAPHS = 1 |\n"
    )
    causes = _causes(log, book)
    assert (causes[:1] == [("arch_mismatch", pytest.approx(0.4))]) is fires


def test_tensorflows_gpu_initialisation_with_an_invalid_image_is_a_build_for_other_gpus(
    book: RuleBook,
) -> None:
    log = (
        "tensorflow.python.framework.errors_impl.InternalError: CUDA runtime implicit "
        "initialization on GPU:0 failed. Status: device kernel image is invalid\n"
    )
    causes = _causes(log, book)
    assert causes[0][0] == "arch_mismatch"
    assert "driver_cuda_mismatch" in [cause for cause, _ in causes[1:3]]


def test_the_banners_cuda_version_err_is_not_a_gpu_reading(book: RuleBook) -> None:
    table = (
        "+-----------------------------------------------------------------------------+\n"
        "| NVIDIA-SMI 470.199.02   Driver Version: 470.199.02   CUDA Version: ERR!     |\n"
        "|-------------------------------+----------------------+----------------------+\n"
        "|   0  Tesla T4            On   | 00000000:00:1E.0 Off |                    0 |\n"
        "| N/A   31C    P8     9W /  70W |      0MiB / 15109MiB |      0%      Default |\n"
    )
    assert "xid_hardware" not in [cause for cause, _ in _causes(table, book)]
    broken = table.replace("| N/A   31C    P8     9W", "| ERR!  ERR!   ERR!   ERR!")
    assert _causes(broken, book)[0][0] == "xid_hardware"


def test_xformers_without_its_kernels_is_missing_gpu_code(book: RuleBook) -> None:
    log = (
        "NotImplementedError: No operator found for `memory_efficient_attention_forward` "
        "with inputs:\n"
        "     query       : shape=(2, 1024, 8, 64) (torch.float16)\n"
        "`fa2F@2.5.7-pt` is not supported because:\n"
        "    xFormers wasn't build with CUDA support\n"
        "`cutlassF-pt` is not supported because:\n"
        "    xFormers wasn't build with CUDA support\n"
    )
    assert _causes(log, book)[0] == ("cuda_libs_missing", pytest.approx(0.8))


def test_a_vgpu_start_error_is_a_guest_driver_the_host_does_not_support(
    book: RuleBook,
) -> None:
    for line in (
        "[   12.480112] NVRM: Xid (PCI:0000:00:10): 78, pid=1022, name=nvidia-smi, Ch 00000001\n",
        "Xid 78: Guest driver is incompatible with host driver\n",
    ):
        cause, confidence = _causes(line, book)[0]
    assert cause == "driver_cuda_mismatch"
    assert confidence >= 0.5


def test_colmaps_dense_stereo_failing_is_the_watchdog_unless_it_names_another_error(
    book: RuleBook,
) -> None:
    failure = (
        "cudaCheckError() with sync failed at C:/src/colmap/src/colmap/mvs/"
        "patch_match_cuda.cu:1290 : {error}\n"
    )
    unknown = _causes(failure.format(error="unknown error"), book)
    assert unknown[0] == ("launch_timeout", pytest.approx(0.5))
    memory = _causes(failure.format(error="out of memory"), book)
    assert "launch_timeout" not in [cause for cause, _ in memory]


def test_an_exclusive_compute_mode_is_only_a_lead(book: RuleBook) -> None:
    row = "| 27%   31C    P8    14W / 250W |     10MiB / 11264MiB |      0%   E. Process |\n"
    assert _causes(row, book)[0] == ("gpu_memory_held_by_other_process", pytest.approx(0.3))
    busy = row + "RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable\n"
    assert _causes(busy, book)[0] == ("gpu_memory_held_by_other_process", pytest.approx(0.65))


@pytest.mark.parametrize(
    ("line", "cause"),
    [
        ("cuBLAS API failed with status 15\n", "arch_mismatch"),
        ("Runtime Error: CUDA error: device side assert triggered\n", "device_side_assert"),
        ("RuntimeError: DeformConv is not compiled with GPU support\n", "cuda_libs_missing"),
        (
            '[name: "/device:CPU:0"\ndevice_type: "CPU"\nmemory_limit: 268435456\n]\n',
            "cuda_libs_missing",
        ),
    ],
)
def test_formats_a_report_retypes_or_a_wrapper_prints(
    line: str, cause: str, book: RuleBook
) -> None:
    assert _causes(line, book)[0][0] == cause


def test_a_dnn_library_not_found_alone_is_cudnn_failing_to_start(book: RuleBook) -> None:
    failure = (
        "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Failed to determine best cudnn "
        "convolution algorithm for:\n%cudnn-conv = (f32[4,32,32,16]{2,1,3,0}, u8[0]{0}) "
        "custom-call(f32[4,32,32,3]{2,1,3,0} %p0, f32[3,3,3,16]{1,0,2,3} %p1)\n\n"
        "Original error: UNIMPLEMENTED: DNN library is not found.\n"
    )
    causes = [cause for cause, _ in _causes(failure, book)]
    assert causes[:3] == ["cudnn_cublas_init", "cuda_libs_missing", "gpu_oom"]
    missing = (
        "W external/xla/xla/stream_executor/platform/default/dso_loader.cc:64] Could not load "
        "dynamic library 'libcudnn.so.8'; dlerror: libcudnn.so.8: cannot open shared object "
        "file: No such file or directory\n" + failure
    )
    assert _causes(missing, book)[0][0] == "cuda_libs_missing"


def test_a_driver_call_not_ready_is_a_gpu_reset_and_a_query_is_not(book: RuleBook) -> None:
    driver = (
        '  File "/srv/app/model.py", line 88, in forward\n'
        "RuntimeError: CUDA driver error: device not ready\n"
    )
    assert _causes(driver, book)[0] == ("launch_timeout", pytest.approx(0.45))
    runtime = "RuntimeError: CUDA error: device not ready\n"
    assert _causes(runtime, book)[0] == ("app_exception", pytest.approx(0.35))


def test_app_faults_recurring_in_other_processes_add_a_hardware_lead(book: RuleBook) -> None:
    line = (
        "NVRM: Xid (PCI:0000:81:00): 31, pid={pid}, name=python, Ch 00000010, intr 00000000. "
        "MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_2 faulted @ 0x7f00_{pid}000\n"
    )
    recurring = _causes("".join(line.format(pid=p) for p in (7001, 8123, 9310)), book)
    assert recurring[0][0] == "illegal_memory_access"
    assert ("xid_hardware", pytest.approx(0.3)) in recurring[:3]
    one_process = _causes(line.format(pid=7001) * 3, book)
    assert "xid_hardware" not in [cause for cause, _ in one_process]


def test_an_oom_under_wsl_offers_the_pinned_memory_limit(book: RuleBook) -> None:
    failure = "CUDA error 2 at ggml-cuda.cu:512: out of memory\n"
    wsl = "kai@WS-7:/mnt/c/llm/llama.cpp$ ./main -m q5.bin --no-mmap\n" + failure
    causes = _causes(wsl, book)
    assert causes[0][0] == "gpu_oom"
    assert ("host_oom", pytest.approx(0.25)) in causes[:3]
    native = "kai@ws7:~/llm/llama.cpp$ ./main -m q5.bin --no-mmap\n" + failure
    assert "host_oom" not in [cause for cause, _ in _causes(native, book)]


def test_a_child_process_failing_from_a_notebook_is_a_fork_lead(book: RuleBook) -> None:
    log = (
        "W1103 10:12:44.118000 20431 site-packages/torch/multiprocessing/spawn.py:160] "
        "Terminating process 20502 via signal SIGTERM\n"
        "---------------------------------------------------------------------------\n"
        "ProcessRaisedException                    Traceback (most recent call last)\n"
        "Cell In[7], line 2\n"
        "----> 2 trainer.fit(model, datamodule=dm)\n"
    )
    assert _causes(log, book)[0] == ("fork_cuda_reinit", pytest.approx(0.45))
    child_oom = log + (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
        "total capacity of 23.65 GiB of which 1.02 GiB is free.\n"
    )
    assert _causes(child_oom, book)[0][0] == "gpu_oom"


@pytest.mark.parametrize(
    "rows",
    [
        "\tlinux-vdso.so.1 (0x00007ffd1a3c1000)\n\tlibcublasLt.so.12 => not found\n",
        "        ggml-base.dll (0x00000210aa500000)\n        cudnn64_9.dll => not found\n",
    ],
)
def test_a_dependency_listing_that_misses_a_cuda_library(rows: str, book: RuleBook) -> None:
    assert _causes(rows, book)[0][0] == "cuda_libs_missing"


def test_lua_torchs_cudnn_errors_with_or_without_the_prefix(book: RuleBook) -> None:
    for status in ("STATUS_EXECUTION_FAILED", "CUDNN_STATUS_EXECUTION_FAILED"):
        line = (
            "/opt/torch/install/share/lua/5.1/cudnn/init.lua:58: "
            f"Error in CuDNN: {status} (cudnnRNNForwardTraining)\n"
        )
        assert _causes(line, book)[0] == ("cudnn_cublas_init", pytest.approx(0.7))


def test_paddles_architecture_warning_before_a_failure(book: RuleBook) -> None:
    log = (
        "W0412 10:21:07.118204  3310 gpu_resources.cc:106] The GPU compute capability in your "
        "current machine is 120, which is not supported by Paddle, it is recommended to install "
        "the corresponding wheel package according to the installation information on the "
        "official Paddle website.\n"
        "Traceback (most recent call last):\n"
        '  File "/srv/app/model/attention.py", line 212, in forward\n'
        "    scores = paddle.matmul(q, k, transpose_y=True)\n"
        "RuntimeError: (PreconditionNotMet) The third-party dynamic library failed to run.\n"
    )
    assert _causes(log, book)[0] == ("arch_mismatch", pytest.approx(0.7))


def test_tensorrt_names_the_cuda_error_that_stopped_its_start(book: RuleBook) -> None:
    line = (
        "[03/14/2026-08:30:12] [W] [TRT] CUDA initialization failure with error: 35. "
        "Please check your CUDA installation:  "
        "http://docs.nvidia.com/cuda/cuda-installation-guide-linux/index.html\n"
    )
    cause, confidence = _causes(line, book)[0]
    assert cause == "driver_cuda_mismatch"
    assert confidence >= 0.5


def test_a_gpu_library_refused_for_an_old_c_library(book: RuleBook) -> None:
    gpu = (
        "OSError: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.34' not found (required by "
        "/opt/venv/lib/python3.11/site-packages/bitsandbytes/libbitsandbytes_cuda126.so)\n"
    )
    assert _causes(gpu, book)[0] == ("cuda_libs_missing", pytest.approx(0.8))
    other = gpu.replace("bitsandbytes/libbitsandbytes_cuda126.so", "regex/_regex.so")
    # another library refused the same way is an ordinary error; at most a similarity lead
    assert all(confidence < 0.5 for _, confidence in _causes(other, book))


def test_julia_and_taichi_say_a_cuda_library_did_not_load(book: RuleBook) -> None:
    julia = (
        'ERROR: could not load library "C:\\Users\\kim\\.julia\\artifacts\\5d1f\\bin\\'
        'cudnn_ops_infer64_8.dll"\nThe specified module could not be found.\n'
    )
    assert _causes(julia, book)[0][0] == "cuda_libs_missing"
    taichi = (
        "[W 03/02/26 10:12:44.301 5120] [__init__.py:adaptive_arch_select@740] "
        "Arch=[<Arch.cuda: 5>] is not supported, falling back to CPU\n"
        "[Taichi] Starting on arch=x64\n"
    )
    assert _causes(taichi, book)[0] == ("cuda_libs_missing", pytest.approx(0.45))


def test_an_unknown_error_on_windows_noticed_by_a_copy_back(book: RuleBook) -> None:
    log = (
        '========= Program hit CUDA_ERROR_UNKNOWN (error 999) due to "unknown error" on CUDA API '
        "call to {call}.\n"
        "=========     Host Frame:C:\\Windows\\System32\\nvcuda.dll [0x2a1f30]\n"
    )
    assert _causes(log.format(call="cuMemcpyDtoH_v2"), book)[0] == (
        "launch_timeout",
        pytest.approx(0.45),
    )
    assert _causes(log.format(call="cuCtxCreate_v2"), book)[0][0] != "launch_timeout"


@pytest.mark.parametrize(
    "line",
    [
        "OSError: /opt/conda/envs/ort/lib/libcublas.so.11: symbol cublasLtMatmulAlgoInit "
        "version libcublasLt.so.11 not defined in file libcublasLt.so.11 with link time "
        "reference\n",
        "ImportError: /opt/venv/lib/nvidia/cublas/lib/libcublas.so.12: version "
        "`libcublasLt.so.12' not found (required by /opt/venv/lib/nvidia/cublas/lib/"
        "libcublas.so.12)\n",
        "OSError: /opt/cuda/lib64/libcudnn_graph.so.9: file too short\n",
        "FileNotFoundError: Could not find module 'D:\\tools\\cuda\\bin\\cublas64_12.dll' "
        "(or one of its dependencies). Try using the full path with constructor syntax.\n",
        'java.lang.UnsatisfiedLinkError: Error while loading native library "JCublas2-12.0.0-'
        'windows-x86_64"\n',
        "OSError: libnvrtc-builtins.so.12.1: cannot open shared object file: No such file or "
        "directory\n",
        "OSError: dlopen(/Users/kim/venv/lib/python3.8/site-packages/torch/lib/"
        "libtorch_global_deps.dylib, 10): Library not loaded: @rpath/libcudart.10.2.dylib\n",
    ],
)
def test_loader_words_for_a_cuda_library_it_could_not_use(line: str, book: RuleBook) -> None:
    assert _causes(line, book)[0] == ("cuda_libs_missing", pytest.approx(0.85))


def test_a_cuda_library_failing_in_other_words_is_one_lead(book: RuleBook) -> None:
    words = "Error: unable to find {name} in PATH\n"
    assert _causes(words.format(name="cudnn_ops64_9.dll"), book)[0] == (
        "cuda_libs_missing",
        pytest.approx(0.45),
    )
    # another library in the same words: at most a resemblance, below an alarm
    assert all(conf < 0.5 for _, conf in _causes(words.format(name="png16.dll"), book))
    # beside the loader's own message for the same library: one diagnosis, the specific one
    both = words.format(name="cudnn_ops64_9.dll") + (
        "Could not locate cudnn_ops64_9.dll. Please make sure it is in your library path!\n"
    )
    found = [(c, conf) for c, conf in _causes(both, book) if c == "cuda_libs_missing"]
    assert len(found) == 1
    assert found[0][1] >= 0.5


@pytest.mark.parametrize(
    ("line", "cause"),
    [
        (
            "Error: GPU sm_120 is not supported by this build (supported: sm_80 sm_90)\n",
            "arch_mismatch",
        ),
        (
            "fatal: this binary was compiled for compute capability 8.0 and cannot run on a "
            "device of compute capability 6.1\n",
            "arch_mismatch",
        ),
        (
            "ERROR: installed NVIDIA driver 470.82 is too old for CUDA 12.1\n",
            "driver_cuda_mismatch",
        ),
        (
            "Error: CUDA driver version (11.4) is older than the CUDA runtime version (12.2)\n",
            "driver_cuda_mismatch",
        ),
        ("panic: GPU ran out of memory while allocating 2.1 GB for the KV cache\n", "gpu_oom"),
        ("FATAL: GPU 2 is lost; the job cannot continue\n", "xid_hardware"),
        ("ERROR: NCCL all_reduce timed out after 600 s on rank 5\n", "nccl_failure"),
        ("FATAL ERROR: GPU temperature 94C exceeded the shutdown threshold\n", "thermal_power"),
    ],
)
def test_a_failure_in_a_programs_own_words_is_a_lead(line: str, cause: str, book: RuleBook) -> None:
    top_cause, confidence = _causes(line, book)[0]
    assert top_cause == cause
    assert 0.3 <= confidence <= 0.5


def test_tensorflows_failed_core_import_cut_before_its_message(book: RuleBook) -> None:
    # an IPython traceback pasted without its last lines: only the frame of the failed import
    log = (
        "In [2]: import tensorflow as tf\n"
        "-------------------------------------------------------------------------\n"
        "ImportError                               Traceback (most recent call last)\n"
        "/opt/conda/lib/python3.7/site-packages/tensorflow_core/python/pywrap_tensorflow.py"
        " in <module>\n"
        "     56 try:\n"
        "---> 57   from tensorflow.python.pywrap_tensorflow_internal import *\n"
        "     58   from tensorflow.python.pywrap_tensorflow_internal import __version__\n"
    )
    assert _causes(log, book)[0] == ("cuda_libs_missing", pytest.approx(0.45))


def test_older_thrust_names_the_runtime_call_that_ran_out_of_memory(book: RuleBook) -> None:
    for line in (
        "RuntimeError: after cudaLaunch in triple_chevron_launcher::launch(): out of memory\n",
        "  what():  function_attributes(): after cudaFuncGetAttributes: out of memory\n",
    ):
        assert _causes(line, book)[0] == ("gpu_oom", pytest.approx(0.8))


def test_tensorflows_allocator_map_alone_says_memory_ran_out(book: RuleBook) -> None:
    # a paste cut to the map BFCAllocator prints after an allocation it could not serve
    log = "".join(
        f"I tensorflow/core/common_runtime/bfc_allocator.cc:{line}] {kind} at 0x7f21a4{n:06x} "
        f"of size {size}\n"
        for n, (line, kind, size) in enumerate(
            [(678, "Chunk", 1280), (687, "Free", 4096), (678, "Chunk", 786432), (687, "Free", 2048)]
        )
    )
    assert _causes(log, book)[0] == ("gpu_oom", pytest.approx(0.7))


def test_a_collective_timeout_puts_one_ranks_oom_among_the_candidates(book: RuleBook) -> None:
    timeout = (
        "[rank2]:[E1104 02:17:45.118204 40211 ProcessGroupNCCL.cpp:616] [Rank 2] Watchdog caught "
        "collective operation timeout: WorkNCCL(SeqNum=48213, OpType=ALLREDUCE, NumelIn=1, "
        "NumelOut=1, Timeout(ms)=600000) ran for 600043 milliseconds before timing out.\n"
    )
    causes = _causes(timeout, book)
    assert causes[0][0] == "nccl_failure"
    assert [confidence < 0.3 for cause, confidence in causes if cause == "gpu_oom"] == [True]
    # with the rank's own out-of-memory in the paste, that is the one diagnosis of the cause
    oom = (
        "[rank5]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.20 GiB. GPU 5 "
        "has a total capacity of 79.10 GiB of which 402.00 MiB is free.\n"
    )
    both = [cause for cause, _ in _causes(oom + timeout, book)]
    assert both[0] == "gpu_oom" and both.count("gpu_oom") == 1


def test_insufficient_driver_in_a_container_that_found_no_driver(book: RuleBook) -> None:
    banner = (
        "WARNING: The NVIDIA Driver was not detected.  GPU functionality will not be available.\n"
        "   Use the NVIDIA Container Toolkit to start this container with GPU support; see\n"
    )
    probe = (
        "E0611 09:14:02.551209 1 pinned_memory_manager.cc:240] failed to allocate pinned system "
        "memory: CUDA driver version is insufficient for CUDA runtime version\n"
    )
    # a server started on the CPU on purpose: leads, the missing driver first
    causes = _causes(banner + probe, book)
    assert causes[0][0] == "cuda_libs_missing"
    assert all(confidence < 0.5 for _, confidence in causes)
    failed = banner + (
        "Traceback (most recent call last):\n"
        '  File "/workspace/serve.py", line 12, in <module>\n'
        "    model.cuda()\n"
        "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version\n"
    )
    assert _causes(failed, book)[0] == ("cuda_libs_missing", pytest.approx(0.75))
    # without the banner the old driver stays the first reading
    assert _causes(failed.replace(banner, ""), book)[0][0] == "driver_cuda_mismatch"


def test_tensorrt_could_not_create_its_cudnn_handle(book: RuleBook) -> None:
    line = (
        "2023-05-02 11:40:17.302114: E tensorflow/compiler/tf2tensorrt/utils/trt_logger.cc:40] "
        "DefaultLogger safeContext.cpp (124) - Cudnn Error in initializeCommonContext: 4 (Could "
        "not initialize cudnn, please check cudnn installation.)\n"
    )
    causes = _causes(line, book)
    assert causes[0] == ("cudnn_cublas_init", pytest.approx(0.7))
    assert ("gpu_oom", pytest.approx(0.3)) in causes  # the usual hidden reason, as a lead
