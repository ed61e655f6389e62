"""Running one job from start to end: child, signal forwarding and sampler together.

:func:`run_job` is the core call behind ``gpudoctor run``: it returns what happened (how
the job ended, its last lines, the timeline) and prints nothing of its own; the job's
output is copied through as it comes.
"""

from __future__ import annotations

import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import BinaryIO

from gpudoctor.runner.child import Child, ChildExit, KeptOutput
from gpudoctor.runner.sampler import GpuProbe, Sampler, Timeline, open_gpu_probe
from gpudoctor.runner.signals import forwarding


@dataclass(frozen=True)
class JobSettings:
    """How to run a job: ``interval`` between samples (0: no sampling), lines to keep."""

    interval: float = 1.0
    keep_lines: int = 5000
    terminal: bool | None = None


@dataclass(frozen=True)
class JobOutcome:
    """What a finished job left: its exit, its last output, the samples and their notes."""

    exit: ChildExit
    kept: KeptOutput
    timeline: Timeline
    gpu_sampled: bool
    notes: tuple[str, ...]
    interrupts: int
    sampler_cpu_seconds: float


def run_job(
    argv: Sequence[str],
    settings: JobSettings,
    *,
    log: BinaryIO | None = None,
    gpus: GpuProbe | None = None,
    env: Mapping[str, str] | None = None,
    out_fds: tuple[int, int] = (1, 2),
) -> JobOutcome:
    """Run ``argv`` to its end, forwarding signals and sampling the machine.

    ``gpus`` replaces the NVML probe (tests); without it the probe of this machine (or of
    the ``GPUDOCTOR_FAKE_NVML`` scenario) is opened, and when there is none the reason is
    one of the notes.

    Raises:
        OSError: the command cannot be started.
        UnknownScenarioError: ``GPUDOCTOR_FAKE_NVML`` names no bundled scenario.
    """
    notes: list[str] = []
    if gpus is None and settings.interval > 0:
        gpus, reason = open_gpu_probe(env)
        if gpus is None:
            notes.append(f"no GPU telemetry while the job runs: {reason}")
    kept = KeptOutput(settings.keep_lines)
    holder: list[Child] = []

    def send(number: int) -> None:
        if holder:
            holder[0].signal_group(number)

    with forwarding(send) as forwarder:
        child = Child(argv, kept, log=log, out_fds=out_fds, terminal=settings.terminal)
        holder.append(child)
        timeline = Timeline()
        sampler = Sampler(child.pid, settings.interval, gpus, timeline)
        if settings.interval > 0:
            sampler.start()
        try:
            ended = child.pump()
        finally:
            sampler.stop()
            if child.process.poll() is None:  # pump failed (our own output broke): end it
                child.signal_group(signal.SIGKILL)
                child.process.wait()
    if sampler.error:
        notes.append(f"sampling stopped early: {sampler.error}")
    return JobOutcome(
        exit=ended,
        kept=kept,
        timeline=timeline,
        gpu_sampled=gpus is not None and any(s.gpus for s in timeline.samples()),
        notes=tuple(notes),
        interrupts=forwarder.interrupts,
        sampler_cpu_seconds=sampler.cpu_seconds,
    )
