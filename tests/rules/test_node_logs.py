"""Node-level logs (kernel log, nvidia-smi, Fabric Manager, Slurm) against the bundled pack.

Every text is written from the message formats (NVIDIA's driver, nvidia-smi, Fabric Manager,
slurmstepd) with invented hosts, buses and numbers; the healthy readouts must stay silent.
"""

from __future__ import annotations

import pytest

from gpudoctor.pipeline import explain_text
from gpudoctor.rulebook.book import RuleBook, load_rulebook
from gpudoctor.rulebook.model import Role

ALARM = 0.5


@pytest.fixture(scope="module")
def book() -> RuleBook:
    return load_rulebook()


def _top(text: str, book: RuleBook) -> tuple[str, float]:
    causes = explain_text(text, book).causes
    assert causes, "expected a diagnosis"
    return causes[0].cause, causes[0].confidence


def test_every_xid_of_the_catalogue_is_a_generic_rule(book: RuleBook) -> None:
    xids = {r.id for r in book.rules if r.id.startswith("nvidia-xid-")}
    assert {f"nvidia-xid-{n}" for n in range(1, 173)} <= xids
    by_id = {r.id: r for r in book.rules}
    assert by_id["nvidia-xid-13"].cause == "illegal_memory_access"
    assert by_id["nvidia-xid-79"].cause == "xid_hardware"
    assert by_id["nvidia-xid-45"].role is Role.CASCADE
    assert by_id["nvidia-xid-146"].role is Role.GENERIC


@pytest.mark.parametrize("xid", [46, 109, 136, 143, 158])
def test_a_fatal_xid_without_hand_rule_is_hardware(book: RuleBook, xid: int) -> None:
    text = (
        f"[ 4100.250000] NVRM: Xid (PCI:0000:5d:00): {xid}, pid=9911, name=trainer, Ch 00000011\n"
    )
    cause, confidence = _top(text, book)
    assert cause == "xid_hardware" and confidence >= 0.6


def test_xid_45_alone_is_only_a_consequence(book: RuleBook) -> None:
    text = "NVRM: Xid (PCI:0000:5d:00): 45, pid=9911, name=trainer, Ch 00000011\n"
    causes = explain_text(text, book).causes
    assert all(d.confidence < ALARM for d in causes)


def test_sxid_from_the_nvswitch_driver_and_fabric_manager(book: RuleBook) -> None:
    kernel = "[ 91.5] nvidia-nvswitch2: SXid (PCI:0000:a4:00.0): 12020, Fatal, Link 31 egress seq\n"
    fm = (
        "[Feb 02 2025 03:04:05] [ERROR] [tid 55] detected NVSwitch fatal error 22003 on fid 0 "
        "on NVSwitch pci bus id 00000000:a4:00.0 physical id 1 port 9\n"
    )
    for text in (kernel, fm):
        cause, confidence = _top(text, book)
        assert cause == "xid_hardware" and confidence >= 0.8
    # a non-fatal (single-bit ECC) SXid is only a lead
    cause, confidence = _top("nvidia-nvswitch0: SXid (PCI:0000:a4:00.0): 11012, Non-fatal\n", book)
    assert confidence < ALARM


def test_fabric_manager_failure_explains_cuda_802(book: RuleBook) -> None:
    text = (
        "nv-fabricmanager[3120]: request to query NVSwitch device information from NVSwitch "
        "driver failed with error:generic error [NV_ERR_GENERIC]\n"
        "RuntimeError: CUDA error: system not yet initialized\n"
    )
    assert _top(text, book)[0] == "xid_hardware"


def test_fabric_manager_nothing_to_do_is_not_a_fault(book: RuleBook) -> None:
    text = (
        "nv-fabricmanager[3120]: request to query NVSwitch device information from NVSwitch "
        "driver failed with error:WARNING Nothing to do [NV_WARN_NOTHING_TO_DO]\n"
    )
    assert all(d.cause != "xid_hardware" for d in explain_text(text, book).causes)


def test_api_mismatch_split_over_kernel_lines(book: RuleBook) -> None:
    text = (
        "[ 5120.330001] NVRM: API mismatch: the client has the version 550.90.07, but\n"
        "[ 5120.330001] NVRM: this kernel module has the version 550.54.15.  Please\n"
        "[ 5120.330001] NVRM: make sure that this kernel module and all NVIDIA driver\n"
    )
    assert _top(text, book)[0] == "driver_cuda_mismatch"


def test_reset_required_outranks_busy_device(book: RuleBook) -> None:
    text = (
        "CUDA error: CUDA-capable device(s) is/are busy or unavailable\n"
        "[Mon Mar  3 10:00:00 2025] NVRM: nvAssertOkFailedNoLog: Assertion failed: Reset "
        "required [NV_ERR_RESET_REQUIRED] (0x00000062) returned from status @ kernel_channel.c:99\n"
    )
    assert _top(text, book)[0] == "xid_hardware"


PENDING = """\
GPU 00000000:17:00.0
    Retired Pages
        Single Bit ECC                    : 3
        Double Bit ECC                    : {dbe}
        Pending Page Blacklist            : {pending}
"""

REMAP = """\
    Remapped Rows
        Correctable Error                 : 0
        Uncorrectable Error               : {unc}
        Pending                           : {pending}
        Remapping Failure Occurred        : {failure}
"""


def test_smi_memory_errors_pending_or_failed(book: RuleBook) -> None:
    cause, confidence = _top(PENDING.format(dbe=4, pending="Yes"), book)
    assert cause == "xid_hardware" and confidence >= 0.7
    cause, confidence = _top(REMAP.format(unc=2, pending="No", failure="Yes"), book)
    assert cause == "xid_hardware" and confidence >= 0.8


def test_smi_clean_memory_readout_is_silent(book: RuleBook) -> None:
    text = PENDING.format(dbe=0, pending="No") + REMAP.format(unc=0, pending="No", failure="No")
    assert explain_text(text, book).causes == ()


def test_smi_inactive_nvlinks(book: RuleBook) -> None:
    text = (
        "GPU 2: NVIDIA H100 80GB HBM3 (UUID: GPU-00000000-1111-2222-3333-444444444444)\n"
        "\t Link 0: 26.562 GB/s\n\t Link 1: <inactive>\n\t Link 2: <inactive>\n"
    )
    assert _top(text, book)[0] == "xid_hardware"
    healthy = "GPU 2: NVIDIA H100 80GB HBM3\n\t Link 0: 26.562 GB/s\n\t Link 1: 26.562 GB/s\n"
    assert explain_text(healthy, book).causes == ()


def test_smi_err_cells_but_not_a_power_only_glitch(book: RuleBook) -> None:
    bad = "|   2  ERR!  ERR!  ERR!    ERR! / ERR! |   2010MiB / 40960MiB |    ERR!      Default |\n"
    assert _top(bad, book)[0] == "xid_hardware"
    glitch = "| N/A   41C    P0   ERR! / 300W |   1200MiB / 32510MiB |     12%      Default |\n"
    assert explain_text(glitch, book).causes == ()


def test_smi_sw_power_cap_alone_is_benign(book: RuleBook) -> None:
    text = (
        "    Clocks Event Reasons\n"
        "        Idle                              : Not Active\n"
        "        SW Power Cap                      : Active\n"
        "        HW Slowdown                       : Not Active\n"
        "            HW Thermal Slowdown           : Not Active\n"
    )
    assert explain_text(text, book).causes == ()


def test_smi_unnamed_process_holds_memory(book: RuleBook) -> None:
    text = (
        "|  GPU       PID  Type  Process name                               Usage      |\n"
        "|    1     40404    C   Unknown Error                                 3100MiB |\n"
    )
    assert _top(text, book)[0] == "gpu_memory_held_by_other_process"


def test_slurm_cgroup_oom_kill(book: RuleBook) -> None:
    text = (
        "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=777.0. Some of your "
        "processes may have been killed by the cgroup out-of-memory handler.\n"
        "srun: error: gpu-node-3: task 0: Out Of Memory\n"
    )
    assert _top(text, book)[0] == "host_oom"


def test_a_gpu_the_driver_refuses_explains_the_failed_init(book: RuleBook) -> None:
    text = (
        "[   7.301122] NVRM: The NVIDIA GPU 0000:65:00.0 (PCI ID: 10de:1c82)\n"
        "              NVRM: installed in this system is not supported by open\n"
        "              NVRM: nvidia.ko because it does not include the required GPU\n"
        "              NVRM: System Processor (GSP).\n"
        "[ 402.118734] NVRM: GPU 0000:65:00.0: RmInitAdapter failed! (0x22:0x56:897)\n"
        "[ 402.120053] NVRM: GPU 0000:65:00.0: rm_init_adapter failed, device minor number 0\n"
    )
    causes = explain_text(text, book).causes
    assert (causes[0].rule, causes[0].cause) == ("nvrm-gpu-not-supported", "arch_mismatch")
    assert all(c.confidence < ALARM for c in causes if c.cause == "xid_hardware")


def test_rows_of_the_oom_killer_s_task_table_are_a_memory_kill(book: RuleBook) -> None:
    text = (
        "[ 5120.331870] [   1201]     0  1201    11207      633        0      633         0"
        "   118784      512         -1000 systemd-udevd\n"
        "[ 5120.331874] [   9312]  1001  9312 21406215 15912011 15903337     8674         0"
        " 128811008        0             0 python3\n"
    )
    cause, confidence = _top(text, book)
    assert cause == "host_oom" and confidence >= ALARM


def test_docker_s_oom_event_is_a_memory_kill(book: RuleBook) -> None:
    container = "9d1c3b5e7f2a4c6e8b0d1f3a5c7e9b1d3f5a7c9e1b3d5f7a9c1e3b5d7f9a1c3e"
    text = (
        f"Type=container  Status=exec_start: cat /health/ready  ID={container}\n"
        f"Type=container  Status=oom  ID={container}\n"
        f"Type=container  Status=die  ID={container}\n"
    )
    assert _top(text, book)[0] == "host_oom"


def test_a_crash_looping_device_plugin_is_a_library_lead(book: RuleBook) -> None:
    text = (
        "NAME                                   READY   STATUS             RESTARTS      AGE\n"
        "nvidia-device-plugin-daemonset-7fq2d   0/1     CrashLoopBackOff   8 (90s ago)   17m\n"
    )
    cause, confidence = _top(text, book)
    assert cause == "cuda_libs_missing" and confidence < ALARM


MIG_ROW_TABLE = """\
| NVIDIA-SMI 460.32.03    Driver Version: 418.67       CUDA Version: 10.1     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|                               |                      |               MIG M. |
|===============================+======================+======================|
|   0  Tesla P100-PCIE...  Off  | 00000000:00:04.0 Off |                    0 |
| N/A   36C    P0    27W / 250W |      0MiB / 16280MiB |      0%      Default |
|                               |                      |                 {mig} |
+-------------------------------+----------------------+----------------------+
"""


def test_an_err_in_the_mig_mode_cell_alone_is_no_fault(book: RuleBook) -> None:
    assert not explain_text(MIG_ROW_TABLE.format(mig="ERR!"), book).causes
    faulty = MIG_ROW_TABLE.format(mig="ERR!").replace("   36C    P0 ", " ERR!   P0 ")
    assert _top(faulty, book)[0] == "xid_hardware"


def test_a_table_cut_at_its_processes_header_is_a_weak_lead(book: RuleBook) -> None:
    table = MIG_ROW_TABLE.format(mig="  N/A").replace("  0MiB / 16280MiB", "11020MiB / 16280MiB")
    header = (
        "+-----------------------------------------------------------------------------+\n"
        "| Processes:                                                                  |\n"
        "|  GPU   GI   CI        PID   Type   Process name                  GPU Memory |\n"
    )
    none = "|  No running processes found                                                 |\n"
    cause, confidence = _top(table + header + none, book)
    assert cause == "gpu_memory_held_by_other_process" and confidence >= ALARM
    cause, confidence = _top(table + header, book)
    assert cause == "gpu_memory_held_by_other_process" and confidence < ALARM


def test_a_library_built_for_a_newer_cuda_than_the_driver(book: RuleBook) -> None:
    banner = "| NVIDIA-SMI 470.223.02   Driver Version: 470.223.02   CUDA Version: 11.4     |\n"
    newer = banner + "libcudnn8/now 8.9.7.29-1+cuda12.2 amd64 [installed]\n"
    cause, confidence = _top(newer, book)
    assert cause == "driver_cuda_mismatch" and confidence >= ALARM
    same_major = banner + "libcudnn8/now 8.9.7.29-1+cuda11.8 amd64 [installed]\n"
    assert not [c for c in explain_text(same_major, book).causes if c.confidence >= ALARM]


def test_an_overheated_cable_module_explains_the_link_it_drops(book: RuleBook) -> None:
    text = (
        "mlx5_core 0000:86:00.1: mlx5_port_module_event:1131:(pid 0): Port module event[error]:"
        " module 1, High Temperature\n"
        "Jun 02 04:11:09 gpu-node-07 systemd-networkd[1187]: ib1: lost carrier\n"
    )
    causes = explain_text(text, book).causes
    assert causes[0].cause == "thermal_power"
    link = next(c for c in causes if c.cause == "nccl_failure")
    assert link.confidence < causes[0].confidence


def test_a_kernel_panic_on_out_of_memory_is_host_memory(book: RuleBook) -> None:
    cause, confidence = _top(
        "[ 4410.201933] Kernel panic - not syncing: Out of memory and no killable processes...\n",
        book,
    )
    assert cause == "host_oom" and confidence >= ALARM
