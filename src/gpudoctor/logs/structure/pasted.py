"""Facts from pasted text: ``nvidia-smi``, ``collect_env``, ``top``, ``free`` or ``ps`` output.

Logs pasted into issues often carry the machine's description. The scanner looks for these
lines in the same pass as the rules' patterns (keys start with ``facts/``), and
:func:`facts` turns the captures into the same fact names a live snapshot gives, so
a rule such as "driver too old for the CUDA runtime" works on a log alone.

The facts it gives are declared in :data:`FACTS`: those a live snapshot also gives keep
the snapshot's names and types (``driver_version``, ``gpu_names`` …); those only text gives
start with ``smi_`` (read from a pasted ``nvidia-smi`` table, which may have been taken while
the job still ran, so they are kept apart from the snapshot's after-the-crash values). For the
same reason the host memory a pasted ``top`` header or ``free`` table shows is ``pasted_ram_*``,
not the snapshot's ``host_ram_*``. A pasted ``ps aux`` row tells whether a process the
``nvidia-smi`` table lists still runs; only the rows the scanner keeps of a long listing (its
first and last) are read, which covers the usual ``ps aux | grep PID``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from gpudoctor.facts.spec import FactSpec
from gpudoctor.logs.scanner import CaptureType, Event, PatternHits, PatternSpec
from gpudoctor.units import parse_size
from gpudoctor.version_numbers import parse_version_parts

_V = CaptureType.VERSION
_S = CaptureType.STR
_I = CaptureType.INT
_Z = CaptureType.SIZE

# A pasted table row may be quoted in Markdown ("> |") or indented.
_ROW = r"^[>\s]*\|"
_MIB = r"\d+\s?MiB"

PATTERNS: tuple[PatternSpec, ...] = (
    # nvidia-smi banner: "| NVIDIA-SMI 470.82.01  Driver Version: 470.82.01  CUDA Version: 11.4 |"
    PatternSpec(
        "facts/nvidia_smi_banner",
        r"Driver Version:\s*(?P<driver_version>\d+\.\d+(?:\.\d+)?)\s+CUDA Version:\s*"
        r"(?P<driver_cuda_version>\d+\.\d+)",
        captures={"driver_version": _V, "driver_cuda_version": _V},
    ),
    # Old banners have no CUDA version: "| NVIDIA-SMI 410.48    Driver Version: 410.48   |"
    PatternSpec(
        "facts/nvidia_smi_driver",
        r"NVIDIA-SMI \S+\s+Driver Version:\s*(?P<driver_version>\d+\.\d+(?:\.\d+)?)",
        captures={"driver_version": _V},
    ),
    # Kernel module banner (dmesg, /proc/driver/nvidia/version, cuda_memtest):
    # "NVRM version: NVIDIA UNIX x86_64 Kernel Module  460.80  Fri May  7 06:55:54 UTC 2021"
    PatternSpec(
        "facts/nvrm_version",
        r"NVIDIA UNIX (?:Open Kernel Module|x86_64 Kernel Module|aarch64 Kernel Module|"
        r"Kernel Module)(?: for \w+)?\s+(?P<driver_version>\d{3}\.\d+(?:\.\d+)?)\s",
        captures={"driver_version": _V},
    ),
    # collect_env: "PyTorch version: 2.4.1+cu121"
    PatternSpec(
        "facts/torch_version",
        r"^\s*PyTorch version:\s*(?P<torch_version>\d+\.\d+[^\s]*)",
        captures={"torch_version": _S},
    ),
    # collect_env pip section / pip freeze: "[pip3] torch==2.4.1+cu121", "torch==2.1.0"
    PatternSpec(
        "facts/torch_pip",
        r"(?:^|\s|\[pip3?\]\s*)torch==(?P<torch_version>\d+\.\d+[^\s]*)\s*$",
        captures={"torch_version": _S},
    ),
    # Ultralytics' and YOLOv5's start-up banner:
    # "Ultralytics 8.3.2 🚀 Python-3.11.9 torch-2.4.1+cu121 CUDA:0"
    PatternSpec(
        "facts/torch_banner",
        r"\bPython-\d+\.\d+\.\d+ torch-(?P<torch_version>\d+\.\d+[^\s]*)",
        captures={"torch_version": _S},
    ),
    # collect_env: "CUDA used to build PyTorch: 12.1"
    PatternSpec(
        "facts/torch_cuda",
        r"^\s*CUDA used to build PyTorch:\s*(?P<torch_cuda_version>\d+\.\d+)",
        captures={"torch_cuda_version": _V},
    ),
    # collect_env: "CUDA runtime version: 12.1.105" (the system toolkit's nvcc)
    PatternSpec(
        "facts/cuda_toolkit",
        r"^\s*CUDA runtime version:\s*(?P<cuda_toolkit_version>\d+\.\d+(?:\.\d+)?)",
        captures={"cuda_toolkit_version": _V},
    ),
    # nvcc --version: "Cuda compilation tools, release 12.4, V12.4.131"
    PatternSpec(
        "facts/nvcc_release",
        r"Cuda compilation tools, release (?P<cuda_toolkit_version>\d+\.\d+)",
        captures={"cuda_toolkit_version": _V},
    ),
    # collect_env: "Nvidia driver version: 470.82.01"
    PatternSpec(
        "facts/collect_env_driver",
        r"^\s*Nvidia driver version:\s*(?P<driver_version>\d+\.\d+(?:\.\d+)?)",
        captures={"driver_version": _V},
    ),
    # collect_env: "cuDNN version: 8.9.2" or a path ".../libcudnn.so.8.9.2"
    PatternSpec(
        "facts/cudnn_version",
        r"^\s*cuDNN version:\s*(?:\S*libcudnn\.so\.)?(?P<cudnn_version>\d+\.\d+(?:\.\d+)?)",
        captures={"cudnn_version": _V},
    ),
    # collect_env: "GPU 0: NVIDIA GeForce RTX 3090", also after "GPU models and configuration:"
    PatternSpec(
        "facts/collect_env_gpu",
        r"(?:^\s*|configuration:\s*)GPU (?P<index>\d+): "
        r"(?P<gpu_name>(?:NVIDIA|Tesla|GeForce|Quadro|TITAN)[^\r\n]*?)\s*(?:\(UUID: [^)]*\))?\s*$",
        captures={"index": _I, "gpu_name": _S},
    ),
    # pip lines of the runtime wheel: "nvidia-cuda-runtime-cu12==12.1.105"
    PatternSpec(
        "facts/cuda_runtime_wheel",
        r"nvidia-cuda-runtime-cu\d+[=\s]=?\s*(?P<cuda_runtime>\d+\.\d+)(?:\.\d+)*",
        captures={"cuda_runtime": _V},
    ),
    # system packages built for a CUDA release, as apt, dpkg or rpm list them:
    # "libcudnn8/now 8.9.3.28-1+cuda12.1 amd64 [installed]", "ii  libnccl2  2.18.3-1+cuda12.2",
    # "libnvinfer8-8.6.1.6-1.cuda12.0.x86_64": they load only on a driver for that CUDA major
    PatternSpec(
        "facts/cuda_system_package",
        r"\blib(?:cudnn|nccl|nvinfer|cusparselt)[\w-]*(?:/\S+)?(?:\s+|-)(?:\d+:)?\d[\w.~]*-\d+"
        r"[+.]cuda(?P<cuda_runtime>\d+\.\d+)\b",
        captures={"cuda_runtime": _V},
    ),
    # PyTorch: "The NVIDIA driver on your system is too old (found version 11040)."
    PatternSpec(
        "facts/torch_driver_found",
        r"driver on your system is too old \(found version (?P<driver_cuda_int>\d{4,6})\)",
        captures={"driver_cuda_int": _I},
    ),
    # PyTorch: "NVIDIA GeForce RTX 3090 with CUDA capability sm_86 is not compatible ..."
    PatternSpec(
        "facts/torch_capability",
        r"(?P<gpu_name>(?:NVIDIA |Tesla |GeForce |Quadro |TITAN )[^\r\n]*?) with CUDA capability "
        r"sm_(?P<sm>\d{2,3}) is not compatible",
        captures={"gpu_name": _S, "sm": _S},
    ),
    # ggml's CUDA backend (llama.cpp, whisper.cpp, Ollama) lists each device it found:
    # "  Device 0: NVIDIA GeForce RTX 4070, compute capability 8.9, VMM: yes"
    PatternSpec(
        "facts/ggml_cuda_device",
        r"\bDevice (?P<index>\d+): (?P<gpu_name>[^,\r\n]{3,80}), compute capability "
        r"(?P<cc>\d{1,2}\.\d)\b",
        captures={"index": _I, "gpu_name": _S, "cc": _S},
    ),
    # ggml's system_info: the architectures its CUDA code was compiled for (__CUDA_ARCH_LIST__):
    # "system_info: n_threads = 8 / 16 | CUDA : ARCHS = 610,700,750,800,860 | USE_GRAPHS = 1 |"
    PatternSpec(
        "facts/ggml_cuda_archs",
        r"\bCUDA : ARCHS = (?P<archs>\d{3,4}(?:,\d{3,4})*)",
        captures={"archs": _S},
    ),
    # nvidia-smi GPU row: "|   0  NVIDIA GeForce RTX 3090     Off  | 00000000:01:00.0  On |"
    PatternSpec(
        "facts/smi_gpu_row",
        _ROW + r"\s+(?P<index>\d+)\s+(?P<gpu_name>\S[^|]*?)\s+(?:On|Off)\s*\|\s*"
        r"[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d",
        captures={"index": _I, "gpu_name": _S},
    ),
    # nvidia-smi memory cell and the utilisation after it:
    # "|  0%   61C  P0  58W / 180W |   7940MiB /  8112MiB |     98%      Default |"
    PatternSpec(
        "facts/smi_memory_row",
        _ROW
        + r"[^|]*(?:\d+W|N/A)[^|]*\|\s*(?P<used>"
        + _MIB
        + r")\s*/\s*(?P<total>"
        + _MIB
        + r")\s*\|(?:\s*(?P<util>\d{1,3})%)?",
        captures={"used": _Z, "total": _Z, "util": _I},
    ),
    # gpustat: "[0] NVIDIA A10G | 41°C,  97 % | 20311 / 23028 MB | alice(20302M)", older
    # releases "41'C"; -F adds the fan ("41'C,  30 %,  97 %"), -P the power ("| 180 / 300 W")
    PatternSpec(
        "facts/gpustat_row",
        r"^\s*\[(?P<index>\d+)\]\s+(?P<gpu_name>[^|]*?)\s*\|\s*\d+\s*(?:°|'|º)?C,"
        r"(?:\s*\d+\s*%,)?\s*(?P<util>\d{1,3})\s*%\s*\|(?:\s*[\d?]+\s*/\s*[\d?]+\s*W\s*\|)?"
        r"\s*(?P<used>\d+)\s*/\s*(?P<total>\d+)\s*MB\s*\|",
        captures={"index": _I, "gpu_name": _S, "util": _I, "used": _I, "total": _I},
    ),
    # top's summary (procps-ng 3.3.10+): "MiB Mem : 128686.2 total,    571.3 free, 128028.8
    # used,     86.1 buff/cache" and "MiB Swap:      0.0 total,      0.0 free,      0.0 used.
    # 524.7 avail Mem" (the memory available to new work is on the swap line).
    PatternSpec(
        "facts/top_mem",
        r"^\s*(?P<unit>[KMGTP]iB) Mem\s*:\s*(?P<total>\d+(?:\.\d+)?) total,\s*"
        r"(?P<free>\d+(?:\.\d+)?) free,",
        captures={"unit": _S, "total": _S, "free": _S},
    ),
    PatternSpec(
        "facts/top_swap",
        r"^\s*(?P<unit>[KMGTP]iB) Swap\s*:\s*(?P<swap>\d+(?:\.\d+)?) total,.*?"
        r"(?P<avail>\d+(?:\.\d+)?) avail Mem",
        captures={"unit": _S, "swap": _S, "avail": _S},
    ),
    # free (procps-ng 3.3.10+): "Mem:  total  used  free  shared  buff/cache  available" in
    # KiB (default), -m, -g or -h ("125Gi", "571Mi"); then "Swap:  total  used  free".
    PatternSpec(
        "facts/free_mem",
        r"^\s*Mem:\s+(?P<total>\d+(?:\.\d+)?[KMGTP]?i?)\s+(?:\d+(?:\.\d+)?[KMGTP]?i?B?\s+){4}"
        r"(?P<available>\d+(?:\.\d+)?[KMGTP]?i?)B?\s*$",
        captures={"total": _S, "available": _S},
    ),
    PatternSpec(
        "facts/free_swap",
        r"^\s*Swap:\s+(?P<swap>\d+(?:\.\d+)?[KMGTP]?i?)B?\s+\d",
        captures={"swap": _S},
    ),
    # ibstat's port stanza: "Physical state: LinkUp", then (a few lines on) "Link layer:
    # InfiniBand" or "Link layer: Ethernet" (an adapter's port run as Ethernet)
    PatternSpec(
        "facts/ibstat_physical_state",
        r"^\s*Physical state:\s*(?P<phys>\w+)\s*$",
        captures={"phys": _S},
    ),
    PatternSpec(
        "facts/ibstat_link_layer", r"^\s*Link layer:\s*(?P<layer>\w+)\s*$", captures={"layer": _S}
    ),
    # nvidia-smi "| Processes: ...   GPU Memory |" section header
    PatternSpec("facts/smi_processes_header", _ROW + r"\s*Processes:"),
    PatternSpec("facts/smi_no_processes", _ROW + r"\s*No running processes found"),
    # Process rows, old "|    0     12345      C   python      10789MiB |" and new
    # "|    0   N/A  N/A   1234567      C   python     40000MiB |" (memory N/A under WDDM)
    PatternSpec(
        "facts/smi_process_row",
        _ROW + r"\s+(?P<gpu>\d+)\s+(?:(?:N/A|\d+)\s+(?:N/A|\d+)\s+)?(?P<pid>\d+)\s+"
        r"(?P<type>C\+G|M\+C|C|G|M)\s+(?P<name>\S[^|]*?)\s+(?P<memory>" + _MIB + r"|N/A)\s*\|",
        captures={"gpu": _I, "pid": _I, "type": _S, "name": _S, "memory": _S},
    ),
    # A `ps aux` (or `ps u`) row, procps' BSD user columns: "USER PID %CPU %MEM VSZ RSS TTY
    # STAT START TIME COMMAND"; its STAT says whether a process that holds a GPU runs. (`ps -ef`
    # prints no STAT column.)
    PatternSpec(
        "facts/ps_aux_row",
        r"^\s*\S+\s+(?P<pid>\d+)\s+\d+(?:\.\d+)?\s+\d+(?:\.\d+)?\s+\d+\s+\d+\s+\S+\s+"
        r"(?P<stat>[RSDTtZIWXPKNLsl<+]+)\s+\S+\s+\d+:\d+(?::\d+)?\s+(?P<command>\S.*)$",
        captures={"pid": _I, "stat": _S, "command": _S},
    ),
)

# Facts that simply take the first captured value, by pattern key.
_SIMPLE = (
    "facts/nvidia_smi_banner",
    "facts/nvidia_smi_driver",
    "facts/collect_env_driver",
    "facts/nvrm_version",
    "facts/torch_version",
    "facts/torch_pip",
    "facts/torch_banner",
    "facts/torch_cuda",
    "facts/cuda_toolkit",
    "facts/nvcc_release",
    "facts/cudnn_version",
)


def _events(hits: Mapping[str, PatternHits], key: str) -> list[Event]:
    found = hits.get(key)
    return found.events() if found else []


def _first_values(hits: Mapping[str, PatternHits]) -> dict[str, object]:
    facts: dict[str, object] = {}
    for key in _SIMPLE:
        for event in _events(hits, key):
            for name, value in event.captures.items():
                facts.setdefault(name, str(value))
    return facts


def _clean_name(name: str) -> str:
    """nvidia-smi cuts long names with "..."; keep what is there, trimmed."""
    return name.strip().rstrip(".").strip()


def _gpu_facts(hits: Mapping[str, PatternHits]) -> dict[str, object]:
    facts: dict[str, object] = {}
    names: list[str] = []
    for key in (
        "facts/smi_gpu_row",
        "facts/gpustat_row",
        "facts/collect_env_gpu",
        "facts/torch_capability",
        "facts/ggml_cuda_device",
    ):
        seen: set[object] = set()  # one name per GPU index (a log may hold two tables)
        for event in _events(hits, key):
            name = event.captures.get("gpu_name")
            ident = event.captures.get("index", name)
            if isinstance(name, str) and _clean_name(name) and ident not in seen:
                seen.add(ident)
                names.append(_clean_name(name))
        if names:
            break  # the first source that lists GPUs gives them in index order
    if names:
        facts["gpu_names"] = names
    capabilities = []
    for event in _events(hits, "facts/torch_capability"):
        sm = str(event.captures.get("sm", ""))
        if sm.isdigit() and len(sm) >= 2:
            cc = f"{int(sm[:-1])}.{sm[-1]}"
            if cc not in capabilities:
                capabilities.append(cc)
    for event in _events(hits, "facts/ggml_cuda_device"):
        cc = str(event.captures.get("cc", ""))
        if cc and cc not in capabilities:
            capabilities.append(cc)
    if capabilities:
        facts["gpu_compute_capabilities"] = capabilities
    archs = _events(hits, "facts/ggml_cuda_archs")
    if archs:
        facts["ggml_cuda_archs"] = str(archs[0].captures.get("archs", "")).split(",")
    runtimes = sorted(
        {str(e.captures["cuda_runtime"])
         for key in ("facts/cuda_runtime_wheel", "facts/cuda_system_package")
         for e in _events(hits, key) if "cuda_runtime" in e.captures},
        key=lambda version: parse_version_parts(version) or (),
    )  # fmt: skip
    if runtimes:
        facts["cuda_runtime_versions"] = runtimes
    for event in _events(hits, "facts/torch_driver_found"):
        number = event.captures.get("driver_cuda_int")
        if isinstance(number, int) and number >= 1000:
            facts["driver_cuda_version"] = f"{number // 1000}.{(number % 1000) // 10}"
            break
    return facts


_NAMED_MEMORY = re.compile(r"(\d{1,3}) ?GB\b")
"""The memory a product name states ("Tesla V100-PCIE-16GB", "A100-SXM4-80GB")."""


def _memory_slice(name: str, total: int) -> bool:
    """Whether a GPU row's memory total is less than half of what its name states: a vGPU
    profile or a shared-GPU limit (HAMi, a cloud's fractional GPU), seen from inside it."""
    found = _NAMED_MEMORY.search(name)
    return found is not None and 0 < total < int(found.group(1)) * 10**9 // 2


def _smi_facts(hits: Mapping[str, PatternHits]) -> dict[str, object]:
    facts: dict[str, object] = {}
    # gpustat's rows stand for nvidia-smi's when no table was pasted (its "MB" are MiB)
    smi_cells, gpustat = _events(hits, "facts/smi_memory_row"), _events(hits, "facts/gpustat_row")
    rows = _events(hits, "facts/smi_gpu_row") or gpustat
    cells, unit = (smi_cells, 1) if smi_cells else (gpustat, 2**20)
    memory: list[tuple[int, int]] = []
    busy: list[bool] = []  # per memory row: the GPU shows utilisation above 0 %
    idle: list[float] = []  # used / total of the GPUs at 0 % utilisation
    for event in cells:
        used, total = event.captures.get("used"), event.captures.get("total")
        if isinstance(used, int) and isinstance(total, int):
            used, total = used * unit, total * unit
            memory.append((used, total))
            util = event.captures.get("util")
            busy.append(isinstance(util, int) and util > 0)
            if util == 0 and total > 0:
                idle.append(used / total)
    if rows:
        facts["smi_gpu_count"] = len(rows)
    if memory:
        facts["smi_gpu_memory_used_bytes"] = [used for used, _ in memory]
        facts["smi_gpu_memory_total_bytes"] = [total for _, total in memory]
        fractions = [used / total for used, total in memory if total > 0]
        if fractions:
            facts["smi_gpu_memory_used_fraction_max"] = round(max(fractions), 4)
    if idle:
        facts["smi_idle_gpu_memory_fraction_max"] = round(max(idle), 4)
    if len(rows) == len(memory) and any(
        _memory_slice(str(row.captures.get("gpu_name", "")), total)
        for row, (_, total) in zip(rows, memory, strict=True)
    ):
        facts["smi_memory_slice"] = True

    header = hits.get("facts/smi_processes_header")
    none_listed = hits.get("facts/smi_no_processes")
    process_hits = hits.get("facts/smi_process_row")
    table = bool(header and header.count) or bool(none_listed and none_listed.count)
    count = process_hits.count if process_hits else 0
    if not table and not count:
        return facts
    facts["smi_processes_table"] = True
    facts["smi_processes_count"] = count
    if not count and not (none_listed and none_listed.count):
        # nvidia-smi says "No running processes found" when there are none
        facts["smi_processes_cut"] = True
    listed: list[str] = []
    held_by_gpu: dict[int, int] = {}
    compute_by_gpu: dict[int, set[int]] = {}  # compute processes (type C, C+G, M+C) per GPU
    for event in _events(hits, "facts/smi_process_row"):
        gpu, pid = event.captures.get("gpu"), event.captures.get("pid")
        if isinstance(gpu, int) and isinstance(pid, int) and "C" in str(event.captures.get("type")):
            compute_by_gpu.setdefault(gpu, set()).add(pid)
        mem_text = str(event.captures.get("memory", ""))
        listed.append(f"gpu {gpu} pid {pid} {event.captures.get('name', '?')} {mem_text}")
        size = parse_size(mem_text) if mem_text != "N/A" else None
        if isinstance(gpu, int) and size is not None:
            held_by_gpu[gpu] = held_by_gpu.get(gpu, 0) + size
    facts["smi_processes"] = listed
    not_running = _stopped_gpu_holders(hits, {p for pids in compute_by_gpu.values() for p in pids})
    if not_running:
        facts["smi_process_not_running"] = not_running
    if compute_by_gpu:
        facts["smi_compute_processes_per_gpu_max"] = max(len(p) for p in compute_by_gpu.values())
    if held_by_gpu:
        facts["smi_process_memory_bytes_max"] = max(held_by_gpu.values())
    if memory and (process_hits is None or process_hits.count == len(listed)):
        # Pair memory cells with GPU indices in table order; without index rows, 0..n-1.
        indices = [i for i in (e.captures.get("index") for e in rows) if isinstance(i, int)]
        if len(indices) != len(memory):
            indices = list(range(len(memory)))
        unaccounted = [
            (max(0, used - held_by_gpu.get(index, 0)) / total, gpu_busy)
            for index, (used, total), gpu_busy in zip(indices, memory, busy, strict=True)
            if total > 0
        ]
        if unaccounted:
            share, gpu_busy = max(unaccounted)
            facts["smi_unaccounted_memory_fraction_max"] = round(share, 4)
            facts["smi_unaccounted_gpu_busy"] = gpu_busy
    return facts


_NOT_RUNNING = {"T": "stopped", "t": "stopped by a debugger", "Z": "a zombie"}
"""ps STAT letters of a process that holds its memory without running."""


def _stopped_gpu_holders(hits: Mapping[str, PatternHits], gpu_pids: set[int]) -> list[str]:
    """The compute processes of a pasted nvidia-smi table that a pasted ``ps`` row shows
    stopped (Ctrl-Z, SIGSTOP) or a zombie, as "pid 1234 (stopped): python train.py"."""
    holders = []
    for event in _events(hits, "facts/ps_aux_row"):
        pid, stat = event.captures.get("pid"), str(event.captures.get("stat", ""))
        state = _NOT_RUNNING.get(stat[:1])
        if pid in gpu_pids and state:
            holders.append(f"pid {pid} ({state}): {event.captures.get('command', '?')}")
    return holders


_Reading = tuple[tuple[int, int], int | None, int | None, float, int | None]
"""(order, total bytes, available bytes, available / total, swap bytes) of one table."""


def _table_size(number: str, unit: str) -> int | None:
    """Bytes of ``number`` in ``unit`` ("MiB"), or of free -h's "125Gi" / "571Mi" / "0"."""
    text = number if unit else number.removesuffix("i")
    if _number(text) == 0:
        return 0  # zero in any unit
    return parse_size(f"{text} {unit}".strip()) if (unit or text[-1:].isalpha()) else None


def _number(text: str) -> float:
    return float(text.rstrip("KMGTPi"))


def _reading(
    order: tuple[int, int], total: str, avail: str, unit: str, swap: Event | None
) -> _Reading:
    """One table's reading; ``swap`` is the swap line that follows it, when there is one."""
    share = _number(avail) / _number(total) if _number(total) else 1.0
    swap_bytes = _table_size(str(swap.captures.get("swap")), unit) if swap else None
    return order, _table_size(total, unit), _table_size(avail, unit), share, swap_bytes


def _ram_facts(hits: Mapping[str, PatternHits]) -> dict[str, object]:
    """Host memory from the last pasted top summary or free table (the latest reading)."""
    readings: list[_Reading] = []
    top_swaps = {e.order: e for e in _events(hits, "facts/top_swap")}
    for event in _events(hits, "facts/top_mem"):
        unit = str(event.captures.get("unit", ""))
        # The swap line that follows the Mem line gives "avail Mem"; without it, only free.
        swap = top_swaps.get((event.order[0], event.order[1] + 1))
        avail = swap.captures.get("avail") if swap else event.captures.get("free")
        total = str(event.captures.get("total", "0"))
        readings.append(_reading(event.order, total, str(avail), unit, swap))
    free_swaps = {e.order: e for e in _events(hits, "facts/free_swap")}
    for event in _events(hits, "facts/free_mem"):
        total, avail = str(event.captures.get("total")), str(event.captures.get("available"))
        swap = free_swaps.get((event.order[0], event.order[1] + 1))
        readings.append(_reading(event.order, total, avail, "", swap))
    if not readings:
        return {}
    _, total_bytes, avail_bytes, share, swap_bytes = max(readings, key=lambda r: r[0])
    if total_bytes and avail_bytes is not None:
        share = avail_bytes / total_bytes  # free -h prints each column in its own unit
    facts: dict[str, object] = {"pasted_ram_available_fraction": round(share, 4)}
    for name, value in (
        ("pasted_ram_total_bytes", total_bytes),
        ("pasted_ram_available_bytes", avail_bytes),
        ("pasted_swap_total_bytes", swap_bytes),
    ):
        if value is not None:
            facts[name] = value
    return facts


_IBSTAT_STANZA_LINES = 12
"""How far below a port's "Physical state" ibstat prints its "Link layer"."""
_NO_LINK = ("Disabled", "Polling", "LinkErrorRecovery")
"""Physical states of a port without a link."""


def _ibstat_facts(hits: Mapping[str, PatternHits]) -> dict[str, object]:
    """Ports of a pasted ``ibstat`` with and without a link (the ports its scanner kept: the
    first and last few of a long listing). A port without a link counts only when its link
    layer (the "Link layer" below its "Physical state"; InfiniBand when not shown) is that of
    a port that has one: an InfiniBand fabric's port beside its neighbours, or a RoCE fabric's
    Ethernet port beside its own, not a front-end Ethernet port left disabled beside the
    InfiniBand ones."""
    states = _events(hits, "facts/ibstat_physical_state")
    if not states:
        return {}
    layers = _events(hits, "facts/ibstat_link_layer")
    ports: list[tuple[str, str]] = []  # (physical state, link layer)
    for state in states:
        layer = next(
            (
                str(event.captures.get("layer"))
                for event in layers
                if event.order[0] == state.order[0]
                and 0 < event.line - state.line <= _IBSTAT_STANZA_LINES
            ),
            "InfiniBand",
        )
        ports.append((str(state.captures.get("phys")), layer))
    linked = {layer for phys, layer in ports if phys == "LinkUp"}
    down = sum(phys in _NO_LINK and layer in linked for phys, layer in ports)
    return {"ibstat_ports_down": down, "ibstat_ports_up": sum(p == "LinkUp" for p, _ in ports)}


SOURCE = "pasted text"

FACTS: tuple[FactSpec, ...] = (
    FactSpec("driver_version", "str", "-", SOURCE,
             '"525.60.13" (nvidia-smi banner, collect_env, NVRM version line)'),
    FactSpec("driver_cuda_version", "str", "-", SOURCE,
             '"12.0": the newest CUDA the driver supports (nvidia-smi banner, or PyTorch\'s '
             '"driver ... too old (found version 11040)")'),
    FactSpec("torch_version", "str", "-", SOURCE, '"2.4.1+cu121" (collect_env, pip list lines)'),
    FactSpec("torch_cuda_version", "str", "-", SOURCE,
             '"12.1" (collect_env "CUDA used to build PyTorch")'),
    FactSpec("cudnn_version", "str", "-", SOURCE, '"8.9.2" (collect_env)'),
    FactSpec("cuda_toolkit_version", "str", "-", SOURCE,
             'collect_env "CUDA runtime version" or nvcc --version\'s "release 12.4": the system '
             "toolkit, not necessarily the one torch uses"),
    FactSpec("gpu_names", "list[str]", "-", SOURCE,
             'nvidia-smi rows, collect_env "GPU 0: ..." lines or PyTorch\'s capability warning, '
             "in index order"),
    FactSpec("gpu_compute_capabilities", "list[str]", "-", SOURCE,
             '"8.6", from PyTorch\'s "with CUDA capability sm_86" or ggml\'s device list'),
    FactSpec("ggml_cuda_archs", "list[str]", "-", SOURCE,
             '["610", "860"], the CUDA architectures of a ggml build (llama.cpp\'s system_info '
             '"CUDA : ARCHS = 610,860"): compute capability x 100'),
    FactSpec("cuda_runtime_versions", "list[str]", "-", SOURCE,
             '"12.1", from nvidia-cuda-runtime-cu12==12.1.105 lines, or system packages '
             'built for it ("libcudnn8 8.9.3.28-1+cuda12.1"), ascending'),
    FactSpec("smi_gpu_count", "int", "-", SOURCE, "GPU rows in a pasted nvidia-smi table"),
    FactSpec("smi_gpu_memory_used_bytes", "list[int]", "bytes", SOURCE,
             "memory used per GPU row, in table order"),
    FactSpec("smi_gpu_memory_total_bytes", "list[int]", "bytes", SOURCE,
             "memory total per GPU row, in table order"),
    FactSpec("smi_gpu_memory_used_fraction_max", "float", "ratio", SOURCE,
             "highest used / total over the GPU rows"),
    FactSpec("smi_idle_gpu_memory_fraction_max", "float", "ratio", SOURCE,
             "highest used / total over the GPU rows at 0 % utilisation: memory held on an "
             "idle GPU"),
    FactSpec("smi_memory_slice", "bool", "-", SOURCE,
             "A GPU row's memory total is less than half of what its name states "
             '("Tesla V100-PCIE-16GB" with 3000MiB): a vGPU profile or a shared-GPU limit, '
             "the table taken from inside it"),
    FactSpec("smi_processes_table", "bool", "-", SOURCE,
             'a "Processes:" section (or "No running processes found") was pasted'),
    FactSpec("smi_processes_count", "int", "-", SOURCE,
             "process rows in it (0: none listed)"),
    FactSpec("smi_processes_cut", "bool", "-", SOURCE,
             "the section ends at its header, with neither rows nor \"No running processes "
             'found": the paste stopped before its rows'),
    FactSpec("smi_processes", "list[str]", "-", SOURCE,
             'the process rows, "gpu 0 pid 1234 python 10789MiB"'),
    FactSpec("smi_compute_processes_per_gpu_max", "int", "-", SOURCE,
             "the most compute processes (type C, C+G) the processes section lists on one GPU"),
    FactSpec("smi_process_not_running", "list[str]", "-", SOURCE,
             "compute processes of a pasted nvidia-smi table that a pasted ps row shows "
             'stopped or a zombie: "pid 1234 (stopped): python train.py"'),
    FactSpec("smi_process_memory_bytes_max", "int", "bytes", SOURCE,
             "the most memory the listed processes hold on one GPU"),
    FactSpec("smi_unaccounted_memory_fraction_max", "float", "ratio", SOURCE,
             "highest (used - memory of the processes listed on that GPU) / total, only when a "
             "processes section was pasted: memory nobody visible holds (other containers, "
             "zombies)"),
    FactSpec("pasted_ram_available_fraction", "float", "ratio", SOURCE,
             "available / total host memory in the last pasted top summary (its \"avail Mem\", "
             "else free) or free table (its available column)"),
    FactSpec("pasted_ram_total_bytes", "int", "bytes", SOURCE,
             "total host memory there, when the table gives its unit (top, free -h)"),
    FactSpec("pasted_ram_available_bytes", "int", "bytes", SOURCE,
             "available host memory there, when the table gives its unit"),
    FactSpec("pasted_swap_total_bytes", "int", "bytes", SOURCE,
             "total swap on the line after it, when the table gives its unit (0: no swap)"),
    FactSpec("ibstat_ports_down", "int", "-", SOURCE,
             "ports of a pasted ibstat without a link (Disabled, Polling, LinkErrorRecovery) "
             "whose link layer is that of a port with one (not a front-end Ethernet port "
             "beside InfiniBand ones)"),
    FactSpec("ibstat_ports_up", "int", "-", SOURCE,
             "ports of a pasted ibstat whose physical state is LinkUp"),
    FactSpec("smi_unaccounted_gpu_busy", "bool", "-", SOURCE,
             "the GPU with the most unaccounted memory shows utilisation above 0 %: something "
             "is running on it (inside a container, the job itself; zombies sit idle)"),
)  # fmt: skip
"""Every fact :func:`facts` can return."""


def fact_names() -> frozenset[str]:
    """Every fact name pasted text can produce."""
    return frozenset(spec.name for spec in FACTS)


def facts(
    hits: Mapping[str, PatternHits], input_lines: Sequence[int | None] = ()
) -> dict[str, object]:
    """Facts captured by :data:`PATTERNS` (declared in :data:`FACTS`).

    Single values come from their first occurrence; lists keep the order of the log.
    """
    found = _first_values(hits)
    for name, value in _gpu_facts(hits).items():
        found.setdefault(name, value)
    found.update(_smi_facts(hits))
    found.update(_ram_facts(hits))
    found.update(_ibstat_facts(hits))
    return found
