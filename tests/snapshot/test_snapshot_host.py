"""Host facts read from a fake filesystem root: meminfo, shm, cgroup v1/v2, limits, container."""

from __future__ import annotations

import os
import resource
from pathlib import Path

from gpudoctor.snapshot.host import collect_host

MEMINFO = (
    "MemTotal:       65536000 kB\nMemAvailable:   32768000 kB\nSwapTotal:  0 kB\nSwapFree: 0 kB\n"
)


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _statvfs(total_blocks: int, free_blocks: int) -> os.statvfs_result:
    # f_bsize, f_frsize, f_blocks, f_bfree, f_bavail, f_files, f_ffree, f_favail, f_flag, f_namemax
    return os.statvfs_result((4096, 4096, total_blocks, free_blocks, free_blocks, 0, 0, 0, 0, 255))


def _collect(root: Path, env: dict[str, str] | None = None) -> tuple[object, object]:
    return collect_host(
        root=root,
        env=env or {},
        statvfs=lambda path: _statvfs(16384, 12288),  # 64 MiB, 48 MiB free
        getrlimit=lambda rid: (1024, 4096),
        hostname="node-1",
        kernel="5.15.0-105-generic",
        cpu_count=8,
    )


def test_cgroup_v2_container(tmp_path: Path) -> None:
    _write(tmp_path, "proc/meminfo", MEMINFO)
    _write(tmp_path, "etc/os-release", 'NAME="Ubuntu"\nPRETTY_NAME="Ubuntu 22.04.4 LTS"\n')
    _write(tmp_path, "proc/self/cgroup", "0::/\n")
    _write(tmp_path, "sys/fs/cgroup/cgroup.controllers", "cpu memory pids\n")
    _write(tmp_path, "sys/fs/cgroup/memory.max", "17179869184\n")
    _write(tmp_path, "sys/fs/cgroup/memory.current", "17179000000\n")
    _write(tmp_path, "sys/fs/cgroup/memory.events", "low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\n")
    _write(tmp_path, ".dockerenv", "")
    host, sources = collect_host(
        root=tmp_path,
        env={"KUBERNETES_SERVICE_HOST": "10.0.0.1"},
        statvfs=lambda path: _statvfs(16384, 12288),
        getrlimit=lambda rid: (1024, 4096),
        hostname="node-1",
        kernel="5.15.0-105-generic",
        cpu_count=8,
    )
    assert host.hostname == "node-1"
    assert host.os_name == "Ubuntu 22.04.4 LTS"
    assert host.ram_total_bytes == 65536000 * 1024
    assert host.ram_available_bytes == 32768000 * 1024
    assert host.swap_total_bytes == 0
    assert host.shm_total_bytes == 64 << 20
    assert host.shm_free_bytes == 48 << 20
    assert host.shm_used_bytes == 16 << 20
    assert host.cgroup_version == 2
    assert host.cgroup_memory_limit_bytes == 17179869184
    assert host.cgroup_memory_usage_bytes == 17179000000
    assert host.cgroup_oom_kill_count == 2
    assert (host.ulimit_nofile_soft, host.ulimit_nofile_hard) == (1024, 4096)
    assert host.in_container is True
    assert host.container_runtime == "kubernetes"
    assert host.container_evidence == ("/.dockerenv exists", "KUBERNETES_SERVICE_HOST is set")
    assert host.unavailable == {}
    assert all(s.ok for s in sources)


def test_cgroup_v1_unlimited_with_nested_path(tmp_path: Path) -> None:
    _write(tmp_path, "proc/meminfo", MEMINFO)
    _write(tmp_path, "proc/self/cgroup", "4:memory:/slurm/uid_1000/job_77\n0::/\n")
    base = "sys/fs/cgroup/memory/slurm/uid_1000/job_77"
    _write(tmp_path, f"{base}/memory.limit_in_bytes", "9223372036854771712\n")
    _write(tmp_path, f"{base}/memory.usage_in_bytes", "1048576\n")
    _write(tmp_path, f"{base}/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 5\n")
    _write(tmp_path, "proc/1/cgroup", "1:name=systemd:/init.scope\n")
    host, _ = _collect(tmp_path)
    assert host.cgroup_version == 1
    assert host.cgroup_memory_limit_bytes is None
    assert host.unavailable["cgroup_memory_limit_bytes"] == "NoLimit"
    assert host.cgroup_memory_usage_bytes == 1048576
    assert host.cgroup_oom_kill_count == 5
    assert host.in_container is False
    assert host.container_runtime is None


def test_missing_files_give_none_with_reasons(tmp_path: Path) -> None:
    host, sources = collect_host(
        root=tmp_path,
        env={},
        statvfs=lambda path: (_ for _ in ()).throw(FileNotFoundError(2, "No such file")),
        getrlimit=lambda rid: (resource.RLIM_INFINITY, resource.RLIM_INFINITY),
        hostname="h",
        kernel="k",
        cpu_count=1,
    )
    assert host.ram_total_bytes is None
    assert host.unavailable["ram_total_bytes"] == "/proc/meminfo: file not found"
    assert host.shm_total_bytes is None
    assert host.unavailable["shm_total_bytes"].startswith("/dev/shm:")
    assert host.cgroup_version is None
    assert host.unavailable["cgroup_memory_limit_bytes"] == "no cgroup memory controller found"
    assert host.ulimit_nofile_soft is None
    assert host.unavailable["ulimit_nofile_soft"] == "Unlimited"
    assert host.os_name is None
    failed = {s.name for s in sources if not s.ok}
    assert failed == {"/proc/meminfo", "/dev/shm", "cgroup memory"}


def test_live_host_does_not_raise() -> None:
    host, _ = collect_host()
    assert host.hostname
    assert host.cpu_count is not None and host.cpu_count >= 1
