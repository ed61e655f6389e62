"""Facts from pasted text: an ``nvidia-smi`` table or ``collect_env`` output inside a log.

Logs pasted into issues often carry the machine's description. The scanner looks for these
lines in the same pass as the rules' patterns (keys start with ``facts/``), and
:func:`facts_from_hits` turns the captures into the same fact names a live snapshot gives, so
a rule such as "driver too old for the CUDA runtime" works on a log alone.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpudoctor.logs.scanner import CaptureType, PatternHits, PatternSpec

_V = CaptureType.VERSION
_S = CaptureType.STR

TEXT_FACT_PATTERNS: tuple[PatternSpec, ...] = (
    # nvidia-smi banner: "| NVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: 11.4 |"
    PatternSpec(
        "facts/nvidia_smi_banner",
        r"Driver Version:\s*(?P<driver_version>\d+\.\d+(?:\.\d+)?)\s+CUDA Version:\s*"
        r"(?P<driver_cuda_version>\d+\.\d+)",
        captures={"driver_version": _V, "driver_cuda_version": _V},
    ),
    # collect_env: "PyTorch version: 2.4.1+cu121"
    PatternSpec(
        "facts/torch_version",
        r"^\s*PyTorch version:\s*(?P<torch_version>\d+\.\d+[^\s]*)",
        captures={"torch_version": _S},
    ),
    # collect_env: "CUDA used to build PyTorch: 12.1"
    PatternSpec(
        "facts/torch_cuda",
        r"^\s*CUDA used to build PyTorch:\s*(?P<torch_cuda_version>\d+\.\d+)",
        captures={"torch_cuda_version": _V},
    ),
    # collect_env: "Nvidia driver version: 470.82.01"
    PatternSpec(
        "facts/collect_env_driver",
        r"^\s*Nvidia driver version:\s*(?P<driver_version>\d+\.\d+(?:\.\d+)?)",
        captures={"driver_version": _V},
    ),
)


def facts_from_hits(hits: Mapping[str, PatternHits]) -> dict[str, object]:
    """Facts captured by :data:`TEXT_FACT_PATTERNS`; the first occurrence of each wins."""
    facts: dict[str, object] = {}
    for spec in TEXT_FACT_PATTERNS:
        found = hits.get(spec.key)
        if not found:
            continue
        for event in found.events():
            for name, value in event.captures.items():
                facts.setdefault(name, str(value))
    return facts
