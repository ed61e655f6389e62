"""Small block charts of a ``gpudoctor run`` timeline: GPU memory and temperature, job memory.

Pure functions of the report's samples (:class:`~gpudoctor.report.RunSample`), for the
Markdown report. The run is cut into equal slices of time, one character each; a slice shows
the highest value sampled in it (a short peak is never averaged away) as one of eight blocks.
Memory is charted from 0 to its limit (the GPU's total, the host's RAM), so a full block is a
full GPU; temperature from its lowest to its highest reading of the run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from gpudoctor.report import RunSample
from gpudoctor.units import format_size

BLOCKS = "▁▂▃▄▅▆▇█"
WIDTH = 48
"""At most this many slices (characters) per chart."""

Point = tuple[float, float | None]  # (seconds since the start, value or None: not read)


def sparkline(
    points: Sequence[Point], *, start: float, end: float, low: float, high: float, width: int
) -> str:
    """``points`` from ``start`` to ``end`` seconds as ``width`` blocks, ``low``..``high``.

    A value at or above ``high`` is the top block, at or below ``low`` the bottom one. A slice
    without a value repeats the one before it (samples thin out in a long run's older part);
    before the first value it is a space. ``high <= low`` (a flat series): middle blocks.
    """
    slices: list[float | None] = [None] * width
    span = end - start
    for t, value in points:
        if value is None:
            continue
        index = min(width - 1, int((t - start) / span * width)) if span > 0 else 0
        current = slices[max(0, index)]
        slices[max(0, index)] = value if current is None else max(current, value)
    chars = []
    previous = " "
    for value in slices:
        if value is not None:
            previous = BLOCKS[_level(value, low, high)]
        chars.append(previous)
    return "".join(chars)


def _level(value: float, low: float, high: float) -> int:
    if high <= low:
        return len(BLOCKS) // 2 - 1
    ratio = (value - low) / (high - low)
    return max(0, min(len(BLOCKS) - 1, round(ratio * (len(BLOCKS) - 1))))


def timeline_chart(samples: Sequence[RunSample], width: int = WIDTH) -> list[str]:
    """One labelled chart line per GPU for memory and for temperature, one for the job's RSS.

    Empty when there are no samples. Each line: label, chart, then the range of the values.
    """
    if not samples:
        return []
    start, end = samples[0].t, samples[-1].t
    columns = max(1, min(width, len(samples)))
    rows: list[tuple[str, str, str]] = []

    def chart(label: str, points: list[Point], low: float, high: float, legend: str) -> None:
        line = sparkline(points, start=start, end=end, low=low, high=high, width=columns)
        rows.append((label, line, legend))

    for index in sorted({g.index for s in samples for g in s.gpus}):
        readings = [(s.t, g) for s in samples for g in s.gpus if g.index == index]
        used = [(t, _num(g.memory_used_bytes)) for t, g in readings]
        totals = [g.memory_total_bytes for _t, g in readings if g.memory_total_bytes]
        values = [v for _t, v in used if v is not None]
        if values:
            limit = float(totals[-1]) if totals else max(values)
            legend = _range(values, format_size) + (f" of {format_size(limit)}" if totals else "")
            chart(f"GPU {index} memory", used, 0.0, limit, legend)
        temperatures = [(t, _num(g.temperature_c)) for t, g in readings]
        degrees = [v for _t, v in temperatures if v is not None]
        if degrees:
            legend = _range(degrees, lambda v: f"{v:.0f}") + " °C"
            chart(f"GPU {index} temp", temperatures, min(degrees), max(degrees), legend)
    rss = [(s.t, _num(s.tree_rss_bytes)) for s in samples]
    rss_values = [v for _t, v in rss if v is not None]
    if rss_values:
        hosts = [s.host_total_bytes for s in samples if s.host_total_bytes]
        limit = float(hosts[-1]) if hosts else max(rss_values)
        legend = _range(rss_values, format_size) + (f" of {format_size(limit)}" if hosts else "")
        chart("job RSS", rss, 0.0, limit, legend)
    label_width = max(len(label) for label, _line, _legend in rows) if rows else 0
    return [f"{label:<{label_width}}  {line}  {legend}" for label, line, legend in rows]


def _num(value: int | float | None) -> float | None:
    return None if value is None else float(value)


def _range(values: Sequence[float], show: Callable[[float], str]) -> str:
    low, high = min(values), max(values)
    return show(high) if low == high else f"{show(low)} to {show(high)}"
