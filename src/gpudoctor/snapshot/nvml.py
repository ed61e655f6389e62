"""The one place gpudoctor talks to NVML (the only module that imports ``pynvml``).

:class:`NvmlSession` wraps an NVML binding — the real ``pynvml`` module or the scenario
driven :class:`~gpudoctor.snapshot.scenario_nvml.FakeNvml`, which exposes the same names — and
turns every ``NVMLError`` into ``(None, reason)`` where the reason is the error's short name
(``"NotSupported"``, ``"NoPermission"``, ``"GpuIsLost"``, ``"FunctionNotFound"`` ...).
NVML is initialised once per process per binding (and shut down at interpreter exit); a
failed initialisation is remembered and reported as a status, never raised. NVML never
creates a CUDA context, so nothing here touches the GPUs' compute state.
"""

from __future__ import annotations

import atexit
import contextlib
import sys
import threading
import warnings
from dataclasses import dataclass
from typing import Any

from gpudoctor.snapshot.model import (
    NVML_DRIVER_LIBRARY_MISMATCH,
    NVML_ERROR,
    NVML_LIBRARY_NOT_FOUND,
    NVML_NO_DRIVER,
    NVML_NO_PERMISSION,
    NVML_OK,
)

# NVML return codes are part of the C ABI (nvml.h) and never change meaning.
ERROR_NAMES: dict[int, str] = {
    1: "Uninitialized",
    2: "InvalidArgument",
    3: "NotSupported",
    4: "NoPermission",
    5: "AlreadyInitialized",
    6: "NotFound",
    7: "InsufficientSize",
    8: "InsufficientPower",
    9: "DriverNotLoaded",
    10: "Timeout",
    11: "IrqIssue",
    12: "LibraryNotFound",
    13: "FunctionNotFound",
    14: "CorruptedInforom",
    15: "GpuIsLost",
    16: "ResetRequired",
    17: "OperatingSystem",
    18: "LibRmVersionMismatch",
    19: "InUse",
    20: "Memory",
    21: "NoData",
    22: "VgpuEccNotSupported",
    23: "InsufficientResources",
    24: "FreqNotSupported",
    25: "ArgumentVersionMismatch",
    26: "Deprecated",
    27: "NotReady",
    28: "GpuNotFound",
    29: "InvalidState",
    999: "Unknown",
}

_INIT_STATUS: dict[str, str] = {
    "LibraryNotFound": NVML_LIBRARY_NOT_FOUND,
    "DriverNotLoaded": NVML_NO_DRIVER,
    "LibRmVersionMismatch": NVML_DRIVER_LIBRARY_MISMATCH,
    "NoPermission": NVML_NO_PERMISSION,
}

_INIT_HINTS: dict[str, str] = {
    "LibraryNotFound": (
        "libnvidia-ml.so.1 could not be loaded: no NVIDIA driver is installed on this machine "
        "(or its libraries are not on the loader path / not mounted into the container)"
    ),
    "DriverNotLoaded": (
        "the NVIDIA kernel module is not loaded (nvidia-smi would say it couldn't communicate "
        "with the NVIDIA driver)"
    ),
    "LibRmVersionMismatch": (
        "the NVIDIA user-space libraries and the loaded kernel module have different versions "
        "(typically after a driver upgrade without a reboot): reboot or reload the nvidia module"
    ),
    "NoPermission": "this user may not open the NVIDIA device files (/dev/nvidia*)",
}


@dataclass(frozen=True)
class InitResult:
    """How NVML initialisation went: ``status`` as in :class:`DriverInfo`; ``backend`` names
    the binding that was tried, when one was."""

    status: str
    error: str | None = None
    message: str | None = None
    backend: str | None = None


def error_name(exc: BaseException) -> str:
    """Short name of an NVML error (``"NotSupported"``), from its code or class name."""
    code = getattr(exc, "value", None)
    if isinstance(code, int) and code in ERROR_NAMES:
        return ERROR_NAMES[code]
    cls_name = type(exc).__name__
    if cls_name.startswith("NVMLError_"):
        return cls_name[len("NVMLError_") :]
    return "Unknown" if cls_name == "NVMLError" else cls_name


def load_pynvml() -> tuple[Any | None, str | None]:
    """Import the real bindings; returns (module, None) or (None, reason)."""
    try:
        with warnings.catch_warnings():
            # The deprecated ``pynvml`` dist installs an import hook that warns even when the
            # module really comes from nvidia-ml-py.
            warnings.simplefilter("ignore", FutureWarning)
            import pynvml
    except ImportError as exc:
        return None, f"the nvidia-ml-py package (module pynvml) cannot be imported: {exc}"
    return pynvml, None


_LOCK = threading.Lock()
_INITIALISED: dict[int, tuple[Any, InitResult]] = {}


def _shutdown(lib: Any) -> None:
    # Shutting down at interpreter exit must never raise.
    with contextlib.suppress(Exception):
        lib.nvmlShutdown()


class NvmlSession:
    """Calls NVML functions on one binding, never raising for NVML errors."""

    def __init__(self, lib: Any, backend: str) -> None:
        """Wrap ``lib`` (``pynvml`` or a fake); ``backend`` names it in the snapshot."""
        self.lib = lib
        self.backend = backend
        self._nvml_error: type[BaseException] = getattr(lib, "NVMLError", Exception)

    def init(self) -> InitResult:
        """Initialise NVML once for this binding (cached, including failures)."""
        with _LOCK:
            cached = _INITIALISED.get(id(self.lib))
            if cached is not None and cached[0] is self.lib:
                return cached[1]
            result = self._init_once()
            _INITIALISED[id(self.lib)] = (self.lib, result)
            return result

    def _init_once(self) -> InitResult:
        try:
            self.lib.nvmlInit()
        except self._nvml_error as exc:
            name = error_name(exc)
            text = str(exc) or name
            hint = _INIT_HINTS.get(name)
            return InitResult(
                status=_INIT_STATUS.get(name, NVML_ERROR),
                error=name,
                message=f"{text}: {hint}" if hint else text,
            )
        except OSError as exc:  # a broken libnvidia-ml can fail inside ctypes
            return InitResult(NVML_LIBRARY_NOT_FOUND, "LibraryNotFound", str(exc))
        if getattr(self.lib, "SHUTDOWN_AT_EXIT", True):
            atexit.register(_shutdown, self.lib)
        return InitResult(NVML_OK)

    def call(self, function: str, *args: Any, **kwargs: Any) -> tuple[Any, str | None]:
        """Call ``lib.<function>(*args)``; return (value, None) or (None, reason)."""
        fn = getattr(self.lib, function, None)
        if fn is None:
            return None, "FunctionNotFound"
        try:
            return _decode(fn(*args, **kwargs)), None
        except self._nvml_error as exc:
            return None, error_name(exc)
        except (TypeError, ValueError, OSError, AttributeError) as exc:
            # An old binding with another signature, or a ctypes failure: not fatal.
            return None, f"Error: {type(exc).__name__}: {exc}"

    def constant(self, name: str, default: int) -> int:
        """An NVML constant from the binding, or ``default`` (the nvml.h value)."""
        value = getattr(self.lib, name, default)
        return value if isinstance(value, int) else default

    def has(self, function: str) -> bool:
        """True when the binding offers ``function``."""
        return callable(getattr(self.lib, function, None))


def _decode(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def _nvml_library_missing() -> bool:
    """On Linux, whether ``libnvidia-ml.so.1`` (what pynvml loads there) cannot be loaded.

    Probing with ctypes first spares importing pynvml on machines without a driver, such as
    CPU-only CI runners where ``gpudoctor check`` runs most often.
    """
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return True
    return False


def real_session() -> tuple[NvmlSession | None, InitResult | None]:
    """A session on the real ``pynvml``, or (None, failed InitResult) if it won't import or
    the NVML library is not there."""
    if _nvml_library_missing():
        hint = _INIT_HINTS["LibraryNotFound"]
        return None, InitResult(
            NVML_LIBRARY_NOT_FOUND,
            "LibraryNotFound",
            f"NVML Shared Library Not Found: {hint}",
            backend="nvml",
        )
    lib, reason = load_pynvml()
    if lib is None:
        return None, InitResult(NVML_LIBRARY_NOT_FOUND, "ImportError", reason)
    return NvmlSession(lib, "nvml"), None
