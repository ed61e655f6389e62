"""Facts read from pasted nvidia-smi tables and collect_env output."""

from __future__ import annotations

import io

from gpudoctor.logs.reader import InputStats, read_blocks
from gpudoctor.logs.scanner import Scanner
from gpudoctor.logs.structure import pasted

SMI_NEW = """\
+---------------------------------------------------------------------------------------+
| NVIDIA-SMI 535.104.05             Driver Version: 535.104.05   CUDA Version: 12.2     |
|-----------------------------------------+----------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |
|=========================================+======================+======================|
|   0  NVIDIA A100-SXM4-40GB          On  | 00000000:07:00.0 Off |                    0 |
| N/A   34C    P0              58W / 400W |  30000MiB / 40960MiB |     97%      Default |
+-----------------------------------------+----------------------+----------------------+
|   1  NVIDIA A100-SXM4-40GB          On  | 00000000:0F:00.0 Off |                    0 |
| N/A   31C    P0              52W / 400W |   4096MiB / 40960MiB |      0%      Default |
+-----------------------------------------+----------------------+----------------------+

+---------------------------------------------------------------------------------------+
| Processes:                                                                            |
|  GPU   GI   CI        PID   Type   Process name                            GPU Memory |
|        ID   ID                                                             Usage      |
|=======================================================================================|
|    0   N/A  N/A     88231      C   python3                                   10000MiB |
|    1   N/A  N/A     88232      C   python3                                    4090MiB |
+---------------------------------------------------------------------------------------+
"""

SMI_OLD_EMPTY = """\
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 418.87.01              Driver Version: 418.87.01                 |
|-------------------------------+----------------------+----------------------+
|   0  Tesla V100-SXM2...  Off  | 00000000:1A:00.0 Off |                    0 |
| N/A   41C    P0    57W / 300W |  14021MiB / 32480MiB |      0%      Default |
+-------------------------------+----------------------+----------------------+
| Processes:                                                       GPU Memory |
|  GPU       PID   Type   Process name                             Usage      |
|=============================================================================|
|  No running processes found                                                 |
+-----------------------------------------------------------------------------+
"""

COLLECT_ENV = """\
PyTorch version: 2.4.1+cu121
Is debug build: False
CUDA used to build PyTorch: 12.1
Is CUDA available: True
CUDA runtime version: 12.1.105
GPU models and configuration:
GPU 0: NVIDIA GeForce RTX 3090
GPU 1: NVIDIA GeForce RTX 3090
Nvidia driver version: 525.60.13
cuDNN version: Probably one of the following:
[pip3] nvidia-cuda-runtime-cu12==12.1.105
[pip3] torch==2.4.1+cu121
"""


def facts_of(text: str) -> dict[str, object]:
    scanner = Scanner(list(pasted.PATTERNS))
    scanner.scan(read_blocks(io.BytesIO(text.encode()), InputStats(name="t")))
    return pasted.facts(scanner.hits)


def test_new_smi_table() -> None:
    facts = facts_of(SMI_NEW)
    assert facts["driver_version"] == "535.104.05"
    assert facts["driver_cuda_version"] == "12.2"
    assert facts["gpu_names"] == ["NVIDIA A100-SXM4-40GB", "NVIDIA A100-SXM4-40GB"]
    assert facts["smi_gpu_count"] == 2
    assert facts["smi_gpu_memory_used_bytes"] == [30000 << 20, 4096 << 20]
    assert facts["smi_gpu_memory_used_fraction_max"] == round(30000 / 40960, 4)
    # GPU 0 is busy (97 %); GPU 1 idles at 0 % holding 4096 of 40960 MiB
    assert facts["smi_idle_gpu_memory_fraction_max"] == round(4096 / 40960, 4)
    assert facts["smi_processes_table"] is True
    assert facts["smi_processes_count"] == 2
    assert facts["smi_processes"] == [
        "gpu 0 pid 88231 python3 10000MiB",
        "gpu 1 pid 88232 python3 4090MiB",
    ]
    assert facts["smi_process_memory_bytes_max"] == 10000 << 20
    assert facts["smi_compute_processes_per_gpu_max"] == 1
    # GPU 0: 30000 used, 10000 listed -> 20000 of 40960 nobody visible holds
    assert facts["smi_unaccounted_memory_fraction_max"] == round(20000 / 40960, 4)
    assert facts["smi_unaccounted_gpu_busy"] is True  # that GPU runs at 97 %


def test_old_smi_table_with_no_processes() -> None:
    facts = facts_of(SMI_OLD_EMPTY)
    assert facts["driver_version"] == "418.87.01"
    assert "driver_cuda_version" not in facts
    assert facts["gpu_names"] == ["Tesla V100-SXM2"]
    assert facts["smi_processes_table"] is True
    assert facts["smi_processes_count"] == 0
    assert facts["smi_unaccounted_memory_fraction_max"] == round(14021 / 32480, 4)
    assert facts["smi_idle_gpu_memory_fraction_max"] == round(14021 / 32480, 4)
    assert facts["smi_unaccounted_gpu_busy"] is False  # held at 0 %: nothing runs


def test_a_processes_header_without_its_rows_is_a_cut_paste() -> None:
    cut = SMI_OLD_EMPTY[: SMI_OLD_EMPTY.index("|  No running")]  # the paste ends at the header
    facts = facts_of(cut)
    assert (facts["smi_processes_count"], facts["smi_processes_cut"]) == (0, True)
    assert "smi_processes_cut" not in facts_of(SMI_OLD_EMPTY)
    assert "smi_processes_cut" not in facts_of(SMI_NEW)


GPUSTAT = """\
gpu-node-3                   Mon Mar  2 10:14:07 2026  550.90.07
[0] NVIDIA A10G      | 30°C,   0 % | 21950 / 23028 MB |
[1] NVIDIA A10G      | 52'C,  30 %,  88 % | 150 / 300 W |  9100 / 23028 MB | dana(9090M)
"""


def test_gpustat_rows_stand_for_the_smi_table() -> None:
    facts = facts_of(GPUSTAT)
    assert facts["gpu_names"] == ["NVIDIA A10G", "NVIDIA A10G"]
    assert facts["smi_gpu_count"] == 2
    assert facts["smi_gpu_memory_used_bytes"] == [21950 << 20, 9100 << 20]
    assert facts["smi_idle_gpu_memory_fraction_max"] == round(21950 / 23028, 4)
    assert "smi_processes_table" not in facts


def test_smi_table_wins_over_gpustat_rows() -> None:
    facts = facts_of(SMI_NEW + GPUSTAT)
    assert facts["smi_gpu_memory_used_bytes"] == [30000 << 20, 4096 << 20]


def test_collect_env() -> None:
    facts = facts_of(COLLECT_ENV)
    assert facts["torch_version"] == "2.4.1+cu121"
    assert facts["torch_cuda_version"] == "12.1"
    assert facts["driver_version"] == "525.60.13"
    assert facts["cuda_toolkit_version"] == "12.1.105"
    assert facts["gpu_names"] == ["NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 3090"]
    assert facts["cuda_runtime_versions"] == ["12.1"]
    assert "smi_processes_table" not in facts


def test_single_line_gpu_and_torch_messages() -> None:
    facts = facts_of(
        "GPU models and configuration: GPU 0: NVIDIA GeForce RTX 4090\n"
        "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current"
        " PyTorch installation.\n"
        "RuntimeError: The NVIDIA driver on your system is too old (found version 11040).\n"
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  460.80  Fri May  7 06:55:54 UTC 2021\n"
    )
    assert facts["gpu_names"] == ["NVIDIA GeForce RTX 4090"]
    assert facts["gpu_compute_capabilities"] == ["12.0"]
    assert facts["driver_cuda_version"] == "11.4"
    assert facts["driver_version"] == "460.80"


def test_ultralytics_banner_names_the_torch_build() -> None:
    facts = facts_of("YOLOv5 \N{ROCKET} v7.0-210 Python-3.9.18 torch-1.13.1+cpu CPU\n")
    assert facts["torch_version"] == "1.13.1+cpu"


def test_ggml_device_list_and_build_architectures() -> None:
    facts = facts_of(
        "ggml_cuda_init: found 2 CUDA devices:\n"
        "  Device 0: NVIDIA GeForce RTX 3060, compute capability 8.6, VMM: yes\n"
        "  Device 1: Tesla P40, compute capability 6.1, VMM: no\n"
        "system_info: n_threads = 6 / 12 | CUDA : ARCHS = 610,700,750,800 | USE_GRAPHS = 1 |\n"
    )
    assert facts["gpu_names"] == ["NVIDIA GeForce RTX 3060", "Tesla P40"]
    assert facts["gpu_compute_capabilities"] == ["8.6", "6.1"]
    assert facts["ggml_cuda_archs"] == ["610", "700", "750", "800"]


def test_nvcc_version_gives_the_system_toolkit() -> None:
    facts = facts_of(
        "nvcc: NVIDIA (R) Cuda compiler driver\n"
        "Built on Tue_Feb_27_16:19:38_PST_2024\n"
        "Cuda compilation tools, release 12.4, V12.4.99\n"
    )
    assert facts["cuda_toolkit_version"] == "12.4"


def test_system_packages_name_the_cuda_they_were_built_for() -> None:
    facts = facts_of(
        "libnccl2/unknown,now 2.19.3-1+cuda12.3 amd64 [installed]\n"
        "ii  libcudnn8      8.6.0.163-1+cuda11.8   amd64   cuDNN runtime libraries\n"
        "libnvinfer8-8.6.1.6-1.cuda12.0.x86_64\n"
        "nvidia-cuda-runtime-cu12==12.4.127\n"
        "cudnn-local-repo-ubuntu2204-8.9.7.29/now 1.0-1 amd64 [installed,local]\n"
    )
    assert facts["cuda_runtime_versions"] == ["11.8", "12.0", "12.3", "12.4"]


def test_no_facts_from_ordinary_lines() -> None:
    assert facts_of("epoch 1 loss 0.3 | mem 12000MiB / 24000MiB |\nCUDA_VISIBLE_DEVICES=0\n") == {}


def test_compute_processes_sharing_a_gpu_are_counted_and_graphics_ones_are_not() -> None:
    table = """\
| Processes:                                                                  |
|  GPU   GI   CI        PID   Type   Process name                  GPU Memory |
|=============================================================================|
|    0   N/A  N/A      2210      G   /usr/lib/xorg/Xorg                 412MiB |
|    0   N/A  N/A     51007      C   python                           18102MiB |
|    0   N/A  N/A     51544      C   python                             611MiB |
|    1   N/A  N/A     51008      C   python                           17950MiB |
+-----------------------------------------------------------------------------+
"""
    assert facts_of(table)["smi_compute_processes_per_gpu_max"] == 2


def test_top_summary_gives_the_memory_still_available() -> None:
    facts = facts_of(
        "top - 11:20:05 up 4 days,  1:12,  1 user,  load average: 48.10, 35.02, 19.80\n"
        "MiB Mem :  64000.0 total,    250.0 free,  63500.0 used,    250.0 buff/cache\n"
        "MiB Swap:   2048.0 total,      0.0 free,   2048.0 used.    320.0 avail Mem\n"
    )
    assert facts["pasted_ram_available_fraction"] == 0.005  # 320 / 64000: avail Mem, not free
    assert facts["pasted_ram_total_bytes"] == 64000 * 2**20
    assert facts["pasted_ram_available_bytes"] == 320 * 2**20
    assert facts["pasted_swap_total_bytes"] == 2048 * 2**20


def test_top_without_its_swap_line_falls_back_to_free_memory() -> None:
    facts = facts_of("KiB Mem : 16000000 total, 4000000 free, 9000000 used, 3000000 buff/cache\n")
    assert facts["pasted_ram_available_fraction"] == 0.25
    assert "pasted_swap_total_bytes" not in facts


def test_free_human_readable_columns_have_units_of_their_own() -> None:
    facts = facts_of(
        "               total        used        free      shared  buff/cache   available\n"
        "Mem:            62Gi        61Gi       310Mi        12Mi       690Mi       496Mi\n"
        "Swap:             0B          0B          0B\n"
    )
    assert facts["pasted_ram_available_fraction"] == round(496 / (62 * 1024), 4)
    assert facts["pasted_swap_total_bytes"] == 0


def test_free_without_units_gives_the_share_only() -> None:
    facts = facts_of(
        "              total        used        free      shared  buff/cache   available\n"
        "Mem:          32000       16000        8000         100        8000       16000\n"
    )
    assert facts["pasted_ram_available_fraction"] == 0.5
    assert "pasted_ram_total_bytes" not in facts  # KiB, MiB or GiB: free does not say


def test_the_last_memory_table_wins() -> None:
    facts = facts_of(
        "MiB Mem :  32000.0 total,  20000.0 free,  10000.0 used,   2000.0 buff/cache\n"
        "later:\n"
        "MiB Mem :  32000.0 total,    100.0 free,  31800.0 used,    100.0 buff/cache\n"
    )
    assert facts["pasted_ram_available_fraction"] == round(100 / 32000, 4)


def test_ps_rows_name_the_gpu_holders_that_do_not_run() -> None:
    table = (
        "|    0   N/A  N/A     30517      C   python                          21500MiB |\n"
        "|    1   N/A  N/A     30988      C   python                           9800MiB |\n"
    )
    ps = (
        "lena     30517  0.0 12.0 51200000 16000000 pts/1 Tl  Mar02  88:10 python train.py -e 9\n"
        "lena     30988 97.5  8.1 40960000  9000000 pts/2 Rl  10:41  12:55 python eval.py\n"
        "lena     31200  0.0  0.0    10240     2048 pts/1 T   10:50   0:00 less out.log\n"
    )
    facts = facts_of(table + ps)
    # the running holder and the stopped process that holds no GPU are not named
    assert facts["smi_process_not_running"] == ["pid 30517 (stopped): python train.py -e 9"]
    zombie = ps.replace(" Tl  Mar02", " Z   Mar02")
    assert facts_of(table + zombie)["smi_process_not_running"] == [
        "pid 30517 (a zombie): python train.py -e 9"
    ]
    assert "smi_process_not_running" not in facts_of(ps)  # no nvidia-smi table, no holder


IBSTAT = """\
CA 'mlx5_0'
\tPort 1:
\t\tState: Active
\t\tPhysical state: LinkUp
\t\tRate: 400
\t\tLink layer: InfiniBand
CA 'mlx5_1'
\tPort 1:
\t\tState: Down
\t\tPhysical state: {state}
\t\tRate: 100
\t\tBase lid: 0
\t\tLink layer: {layer}
"""


def test_ibstat_ports_down_count_beside_ports_up_of_their_link_layer() -> None:
    ethernet = facts_of(IBSTAT.format(state="Disabled", layer="Ethernet"))
    assert (ethernet["ibstat_ports_down"], ethernet["ibstat_ports_up"]) == (0, 1)
    fabric = facts_of(IBSTAT.format(state="Polling", layer="InfiniBand"))
    assert (fabric["ibstat_ports_down"], fabric["ibstat_ports_up"]) == (1, 1)
    roce = IBSTAT.format(state="Disabled", layer="Ethernet").replace("InfiniBand", "Ethernet")
    assert facts_of(roce)["ibstat_ports_down"] == 1
    unshown = IBSTAT.format(state="Disabled", layer="X").replace("\t\tLink layer: X\n", "")
    assert facts_of(unshown)["ibstat_ports_down"] == 1
