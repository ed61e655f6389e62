"""Who a GPU process is: user, command line, and whether it still exists.

The collector asks a :data:`ProcessInspector` about every pid NVML lists. The live one,
:func:`inspect_process`, uses psutil; the fake NVML scenarios supply their own, so tests
never depend on which pids happen to exist on the test machine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class ProcessDetails:
    """What is known about one pid; ``reason`` says why a part is missing."""

    exists: bool | None
    zombie: bool | None = None
    name: str | None = None
    user: str | None = None
    cmdline: tuple[str, ...] | None = None
    reason: str | None = None


#: Maps a pid to its details.
ProcessInspector = Callable[[int], ProcessDetails]


def inspect_process(pid: int) -> ProcessDetails:
    """Describe a live process with psutil (pids NVML reports may be host pids).

    A pid that psutil cannot find gives ``exists=False``; inside a container the GPU's
    processes may belong to the host's pid namespace, so the reason says so.
    """
    import psutil

    try:
        proc = psutil.Process(pid)
        with proc.oneshot():
            status = proc.status()
            zombie = status == psutil.STATUS_ZOMBIE
            name = _safe(proc.name)
            user = _safe(proc.username)
            cmd = None if zombie else _safe(proc.cmdline)
    except psutil.NoSuchProcess:
        return ProcessDetails(
            exists=False,
            reason="NoSuchProcess (gone, or a pid from another pid namespace)",
        )
    except psutil.AccessDenied:
        return ProcessDetails(exists=True, reason="AccessDenied")
    except Exception as exc:  # psutil can raise OSError subclasses on odd /proc states
        return ProcessDetails(exists=None, reason=f"Error: {exc}")
    return ProcessDetails(
        exists=True,
        zombie=zombie,
        name=name if isinstance(name, str) else None,
        user=user if isinstance(user, str) else None,
        cmdline=tuple(cmd) if isinstance(cmd, list) else None,
        reason=None if cmd is not None or zombie else "AccessDenied (cmdline)",
    )


def _safe(getter: Callable[[], object]) -> object:
    import psutil

    try:
        return getter()
    except (psutil.AccessDenied, psutil.ZombieProcess, OSError):
        return None
