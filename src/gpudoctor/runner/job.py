"""Running one job from start to end: child, signal forwarding and sampler together.

:func:`run_job` is the core call behind ``gpudoctor run``: it returns what happened (how
the job ended, its last lines, the timeline) and prints nothing of its own; the job's
output is copied through as it comes.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO

from gpudoctor.runner.child import Child, ChildExit, KeptOutput
from gpudoctor.runner.signals import forwarding

if TYPE_CHECKING:
    from gpudoctor.runner.sampler import GpuProbe, Timeline


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
    one of the notes. The job is started first: the sampler's imports and the opening of
    NVML happen while it runs (the sampler thread opens NVML), so it never waits for them.

    Raises:
        OSError: the command cannot be started.
        UnknownScenarioError: ``GPUDOCTOR_FAKE_NVML`` names no bundled scenario.
    """
    if gpus is None and settings.interval > 0:
        check_scenario(env)  # a misspelt scenario stops the run before the job starts
    kept = KeptOutput(settings.keep_lines)
    holder: list[Child] = []

    def send(number: int) -> None:
        if holder:
            holder[0].signal_group(number)
            if number in (signal.SIGTERM, signal.SIGHUP):
                # A stopped job would only get it once continued (a shell's `kill` does this).
                holder[0].signal_group(signal.SIGCONT)

    with forwarding(send) as forwarder:
        child = Child(argv, kept, log=log, out_fds=out_fds, terminal=settings.terminal)
        holder.append(child)
        try:
            from gpudoctor.runner.sampler import Sampler, Timeline, open_gpu_probe

            timeline = Timeline()
            sampler = Sampler(
                child.pid,
                settings.interval,
                gpus,
                timeline,
                open_gpus=(lambda: open_gpu_probe(env)) if gpus is None else None,
            )
            if settings.interval > 0:
                sampler.start()
            try:
                ended = child.pump()
            finally:
                sampler.stop()
        finally:
            if child.process.poll() is None:  # something failed (our own output broke): end it
                child.signal_group(signal.SIGKILL)
                child.process.wait()
            child.terminal.close()  # pump gives the terminal back, unless it never ran
    notes: list[str] = []
    if sampler.gpu_missing:
        notes.append(f"no GPU telemetry while the job runs: {sampler.gpu_missing}")
    if sampler.error:
        notes.append(f"sampling stopped early: {sampler.error}")
    return JobOutcome(
        exit=ended,
        kept=kept,
        timeline=timeline,
        gpu_sampled=any(s.gpus for s in timeline.samples()),
        notes=tuple(notes),
        interrupts=forwarder.interrupts,
        sampler_cpu_seconds=sampler.cpu_seconds,
    )


def check_scenario(env: Mapping[str, str] | None) -> None:
    """Raise when ``GPUDOCTOR_FAKE_NVML`` (in ``env`` or the environment) names no scenario.

    Raises:
        UnknownScenarioError: the variable names no bundled scenario.
    """
    environ = os.environ if env is None else env
    if environ.get("GPUDOCTOR_FAKE_NVML", "").strip():  # snapshot.source.SCENARIO_ENV
        from gpudoctor.snapshot.source import machine_source

        machine_source(env)
