"""Metric series: the numbers a training loop prints on every progress line, as facts.

A progress line (``Epoch [3][100/500] lr: 1e-3, memory: 12071, loss: 0.43``), a logger line
(``iter: 1999 total_loss: 0.43 max_mem: 12071M``), Hugging Face Trainer's dict
(``{'loss': 0.43, 'grad_norm': 1.2, 'epoch': 1.5}``), a tqdm postfix (``loss=0.43, v_num=1``)
or Keras' ``- loss: 0.4300`` repeat one shape many times. Each metric is one pattern in the
scanner's single pass capturing the metric's name, its value and, when the line has one, the
step or epoch it belongs to.

What the scanner keeps decides what can be known. It keeps the first :data:`KEEP_FIRST` and the
last :data:`KEEP_LAST` events of a pattern and a count (a lower bound once the pattern matched
more than :data:`~gpudoctor.logs.scanner.SATURATION` lines; then only the ends of blocks are
searched, so a metric on every line costs no more than a rare one). So the facts are built from
the first points, the last points and the count:

* growth is read as "the last points still climb and the last is well above the first" — a
  steady climb up to the end, not a curve (the middle of a long run is not kept);
* the first NaN of a long run is not among the first or last points, so non-finite values
  have patterns of their own whose *first* event is the first NaN/Inf line, with its step;
* a NaN followed by finite values ("recovered": a skipped fp16 overflow step) is told apart by
  comparing the order of the last finite point with the last non-finite one.

A loop that prints bare numbers ("76980 2.6496", "1000,-1.24e5,300.2": a step and its loss, an
MD reporter's CSV rows) has no metric name. Rows made only of numbers are a series of their
own: the table is read as having gone non-finite when a row holding NaN/Inf follows finite rows
of the same width and the last row logged is non-finite too.

A memory series also comes from pasted ``nvidia-smi`` tables of a single GPU taken one after
another (the ``facts/smi_memory_row`` events of :mod:`gpudoctor.logs.structure.pasted`), and
``nvidia-smi dmon`` rows give the last power and temperature. Every fact is in :data:`FACTS`.

What says the job went on comes from here too (:func:`last_progress_lines`): a finite loss on a
metric line, or a progress bar drawn at its total (tqdm's ``100%|##########| 4000/4000``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise

from gpudoctor.facts.spec import FactSpec
from gpudoctor.logs.scanner import CaptureType, Event, PatternHits, PatternSpec
from gpudoctor.units import parse_size

BAR_DONE_KEY = "facts/series_bar_done"
"""The pattern of a progress bar drawn at 100 % with its count at the total."""

_F = CaptureType.FLOAT
_S = CaptureType.STR
_I = CaptureType.INT

GROWTH_MIN = 1.2
"""Last / first memory reading above which a steady climb counts as growth."""
GROWTH_MIN_POINTS = 3
"""Fewest readings a growth is read from."""
EXPLODED_MIN = 100.0
"""Last / first finite loss from which the loss has exploded."""

# The step (epoch, iteration) of a line, when it comes before the metric: "Epoch [3][100/500]",
# "iter: 1999", "iteration      100/  5000 |", "step 120:", "Epoch 3: 45%|".
_STEP = (
    r"(?:\b(?P<step_name>epoch|iter(?:ation)?|step|global_step)s?['\"]?\s*[:=#]?\s*\[?\s*"
    r"(?P<step>\d+(?:\.\d+)?).*?)?"
)
# (Unanchored: the leftmost match starts at the step when the line has one before the metric;
# a leading "^.*?" would cost the scanner's combined set a third more time per pattern.)
# ... or after it, as Hugging Face Trainer prints it: "{'loss': 0.43, ..., 'epoch': 1.5}".
_EPOCH_AFTER = r"(?:.*?['\"]epoch['\"]:\s*(?P<epoch_after>\d+(?:\.\d+)?))?"
_SEP = r"['\"]?\s*[:=]?\s*(?:tensor\()?"
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?"
_NONFINITE = r"[-+]?(?:nan|inf(?:inity)?)"
_LOSS = r"\b(?P<name>(?:\w+[ _])?loss)"
# A non-finite value also counts under the other names loops give the objective or a quantity
# computed from it: "cost = nan", Torch7's "err     nan", "ppl: inf". Only their NaN/Inf is
# read: their finite values are not on the loss's scale ("time cost: 3.2s", an error rate), and
# would mix other series into the loss's.
_OBJECTIVE = r"\b(?P<name>(?:\w+[ _])?(?:loss|cost|err|ppl|perplexity))"
_GRAD = r"\b(?P<name>grad(?:ient)?[ _]norm)"
_CAPTURES = {"step": _F, "epoch_after": _F, "name": _S, "value": _F}
# A row of bare numbers: "76980 2.6496", "1000,-12345.6,300.1", "  12 | 0.51 | nan"; a
# number may be a percentage and a cell a clock, as MD reporters print progress and time left
# ("45.8%\t4580000\t-22790726.0\t457.7\t209\t1:0:56:55").
_ROW_NUMBER = r"(?:[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?%?|\d+(?::\d+){1,3})"
_ROW_VALUE = rf"(?:{_ROW_NUMBER}|{_NONFINITE})"
_ROW_SEP = r"[\s,;|]+"
ROW_NONFINITE = re.compile(rf"(?:^|{_ROW_SEP}){_NONFINITE}(?:$|{_ROW_SEP})", re.IGNORECASE)

# The series patterns match every progress line, so they are kept plain (a metric name and a
# number): each costs the scan a few percent. Only the rare non-finite pattern reads the step.
PATTERNS: tuple[PatternSpec, ...] = (
    PatternSpec(
        "facts/series_loss",
        _LOSS + _SEP + rf"(?P<value>{_NUMBER}|{_NONFINITE})\b",
        ignore_case=True,
        captures=_CAPTURES,
    ),
    # The first event of this one is the first line where the loss was NaN/Inf.
    PatternSpec(
        "facts/series_loss_nonfinite",
        _STEP + _OBJECTIVE + _SEP + rf"(?P<value>{_NONFINITE})\b" + _EPOCH_AFTER,
        ignore_case=True,
        captures=_CAPTURES,
    ),
    PatternSpec(
        "facts/series_grad_norm",
        _GRAD + _SEP + rf"(?P<value>{_NUMBER}|{_NONFINITE})\b",
        ignore_case=True,
        captures=_CAPTURES,
    ),
    # Memory in use or at peak: mmcv "memory: 12071" (MB), detectron2 "max_mem: 12071M",
    # "mem 21.3 GiB", "memory_allocated 10.2GB", "GPU mem: 10.2G"; no unit reads as MB.
    PatternSpec(
        "facts/series_memory",
        r"\b(?P<name>(?:(?:max|peak|gpu|cuda)[ _]?)?mem(?:ory)?"
        r"(?:[ _](?:allocated|reserved|used|usage))?)"
        r"['\"]?\s*[:=]?\s*(?P<value>\d+(?:\.\d+)?)\s?(?P<unit>[KMGT]i?B\b|[KMGT]\b)?(?P<pct>\s*%)?",
        ignore_case=True,
        captures={"name": _S, "value": _F, "unit": _S, "pct": _S},
    ),
    # Rows of bare numbers, and those among them holding a NaN/Inf (its first event is the
    # first such row).
    PatternSpec(
        "facts/series_row",
        rf"^\s*{_ROW_NUMBER}(?:{_ROW_SEP}{_ROW_VALUE})+[\s,;|]*$",
        ignore_case=True,
    ),
    PatternSpec(
        "facts/series_row_nonfinite",
        rf"^\s*{_ROW_NUMBER}(?:{_ROW_SEP}{_ROW_VALUE})*{_ROW_SEP}{_NONFINITE}"
        rf"(?:{_ROW_SEP}{_ROW_VALUE})*[\s,;|]*$",
        ignore_case=True,
    ),
    # nvidia-smi dmon, default columns: "# gpu   pwr gtemp mtemp    sm   mem   enc   dec ..."
    PatternSpec(
        "facts/series_dmon_header",
        r"^#\s*gpu\s+pwr\s+gtemp\s+mtemp\s+sm\s+mem\b",
    ),
    PatternSpec(
        "facts/series_dmon_row",
        r"^\s*(?P<gpu>\d+)\s+(?P<pwr>\d+|-)\s+(?P<gtemp>\d+|-)\s+(?P<mtemp>\d+|-)\s+"
        r"(?P<sm>\d+|-)\s+(?P<mem>\d+|-)(?:\s+(?:\d+|-)){2,6}\s*$",
        captures={"gpu": _I, "pwr": _I, "gtemp": _I, "sm": _I, "mem": _I},
    ),
    # A progress bar that reached its total, as tqdm draws it ("Map: 100%|##########| 1000/1000
    # [00:01<00:00]") or with a custom bar_format ("COMPLETE: 100%| 150/150"): a step of the job
    # finished. Read as progress, like a finite loss.
    PatternSpec(
        BAR_DONE_KEY,
        r"\b100%\s*\|(?:[^|\n]*\|)?\s*(?P<done>\d+)/(?P<total>\d+)\b",
        captures={"done": _I, "total": _I},
    ),
)

_SRC = "log structure (metric series)"
FACTS: tuple[FactSpec, ...] = (
    FactSpec("memory_series_points", "int", "-", _SRC, "Lines that logged GPU memory."),
    FactSpec("memory_series_first", "int", "bytes", _SRC, "First GPU memory reading logged."),
    FactSpec("memory_series_last", "int", "bytes", _SRC, "Last GPU memory reading logged."),
    FactSpec(
        "memory_series_growth",
        "float",
        "ratio",
        _SRC,
        "Last / first memory reading, only when memory grew steadily: at least 3 readings, the "
        "last ones never falling and still rising, and the last at least 1.2x the first.",
    ),
    FactSpec(
        "memory_series_source",
        "str",
        "-",
        _SRC,
        "Metric name or 'nvidia-smi' the series came from.",
    ),
    FactSpec("loss_series_first", "float", "-", _SRC, "First finite loss logged."),
    FactSpec("loss_last_finite", "float", "-", _SRC, "Last finite loss logged."),
    FactSpec("loss_growth", "float", "ratio", _SRC, "Last / first finite loss (both positive)."),
    FactSpec(
        "loss_exploded", "bool", "-", _SRC, "The last finite loss is at least 100x the first."
    ),
    FactSpec(
        "loss_nonfinite",
        "bool",
        "-",
        _SRC,
        "A NaN or Inf loss (or cost, err, ppl, perplexity) was logged on a metric line.",
    ),
    FactSpec(
        "loss_first_nonfinite_step",
        "float",
        "step",
        _SRC,
        "Step or epoch of the first line where the loss was NaN/Inf (when the line gives one).",
    ),
    FactSpec("loss_first_nonfinite_line", "str", "-", _SRC, "The first line with a NaN/Inf loss."),
    FactSpec(
        "loss_recovered",
        "bool",
        "-",
        _SRC,
        "A NaN/Inf loss was logged, yet the last loss logged is finite, not zero, and comes "
        "after it (a skipped overflow step, not a divergence that ended the run).",
    ),
    FactSpec(
        "grad_norm_nonfinite", "bool", "-", _SRC, "The last gradient norm logged is NaN or Inf."
    ),
    FactSpec("grad_norm_last", "float", "-", _SRC, "Last finite gradient norm logged."),
    FactSpec(
        "table_nonfinite",
        "bool",
        "-",
        _SRC,
        "Rows of bare numbers went NaN/Inf: a row holding one follows at least 2 finite rows "
        "of the same width, and the last row logged is non-finite too.",
    ),
    FactSpec(
        "table_first_nonfinite_line", "str", "-", _SRC, "The first row of numbers with NaN/Inf."
    ),
    FactSpec(
        "table_exploded",
        "bool",
        "-",
        _SRC,
        "A column of a table of bare numbers jumped, from one row to the next, to at least "
        "1e10 and a million times its value before, and is still that large in the last row.",
    ),
    FactSpec("table_exploded_line", "str", "-", _SRC, "The first row of the jump."),
    FactSpec("table_exploded_from", "float", "-", _SRC, "The column's value before the jump."),
    FactSpec("table_exploded_to", "float", "-", _SRC, "The column's value in the jump's row."),
    FactSpec("dmon_power_last_w", "int", "W", _SRC, "Last power draw in nvidia-smi dmon rows."),
    FactSpec("dmon_gtemp_last_c", "int", "°C", _SRC, "Last GPU temperature in dmon rows."),
    FactSpec(
        "series_last_values",
        "list[str]",
        "-",
        _SRC,
        "The last reading of each series, as 'name=value' (loss, grad_norm, memory, dmon).",
    ),
)


@dataclass(frozen=True)
class Point:
    """One reading of a series."""

    name: str
    value: float
    step: float | None
    event: Event


def fact_names() -> frozenset[str]:
    """Every fact name the series reader can produce."""
    return frozenset(spec.name for spec in FACTS)


def _events(hits: Mapping[str, PatternHits], key: str) -> list[Event]:
    found = hits.get(key)
    return found.events() if found else []


def _count(hits: Mapping[str, PatternHits], key: str) -> int:
    found = hits.get(key)
    return found.count if found else 0


def _points(events: Sequence[Event]) -> list[Point]:
    points = []
    for event in events:
        value = event.captures.get("value")
        if not isinstance(value, float):
            continue
        step = event.captures.get("step", event.captures.get("epoch_after"))
        name = str(event.captures.get("name", "")).lower().replace(" ", "_")
        points.append(Point(name, value, step if isinstance(step, float) else None, event))
    return points


def _training(points: list[Point]) -> list[Point]:
    """The training series: evaluation losses (val_loss, eval_loss) left out when others exist."""
    train = [p for p in points if not p.name.startswith(("val", "eval", "test"))]
    return train or points


def last_progress_lines(hits: Mapping[str, PatternHits]) -> dict[int, tuple[int, int]]:
    """For each input, where it last logged progress (a finite loss on a metric line, a
    progress bar that reached its total): the engine reads a warning before it, with nothing
    failing after it, as one the job went on from."""
    loss = _points(_events(hits, "facts/series_loss"))
    progress = [point.event for point in loss if math.isfinite(point.value)]
    for bar in _events(hits, BAR_DONE_KEY):
        total = bar.captures.get("total")
        if total and bar.captures.get("done") == total:
            progress.append(bar)
    last: dict[int, tuple[int, int]] = {}
    for event in progress:
        order = event.order
        last[order[0]] = max(last.get(order[0], order), order)
    return last


def steady_growth(values: Sequence[float]) -> float | None:
    """Last / first of ``values`` when they grow steadily (see ``memory_series_growth``)."""
    if len(values) < GROWTH_MIN_POINTS or values[0] <= 0:
        return None
    tail = values[-5:]
    if any(b < a for a, b in pairwise(tail)) or tail[-1] <= tail[0]:
        return None
    ratio = values[-1] / values[0]
    return round(ratio, 3) if ratio >= GROWTH_MIN else None


def _memory_readings(hits: Mapping[str, PatternHits]) -> tuple[str, list[int], int]:
    """(source, readings in bytes, count) from logged metrics, else from single-GPU smi tables."""
    readings: list[int] = []
    name = ""
    for event in _events(hits, "facts/series_memory"):
        value, unit = event.captures.get("value"), event.captures.get("unit") or "MB"
        if "pct" in event.captures or not isinstance(value, float):
            continue
        size = parse_size(f"{value} {unit}")
        if size is not None:
            readings.append(size)
            name = str(event.captures.get("name", "memory"))
    count = _count(hits, "facts/series_memory")
    if len(readings) >= 2:  # one line mentioning memory is not a series
        return name.lower().replace(" ", "_"), readings, count
    gpus = {e.captures.get("index") for e in _events(hits, "facts/smi_gpu_row")}
    if len(gpus) > 1:
        return "", [], 0  # rows of several GPUs interleave: no one series
    used = [e.captures.get("used") for e in _events(hits, "facts/smi_memory_row")]
    smi = [u for u in used if isinstance(u, int)]
    return "nvidia-smi", smi, _count(hits, "facts/smi_memory_row")


def _memory_facts(hits: Mapping[str, PatternHits]) -> dict[str, object]:
    source, readings, count = _memory_readings(hits)
    if not readings:
        return {}
    facts: dict[str, object] = {
        "memory_series_points": count,
        "memory_series_first": readings[0],
        "memory_series_last": readings[-1],
        "memory_series_source": source,
    }
    growth = steady_growth([float(r) for r in readings])
    if growth is not None:
        facts["memory_series_growth"] = growth
    return facts


def _loss_facts(hits: Mapping[str, PatternHits]) -> dict[str, object]:
    facts: dict[str, object] = {}
    points = _training(_points(_events(hits, "facts/series_loss")))
    finite = [p for p in points if math.isfinite(p.value)]
    if finite:
        first, last = finite[0].value, finite[-1].value
        facts["loss_series_first"] = first
        facts["loss_last_finite"] = last
        if first > 0 and last > 0:
            facts["loss_growth"] = round(last / first, 3)
            facts["loss_exploded"] = last / first >= EXPLODED_MIN
    nonfinite = _points(_events(hits, "facts/series_loss_nonfinite"))
    if not points and not nonfinite:
        return facts
    facts["loss_nonfinite"] = bool(nonfinite)
    if nonfinite:
        first_bad = nonfinite[0]
        if first_bad.step is not None:
            facts["loss_first_nonfinite_step"] = first_bad.step
        facts["loss_first_nonfinite_line"] = first_bad.event.text
        # A loss of exactly zero after the NaN is the NaN averaged away (an epoch summary of
        # "LOSS: 0.000000"), not a run that went on learning.
        facts["loss_recovered"] = bool(
            finite and finite[-1].event.order > nonfinite[-1].event.order and finite[-1].value != 0
        )
    return facts


def _grad_facts(hits: Mapping[str, PatternHits]) -> dict[str, object]:
    points = _points(_events(hits, "facts/series_grad_norm"))
    if not points:
        return {}
    facts: dict[str, object] = {"grad_norm_nonfinite": not math.isfinite(points[-1].value)}
    finite = [p.value for p in points if math.isfinite(p.value)]
    if finite:
        facts["grad_norm_last"] = finite[-1]
    return facts


TABLE_MIN_FINITE_ROWS = 2
"""Finite rows of the same width that must come before a non-finite one."""


def _row_width(text: str) -> int:
    return len([v for v in re.split(_ROW_SEP, text.strip()) if v])


def _table_facts(hits: Mapping[str, PatternHits]) -> dict[str, object]:
    nonfinite = _events(hits, "facts/series_row_nonfinite")
    rows = _events(hits, "facts/series_row")
    if not nonfinite or not rows:
        return {}
    first_bad = nonfinite[0]
    width = _row_width(first_bad.text)
    finite_before = [
        row
        for row in rows
        if row.order < first_bad.order
        and not ROW_NONFINITE.search(row.text.strip())
        and _row_width(row.text) == width
    ]
    went_bad = len(finite_before) >= TABLE_MIN_FINITE_ROWS and bool(
        ROW_NONFINITE.search(rows[-1].text.strip())
    )
    facts: dict[str, object] = {"table_nonfinite": went_bad}
    if went_bad:
        facts["table_first_nonfinite_line"] = first_bad.text
    return facts


EXPLODED_TABLE_MIN = 1e10
"""Magnitude a table's column must reach to have exploded."""
EXPLODED_TABLE_JUMP = 1e6
"""Factor by which it must grow from one row to the next."""


def _row_values(text: str) -> list[float | None]:
    """The cells of a row as numbers (a percentage as its number; a clock as ``None``)."""
    values: list[float | None] = []
    for cell in re.split(_ROW_SEP, text.strip()):
        if not cell:
            continue
        try:
            values.append(float(cell.rstrip("%")))
        except ValueError:
            values.append(None)
    return values


def _jump(before: list[float | None], after: list[float | None]) -> int | None:
    """The first column that exploded from row ``before`` to row ``after``."""
    for column, (old, new) in enumerate(zip(before, after, strict=True)):
        if old is None or new is None or not (math.isfinite(old) and math.isfinite(new)):
            continue
        if (
            old != 0
            and abs(new) >= EXPLODED_TABLE_MIN
            and abs(new) >= EXPLODED_TABLE_JUMP * abs(old)
        ):
            return column
    return None


def _exploded_table_facts(hits: Mapping[str, PatternHits]) -> dict[str, object]:
    """A table whose column jumped by orders of magnitude between two adjacent rows (an MD
    energy of -2.3e7 becoming 2.6e26) and stayed there: divergence before any NaN."""
    rows = _events(hits, "facts/series_row")
    parsed = [(row, _row_values(row.text)) for row in rows]
    for (before, old), (after, new) in pairwise(parsed):
        adjacent = after.order[0] == before.order[0] and after.line == before.line + 1
        if not adjacent or len(old) != len(new):
            continue
        column = _jump(old, new)
        if column is None:
            continue
        last = parsed[-1][1]
        still = len(last) == len(new) and abs(last[column] or 0.0) >= EXPLODED_TABLE_MIN
        if not still:
            return {}
        return {
            "table_exploded": True,
            "table_exploded_line": after.text,
            "table_exploded_from": old[column],
            "table_exploded_to": new[column],
        }
    return {}


def _dmon_facts(hits: Mapping[str, PatternHits]) -> dict[str, object]:
    if not _count(hits, "facts/series_dmon_header"):
        return {}
    rows = _events(hits, "facts/series_dmon_row")
    if not rows:
        return {}
    last = rows[-1].captures
    facts: dict[str, object] = {}
    if isinstance(last.get("pwr"), int):
        facts["dmon_power_last_w"] = last["pwr"]
    if isinstance(last.get("gtemp"), int):
        facts["dmon_gtemp_last_c"] = last["gtemp"]
    return facts


def _fmt(value: float) -> str:
    return f"{value:g}"


def _last_values(hits: Mapping[str, PatternHits], facts: Mapping[str, object]) -> list[str]:
    values = []
    for key in ("facts/series_loss", "facts/series_grad_norm"):
        points = _points(_events(hits, key))
        if key == "facts/series_loss":
            points = _training(points)
        if points:
            values.append(f"{points[-1].name}={_fmt(points[-1].value)}")
    source, readings, _ = _memory_readings(hits)
    if readings:
        values.append(f"{source or 'memory'}={readings[-1] / (1 << 20):.0f}MiB")
    for name in ("dmon_power_last_w", "dmon_gtemp_last_c"):
        if name in facts:
            values.append(f"{name}={facts[name]}")
    return values


def facts(
    hits: Mapping[str, PatternHits], input_lines: Sequence[int | None] = ()
) -> dict[str, object]:
    """Facts read from the metric series in ``hits`` (see :data:`FACTS`)."""
    found: dict[str, object] = {}
    parts = (
        _memory_facts,
        _loss_facts,
        _grad_facts,
        _table_facts,
        _exploded_table_facts,
        _dmon_facts,
    )
    for part in parts:
        found.update(part(hits))
    last_values = _last_values(hits, found)
    if last_values:
        found["series_last_values"] = last_values
    return found
