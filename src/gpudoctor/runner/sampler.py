"""Sampling the machine while a job runs: GPU telemetry, the job's memory, the host's memory.

A :class:`Sampler` thread reads, every ``interval`` seconds, each GPU through the same NVML
access as ``gpudoctor snapshot`` (:func:`~gpudoctor.snapshot.gpus.read_telemetry` over the
:class:`~gpudoctor.snapshot.source.MachineSource` ``GPUDOCTOR_FAKE_NVML`` may replace), the
resident memory of the job's whole process tree (:mod:`~gpudoctor.runner.proctree`) and the
host's available memory and free swap (psutil). Samples go to a :class:`Timeline`, whose
memory is bounded however long the run: once it is full, every other sample of its older
part is dropped, while running peaks are kept exactly. Without NVML the sampler still
records memory, and says why once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Protocol

import psutil

from gpudoctor.report import GpuReading, RunSample
from gpudoctor.runner.proctree import process_tree_rss
from gpudoctor.snapshot.model import NVML_OK

DEFAULT_CAPACITY = 512
RECENT = 64
"""The newest samples, never downsampled: the last seconds before a death stay exact."""


class GpuProbe(Protocol):
    """Reads every GPU once."""

    def read(self) -> tuple[GpuReading, ...]:
        """The current reading of each GPU."""
        ...


class NvmlProbe:
    """Reads the GPUs through an NVML session (real, or a scenario's fake)."""

    def __init__(self, session: object, count: int) -> None:
        """A probe over ``count`` GPUs of an initialised session."""
        self._session = session
        self._count = count

    def read(self) -> tuple[GpuReading, ...]:
        """Every GPU's telemetry; a failing value is ``None``, a lost GPU all ``None``."""
        from gpudoctor.snapshot.gpus import read_telemetry

        readings = []
        for index in range(self._count):
            info = read_telemetry(self._session, index)  # type: ignore[arg-type]
            readings.append(
                GpuReading(
                    index=index,
                    memory_used_bytes=info.memory_used_bytes,
                    memory_total_bytes=info.memory_total_bytes,
                    utilization_pct=info.utilization_gpu_pct,
                    temperature_c=info.temperature_c,
                    power_w=info.power_draw_w,
                    clock_event_reasons=info.clock_event_reason_names or (),
                )
            )
        return tuple(readings)


def open_gpu_probe(env: Mapping[str, str] | None = None) -> tuple[GpuProbe | None, str | None]:
    """A probe on this machine's GPUs (or the scenario ``env`` names), else (None, why).

    Raises:
        UnknownScenarioError: ``GPUDOCTOR_FAKE_NVML`` names no bundled scenario.
    """
    from gpudoctor.snapshot.source import machine_source

    session, failure = machine_source(env).nvml()
    if session is None:
        return None, (failure.message if failure is not None else None) or "NVML unavailable"
    init = session.init()
    if init.status != NVML_OK:
        return None, init.message or init.error or init.status
    count, reason = session.call("nvmlDeviceGetCount")
    if reason is not None or not isinstance(count, int):
        return None, f"cannot count the GPUs: {reason}"
    if count == 0:
        return None, "NVML reports no GPU"
    return NvmlProbe(session, count), None


def host_memory() -> tuple[int | None, int | None, int | None]:
    """(available, total, free swap) of the host in bytes."""
    try:
        memory = psutil.virtual_memory()
        swap = psutil.swap_memory()
    except (OSError, RuntimeError):
        return None, None, None
    return int(memory.available), int(memory.total), int(swap.free)


class Timeline:
    """Samples in time order, bounded: the older part thins out as the run goes on.

    The peaks of GPU memory (per GPU) and of the tree's RSS are kept exactly, whatever is
    dropped.
    """

    def __init__(self, capacity: int = DEFAULT_CAPACITY, recent: int = RECENT) -> None:
        """Hold at most ``capacity`` samples, the newest ``recent`` never thinned."""
        if capacity < 2 * recent:
            raise ValueError("capacity must be at least twice recent")
        self.capacity = capacity
        self.recent = recent
        self._samples: list[RunSample] = []
        self.count = 0
        self.gpu_peaks: dict[int, GpuReading] = {}
        self.rss_peak_bytes: int | None = None
        self._lock = threading.Lock()

    def add(self, sample: RunSample) -> None:
        """Record a sample (thread-safe)."""
        with self._lock:
            self.count += 1
            self._samples.append(sample)
            for gpu in sample.gpus:
                peak = self.gpu_peaks.get(gpu.index)
                used = gpu.memory_used_bytes
                if used is not None and (peak is None or used > (peak.memory_used_bytes or 0)):
                    self.gpu_peaks[gpu.index] = gpu
            rss = sample.tree_rss_bytes
            if rss is not None and (self.rss_peak_bytes is None or rss > self.rss_peak_bytes):
                self.rss_peak_bytes = rss
            if len(self._samples) > self.capacity:
                old = self._samples[: -self.recent]
                self._samples = [*old[::2], *self._samples[-self.recent :]]

    def samples(self) -> list[RunSample]:
        """A copy of the samples kept, oldest first."""
        with self._lock:
            return list(self._samples)


class Sampler(threading.Thread):
    """A daemon thread that samples every ``interval`` seconds until :meth:`stop`."""

    def __init__(
        self,
        pid: int,
        interval: float,
        gpus: GpuProbe | None,
        timeline: Timeline | None = None,
        tree_rss: Callable[[int], int | None] = process_tree_rss,
        host: Callable[[], tuple[int | None, int | None, int | None]] = host_memory,
        clock: Callable[[], float] = time.monotonic,
        open_gpus: Callable[[], tuple[GpuProbe | None, str | None]] | None = None,
    ) -> None:
        """Sample the tree of ``pid``, the host and ``gpus`` (``None``: no GPU readings).

        ``open_gpus`` (when ``gpus`` is ``None``) opens the probe in the thread, before the
        first sample: the job does not wait for NVML to start. When it gives no probe, its
        reason is :attr:`gpu_missing`.
        """
        super().__init__(name="gpudoctor-sampler", daemon=True)
        self.pid = pid
        self.interval = interval
        self.gpus = gpus
        self.timeline = timeline if timeline is not None else Timeline()
        self._tree_rss = tree_rss
        self._host = host
        self._clock = clock
        self._start = clock()
        self._stopped = threading.Event()
        self._open_gpus = open_gpus
        self.cpu_seconds = 0.0
        self.error: str | None = None
        self.gpu_missing: str | None = None

    def sample_once(self) -> RunSample:
        """Take one sample now and record it."""
        gpus = self.gpus.read() if self.gpus is not None else ()
        available, total, swap_free = self._host()
        sample = RunSample(
            t=round(self._clock() - self._start, 3),
            gpus=gpus,
            tree_rss_bytes=self._tree_rss(self.pid),
            host_available_bytes=available,
            host_total_bytes=total,
            swap_free_bytes=swap_free,
        )
        self.timeline.add(sample)
        return sample

    def run(self) -> None:
        """Sample until stopped; an unexpected error ends the sampling, never the job."""
        if self._open_gpus is not None and self.gpus is None:
            began = time.thread_time()
            try:
                self.gpus, self.gpu_missing = self._open_gpus()
            except Exception as exc:  # no telemetry is no reason to disturb the job
                self.gpu_missing = f"{type(exc).__name__}: {exc}"
            self.cpu_seconds += time.thread_time() - began
        while True:
            began = time.thread_time()
            try:
                self.sample_once()
            except Exception as exc:  # the job matters more than its telemetry
                self.error = f"{type(exc).__name__}: {exc}"
                return
            finally:
                self.cpu_seconds += time.thread_time() - began
            if self._stopped.wait(self.interval):
                return

    def stop(self) -> None:
        """Ask the thread to end and wait for it (at most one sample's time)."""
        self._stopped.set()
        if self.is_alive():
            self.join(timeout=5)
