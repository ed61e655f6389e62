"""Host facts: memory, swap, /dev/shm, cgroup memory limit and OOM kills, limits, container.

Everything is read from files below ``root`` (``/`` on the live machine, a temporary tree in
tests) plus ``os``/``resource`` calls that tests can replace. A file that is missing or
unreadable leaves its fields ``None`` with the reason in ``HostInfo.unavailable``; a
cgroup without a memory limit gives ``cgroup_memory_limit_bytes = None`` with the reason
``"NoLimit"``.
"""

from __future__ import annotations

import os
import platform
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from gpudoctor.snapshot.model import HostInfo, SourceStatus

# cgroup v1 reports "no limit" as a page-rounded LONG_MAX; anything this large is unlimited.
_V1_UNLIMITED = 1 << 62

StatVfs = Callable[[str], os.statvfs_result]
GetRlimit = Callable[[int], tuple[int, int]]


@dataclass
class _Builder:
    values: dict[str, object] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)
    sources: list[SourceStatus] = field(default_factory=list)

    def set(self, name: str, value: object) -> None:
        self.values[name] = value
        self.unavailable.pop(name, None)

    def missing(self, reason: str, *names: str) -> None:
        for name in names:
            if name not in self.values and name not in self.unavailable:
                self.unavailable[name] = reason


def _read(path: Path) -> tuple[str | None, str | None]:
    try:
        return path.read_text(encoding="utf-8", errors="replace"), None
    except FileNotFoundError:
        return None, "file not found"
    except PermissionError:
        return None, "permission denied"
    except OSError as exc:
        return None, exc.strerror or str(exc)


def _default_getrlimit(resource_id: int) -> tuple[int, int]:
    import resource

    return resource.getrlimit(resource_id)


def collect_host(
    *,
    root: Path = Path("/"),
    env: Mapping[str, str] | None = None,
    statvfs: StatVfs = os.statvfs,
    getrlimit: GetRlimit | None = None,
    hostname: str | None = None,
    kernel: str | None = None,
    cpu_count: int | None = None,
) -> tuple[HostInfo, list[SourceStatus]]:
    """Read host facts below ``root``; never raises for unreadable sources.

    Args:
        root: filesystem root to read ``proc``, ``sys``, ``etc``, ``dev/shm`` below.
        env: environment (``KUBERNETES_SERVICE_HOST``, ``container``); default ``os.environ``.
        statvfs: ``os.statvfs`` replacement for ``/dev/shm``.
        getrlimit: ``resource.getrlimit`` replacement.
        hostname, kernel, cpu_count: override the live values (tests).
    """
    environ = os.environ if env is None else env
    b = _Builder()
    b.set("hostname", hostname if hostname is not None else os.uname().nodename)
    b.set("kernel", kernel if kernel is not None else platform.release())
    b.set("cpu_count", cpu_count if cpu_count is not None else _cpu_count())
    _os_release(b, root)
    _meminfo(b, root)
    _shm(b, root, statvfs)
    _cgroup(b, root)
    _ulimit(b, getrlimit or _default_getrlimit)
    _container(b, root, environ)
    info = HostInfo(**b.values, unavailable=dict(sorted(b.unavailable.items())))  # type: ignore[arg-type]
    return info, b.sources


def _cpu_count() -> int | None:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count()


def _os_release(b: _Builder, root: Path) -> None:
    for rel in ("etc/os-release", "usr/lib/os-release"):
        text, _reason = _read(root / rel)
        if text is None:
            continue
        fields: dict[str, str] = {}
        for line in text.splitlines():
            key, sep, value = line.partition("=")
            if sep:
                fields[key.strip()] = value.strip().strip("\"'")
        name = fields.get("PRETTY_NAME") or fields.get("NAME")
        if name:
            b.set("os_name", name)
            return
    b.missing("/etc/os-release not readable", "os_name")


def _meminfo(b: _Builder, root: Path) -> None:
    names = ("ram_total_bytes", "ram_available_bytes", "swap_total_bytes", "swap_free_bytes")
    text, reason = _read(root / "proc/meminfo")
    b.sources.append(SourceStatus("/proc/meminfo", text is not None, reason))
    if text is None:
        b.missing(f"/proc/meminfo: {reason}", *names)
        return
    kib: dict[str, int] = {}
    for line in text.splitlines():
        key, _sep, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            kib[key.strip()] = int(parts[0]) * 1024
    for name, key in zip(names, ("MemTotal", "MemAvailable", "SwapTotal", "SwapFree"), strict=True):
        if key in kib:
            b.set(name, kib[key])
    b.missing("not in /proc/meminfo", *names)


def _shm(b: _Builder, root: Path, statvfs: StatVfs) -> None:
    names = ("shm_total_bytes", "shm_used_bytes", "shm_free_bytes")
    path = root / "dev/shm"
    try:
        st = statvfs(str(path))
    except OSError as exc:
        reason = exc.strerror or str(exc)
        b.sources.append(SourceStatus("/dev/shm", False, reason))
        b.missing(f"/dev/shm: {reason}", *names)
        return
    b.sources.append(SourceStatus("/dev/shm", True))
    total = st.f_blocks * st.f_frsize
    free = st.f_bavail * st.f_frsize
    b.set("shm_total_bytes", total)
    b.set("shm_free_bytes", free)
    b.set("shm_used_bytes", (st.f_blocks - st.f_bfree) * st.f_frsize)


def _own_cgroup_paths(root: Path) -> dict[str, str]:
    """Map controller ("" for v2) to this process's cgroup path, from /proc/self/cgroup."""
    text, _reason = _read(root / "proc/self/cgroup")
    paths: dict[str, str] = {}
    for line in (text or "").splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            for controller in parts[1].split(","):
                paths[controller] = parts[2]
    return paths


def _cgroup_dir(base: Path, own: str | None) -> Path:
    # With a cgroup namespace (containers) the own path is "/" and files sit at the base.
    if own and own != "/":
        candidate = base / own.lstrip("/")
        if candidate.is_dir():
            return candidate
    return base


def _int_or_none(text: str | None) -> int | None:
    if text is None:
        return None
    value = text.strip()
    return int(value) if value.isdigit() else None


def _cgroup(b: _Builder, root: Path) -> None:
    names = ("cgroup_memory_limit_bytes", "cgroup_memory_usage_bytes", "cgroup_oom_kill_count")
    base = root / "sys/fs/cgroup"
    own = _own_cgroup_paths(root)
    if (base / "cgroup.controllers").exists():
        b.set("cgroup_version", 2)
        directory = _cgroup_dir(base, own.get(""))
        limit_text, reason = _read(directory / "memory.max")
        if limit_text is not None and limit_text.strip() == "max":
            b.unavailable["cgroup_memory_limit_bytes"] = "NoLimit"
        elif (limit := _int_or_none(limit_text)) is not None:
            b.set("cgroup_memory_limit_bytes", limit)
        if (usage := _int_or_none(_read(directory / "memory.current")[0])) is not None:
            b.set("cgroup_memory_usage_bytes", usage)
        events, _ = _read(directory / "memory.events")
        counts = _key_values(events)
        if "oom_kill" in counts:
            b.set("cgroup_oom_kill_count", counts["oom_kill"])
        b.sources.append(SourceStatus("cgroup v2 memory", limit_text is not None, reason))
        b.missing(f"cgroup v2 memory files not readable in {directory}", *names)
        return
    memory_base = base / "memory"
    if memory_base.is_dir():
        b.set("cgroup_version", 1)
        directory = _cgroup_dir(memory_base, own.get("memory"))
        limit_text, reason = _read(directory / "memory.limit_in_bytes")
        limit = _int_or_none(limit_text)
        if limit is not None and limit >= _V1_UNLIMITED:
            b.unavailable["cgroup_memory_limit_bytes"] = "NoLimit"
        elif limit is not None:
            b.set("cgroup_memory_limit_bytes", limit)
        if (usage := _int_or_none(_read(directory / "memory.usage_in_bytes")[0])) is not None:
            b.set("cgroup_memory_usage_bytes", usage)
        counts = _key_values(_read(directory / "memory.oom_control")[0])
        if "oom_kill" in counts:
            b.set("cgroup_oom_kill_count", counts["oom_kill"])
        else:
            b.unavailable["cgroup_oom_kill_count"] = "not reported by this kernel (needs 4.13+)"
        b.sources.append(SourceStatus("cgroup v1 memory", limit_text is not None, reason))
        b.missing(f"cgroup v1 memory files not readable in {directory}", *names)
        return
    b.sources.append(SourceStatus("cgroup memory", False, "no cgroup memory controller found"))
    b.missing("no cgroup memory controller found", "cgroup_version", *names)


def _key_values(text: str | None) -> dict[str, int]:
    counts: dict[str, int] = {}
    for line in (text or "").splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            counts[parts[0]] = int(parts[1])
    return counts


def _ulimit(b: _Builder, getrlimit: GetRlimit) -> None:
    try:
        import resource

        soft, hard = getrlimit(resource.RLIMIT_NOFILE)
        infinity = resource.RLIM_INFINITY
    except (ImportError, OSError, ValueError) as exc:
        b.missing(f"getrlimit failed: {exc}", "ulimit_nofile_soft", "ulimit_nofile_hard")
        return
    for name, value in (("ulimit_nofile_soft", soft), ("ulimit_nofile_hard", hard)):
        if value == infinity:
            b.unavailable[name] = "Unlimited"
        else:
            b.set(name, int(value))


_CGROUP_MARKERS = (
    ("kubepods", "kubernetes"),
    ("docker", "docker"),
    ("libpod", "podman"),
    ("containerd", "containerd"),
    ("lxc", "lxc"),
)


def _container(b: _Builder, root: Path, environ: Mapping[str, str]) -> None:
    evidence: list[str] = []
    runtime: str | None = None
    if (root / ".dockerenv").exists():
        evidence.append("/.dockerenv exists")
        runtime = "docker"
    if (root / "run/.containerenv").exists():
        evidence.append("/run/.containerenv exists")
        runtime = runtime or "podman"
    if environ.get("KUBERNETES_SERVICE_HOST"):
        evidence.append("KUBERNETES_SERVICE_HOST is set")
        runtime = "kubernetes"
    if environ.get("container"):
        evidence.append(f"container={environ['container']} in the environment")
        runtime = runtime or environ["container"]
    for rel in ("proc/1/cgroup", "proc/self/cgroup"):
        text, _ = _read(root / rel)
        for marker, name in _CGROUP_MARKERS:
            if text and marker in text:
                evidence.append(f"/{rel} mentions {marker}")
                runtime = runtime or name
                break
        else:
            continue
        break
    b.set("in_container", bool(evidence))
    b.set("container_runtime", runtime)
    b.set("container_evidence", tuple(evidence))
