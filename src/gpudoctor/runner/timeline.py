"""Facts from a run's samples: what the machine looked like across the run and at its end.

Rules test these like any other fact (``run_gpu_memory_growing``, ``run_tree_rss_limit_ratio``
…); each is declared once in :data:`FACTS`. "The last seconds" are the samples of the last
:data:`LAST_WINDOW_S` seconds before the job ended.

Steady growth (a leak) is judged on the run after its warm-up (the first
:data:`WARMUP_FRACTION` of the samples, when a job loads its model and the allocator fills
up): at least :data:`MIN_GROWTH_SAMPLES` samples, the memory used at the end higher than at
the start by at least :data:`MIN_GROWTH_FRACTION` of the GPU's total (and
:data:`MIN_GROWTH_BYTES`), almost every step flat or rising, and no single step holding half
of the growth (one big allocation is not a leak).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpudoctor.facts.spec import FactSpec

if TYPE_CHECKING:  # the registry imports FACTS: keep psutil and threads out of it
    from gpudoctor.report import RunSample
    from gpudoctor.runner.sampler import Timeline

LAST_WINDOW_S = 10.0
WARMUP_FRACTION = 0.2
MIN_GROWTH_SAMPLES = 5
MIN_GROWTH_FRACTION = 0.05
MIN_GROWTH_BYTES = 256 * 1024 * 1024
MIN_RISING_STEPS = 0.9
MAX_STEP_SHARE = 0.5
_THERMAL = frozenset({"hw_thermal_slowdown", "sw_thermal_slowdown"})
_SOURCE = "run timeline"

FACTS: tuple[FactSpec, ...] = (
    FactSpec("run_duration_s", "float", "s", _SOURCE, "How long the wrapped job ran."),
    FactSpec("run_samples", "int", "-", _SOURCE, "How many samples were taken while it ran."),
    FactSpec("run_gpu_sampled", "bool", "-", _SOURCE,
             "GPU telemetry could be read while the job ran (false: no GPU or no driver)."),
    FactSpec("run_gpu_memory_peak_bytes", "int|None", "bytes", _SOURCE,
             "The highest GPU memory used seen on one GPU during the run."),
    FactSpec("run_gpu_memory_total_bytes", "int|None", "bytes", _SOURCE,
             "The total memory of the GPU that reached run_gpu_memory_peak_bytes."),
    FactSpec("run_gpu_memory_peak_ratio", "float|None", "ratio", _SOURCE,
             "run_gpu_memory_peak_bytes / run_gpu_memory_total_bytes."),
    FactSpec("run_gpu_memory_growth_bytes", "int|None", "bytes", _SOURCE,
             "The largest rise of GPU memory used on one GPU after warm-up (end - start)."),
    FactSpec("run_gpu_memory_growing", "bool|None", "-", _SOURCE,
             "GPU memory used rose steadily across the run after warm-up (a leak)."),
    FactSpec("run_gpu_temperature_last_c", "int|None", "°C", _SOURCE,
             "The hottest GPU temperature in the last seconds of the run."),
    FactSpec("run_gpu_throttle_reasons_last", "list[str]", "-", _SOURCE,
             "Clock event (throttle) reasons active in the last seconds (hw_thermal_slowdown…)."),
    FactSpec("run_gpu_thermal_throttle_last", "bool|None", "-", _SOURCE,
             "A thermal slowdown (hardware or software) was active in the last seconds."),
    FactSpec("run_tree_rss_peak_bytes", "int|None", "bytes", _SOURCE,
             "The highest resident memory of the job's whole process tree."),
    FactSpec("run_tree_rss_last_bytes", "int|None", "bytes", _SOURCE,
             "The tree's resident memory at the last sample before it ended."),
    FactSpec("run_memory_limit_bytes", "int|None", "bytes", _SOURCE,
             "The memory the job could have: the host's RAM, or a lower cgroup limit."),
    FactSpec("run_tree_rss_limit_ratio", "float|None", "ratio", _SOURCE,
             "run_tree_rss_peak_bytes / run_memory_limit_bytes (near 1: the limit was hit)."),
    FactSpec("run_host_available_last_bytes", "int|None", "bytes", _SOURCE,
             "The host's available memory at the last sample before the job ended."),
    FactSpec("run_host_available_min_ratio", "float|None", "ratio", _SOURCE,
             "The lowest share of the host's RAM available in the last seconds."),
    FactSpec("run_swap_free_last_bytes", "int|None", "bytes", _SOURCE,
             "Free swap at the last sample before the job ended."),
)  # fmt: skip


def _ratio(part: int | None, whole: int | None) -> float | None:
    if part is None or not whole:
        return None
    return round(part / whole, 4)


def _last_window(samples: Sequence[RunSample], end_t: float) -> list[RunSample]:
    return [s for s in samples if s.t >= end_t - LAST_WINDOW_S] or list(samples[-1:])


def gpu_series(samples: Sequence[RunSample]) -> dict[int, list[tuple[int, int | None]]]:
    """Per GPU index: (memory used, total) of each sample that read it, oldest first."""
    series: dict[int, list[tuple[int, int | None]]] = {}
    for sample in samples:
        for gpu in sample.gpus:
            if gpu.memory_used_bytes is not None:
                series.setdefault(gpu.index, []).append(
                    (gpu.memory_used_bytes, gpu.memory_total_bytes)
                )
    return series


def steady_growth(used: Sequence[int], total: int | None) -> tuple[int, bool]:
    """(growth after warm-up in bytes, whether it is a steady rise); see the module doc."""
    start = int(len(used) * WARMUP_FRACTION)
    values = list(used[start:])
    if len(values) < 2:
        return 0, False
    growth = values[-1] - values[0]
    if len(values) < MIN_GROWTH_SAMPLES or growth <= 0:
        return growth, False
    steps = [b - a for a, b in itertools.pairwise(values)]
    rising = sum(1 for step in steps if step >= 0) / len(steps)
    threshold = max(MIN_GROWTH_BYTES, MIN_GROWTH_FRACTION * total if total else 0)
    steady = (
        growth >= threshold and rising >= MIN_RISING_STEPS and max(steps) <= MAX_STEP_SHARE * growth
    )
    return growth, steady


def timeline_facts(
    timeline: Timeline,
    *,
    duration_s: float,
    gpu_sampled: bool,
    cgroup_limit_bytes: int | None = None,
) -> dict[str, object]:
    """The facts of :data:`FACTS` from a finished run's timeline.

    ``cgroup_limit_bytes`` (from the snapshot taken after the death) lowers the memory limit
    the tree's peak is compared with.
    """
    samples = timeline.samples()
    facts: dict[str, object] = {
        "run_duration_s": round(duration_s, 3),
        "run_samples": timeline.count,
        "run_gpu_sampled": gpu_sampled,
    }
    facts.update(_gpu_memory_facts(timeline, samples))
    facts.update(_gpu_last_facts(samples, duration_s))
    facts.update(_host_facts(timeline, samples, duration_s, cgroup_limit_bytes))
    return facts


def _gpu_memory_facts(timeline: Timeline, samples: Sequence[RunSample]) -> dict[str, object]:
    best = None
    for peak in timeline.gpu_peaks.values():
        ratio = _ratio(peak.memory_used_bytes, peak.memory_total_bytes) or 0.0
        if best is None or ratio > best[0]:
            best = (ratio, peak)
    growth: int | None = None
    growing: bool | None = None
    for values in gpu_series(samples).values():
        total = next((t for _u, t in values if t), None)
        rise, steady = steady_growth([u for u, _t in values], total)
        growth = rise if growth is None else max(growth, rise)
        growing = steady or bool(growing)
    peak_gpu = best[1] if best else None
    return {
        "run_gpu_memory_peak_bytes": peak_gpu.memory_used_bytes if peak_gpu else None,
        "run_gpu_memory_total_bytes": peak_gpu.memory_total_bytes if peak_gpu else None,
        "run_gpu_memory_peak_ratio": best[0] if best and best[0] else None,
        "run_gpu_memory_growth_bytes": growth,
        "run_gpu_memory_growing": growing,
    }


def _gpu_last_facts(samples: Sequence[RunSample], end_t: float) -> dict[str, object]:
    window = _last_window(samples, end_t)
    temperatures = [g.temperature_c for s in window for g in s.gpus if g.temperature_c is not None]
    reasons = sorted({r for s in window for g in s.gpus for r in g.clock_event_reasons})
    read_any = any(s.gpus for s in window)
    return {
        "run_gpu_temperature_last_c": max(temperatures) if temperatures else None,
        "run_gpu_throttle_reasons_last": reasons,
        "run_gpu_thermal_throttle_last": bool(_THERMAL & set(reasons)) if read_any else None,
    }


def _host_facts(
    timeline: Timeline, samples: Sequence[RunSample], end_t: float, cgroup_limit: int | None
) -> dict[str, object]:
    alive = [s for s in samples if s.tree_rss_bytes is not None]
    last = alive[-1] if alive else (samples[-1] if samples else None)
    totals = [s.host_total_bytes for s in samples if s.host_total_bytes]
    limits = [v for v in (totals[-1] if totals else None, cgroup_limit) if v]
    limit = min(limits) if limits else None
    window = _last_window(alive or samples, end_t)
    available = [
        _ratio(s.host_available_bytes, s.host_total_bytes)
        for s in window
        if s.host_available_bytes is not None
    ]
    ratios = [r for r in available if r is not None]
    return {
        "run_tree_rss_peak_bytes": timeline.rss_peak_bytes,
        "run_tree_rss_last_bytes": last.tree_rss_bytes if last else None,
        "run_memory_limit_bytes": limit,
        "run_tree_rss_limit_ratio": _ratio(timeline.rss_peak_bytes, limit),
        "run_host_available_last_bytes": last.host_available_bytes if last else None,
        "run_host_available_min_ratio": min(ratios) if ratios else None,
        "run_swap_free_last_bytes": last.swap_free_bytes if last else None,
    }
