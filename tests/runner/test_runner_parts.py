"""The runner's parts on their own: kept output, exit status facts, timeline and its facts."""

from __future__ import annotations

import random
import signal

import pytest

from gpudoctor.report import GpuReading, RunSample
from gpudoctor.runner.child import TRIM_FROM, ChildExit, KeptOutput
from gpudoctor.runner.exit_status import exit_facts, parse_signal
from gpudoctor.runner.sampler import Timeline
from gpudoctor.runner.timeline import steady_growth, timeline_facts

GIB = 1 << 30


def test_kept_output_holds_the_last_lines_of_both_streams_without_mixing_them() -> None:
    kept = KeptOutput(keep_lines=3)
    kept.feed(1, b"one\ntw")
    kept.feed(2, b"err line\n")
    kept.feed(1, b"o\nthree\nfour\n")
    assert kept.text() == "two\nthree\nfour\n"
    assert kept.bytes_seen == 28


def test_kept_output_stays_bounded_in_bytes() -> None:
    kept = KeptOutput(keep_lines=1000, max_bytes=4096)
    for _ in range(2000):
        kept.feed(1, b"x" * 1000 + b"\n")
    assert kept.held_bytes <= 4096 + 1001
    assert kept.text().endswith("x" * 1000 + "\n")


def test_a_line_split_by_a_trim_keeps_its_start() -> None:
    """Block-buffered stdout flushes mid-line; when the chunk holding a line's start is
    dropped by a trim, the line is still whole once the rest of it comes."""
    kept = KeptOutput(keep_lines=5)
    kept.feed(1, b"step 99 ok\nRuntimeError: CUDA error: an illegal memory acc")
    for number in range(60_000):
        kept.feed(2, f"warning {number}: {'x' * 40}\n".encode())
    kept.feed(1, b"ess was encountered\n")
    assert "RuntimeError: CUDA error: an illegal memory access was encountered\n" in kept.text()


def test_kept_output_equals_the_last_lines_whatever_the_trims() -> None:
    """Random chunks of two streams, trimmed often: the kept text is always the last lines a
    plain reader of both streams would show."""
    rng = random.Random(5)
    for _ in range(300):
        keep = rng.randint(1, 6)
        kept = KeptOutput(keep_lines=keep, max_bytes=1 << 30)
        kept._trim_at = 32  # trim at almost every chunk
        partial: dict[int, bytes] = {}
        lines: list[bytes] = []
        for _ in range(rng.randint(1, 60)):
            stream = rng.choice((1, 2))
            data = bytes(rng.choice(b"ab\n") for _ in range(rng.randint(1, 12)))
            kept.feed(stream, data)
            *done, partial[stream] = (partial.get(stream, b"") + data).split(b"\n")
            lines += [line + b"\n" for line in done]
        lines += [partial[s] + b"\n" for s in sorted(partial) if partial[s]]
        expected = b"".join(lines).decode().splitlines(keepends=True)[-keep:]
        assert kept.text() == "".join(expected)


def test_a_line_without_its_end_is_kept_to_its_tail() -> None:
    kept = KeptOutput(keep_lines=10)
    for step in range(10_000):
        kept.feed(1, f"\r{step:>6}/10000".encode())
    assert kept.held_bytes <= 65536
    assert kept.text().endswith("  9999/10000\n")


@pytest.mark.parametrize(
    ("returncode", "code", "sig"), [(0, 0, None), (3, 3, None), (-9, 137, 9), (-11, 139, 11)]
)
def test_child_exit_reads_like_a_shell(returncode: int, code: int, sig: int | None) -> None:
    ended = ChildExit(returncode, 0.0, 1.0)
    assert (ended.exit_code, ended.signal) == (code, sig)


def test_exit_facts_read_codes_above_128_and_negative_ones_as_signals() -> None:
    assert exit_facts(code=137, reporter="user")["exit_signal_name"] == "SIGKILL"
    assert exit_facts(code=-11, reporter="user")["exit_code"] == 139
    assert "exit_signal" not in exit_facts(code=1, reporter="user")
    assert exit_facts(signal_number=6, reporter="user")["exit_code"] == 134


@pytest.mark.parametrize(("text", "number"), [("9", 9), ("KILL", 9), ("sigsegv", 11)])
def test_parse_signal(text: str, number: int) -> None:
    assert parse_signal(text) == number == int(signal.Signals(number))


@pytest.mark.parametrize("text", ["0", "99", "NOPE"])
def test_parse_signal_refuses_what_is_not_a_signal(text: str) -> None:
    with pytest.raises(ValueError):
        parse_signal(text)


def _gpu_sample(t: float, used_gib: float, reasons: tuple[str, ...] = ()) -> RunSample:
    gpu = GpuReading(0, int(used_gib * GIB), 80 * GIB, 90, 70, 300.0, reasons)
    return RunSample(t=t, gpus=(gpu,), tree_rss_bytes=GIB, host_available_bytes=60 * GIB,
                  host_total_bytes=64 * GIB, swap_free_bytes=0)  # fmt: skip


def test_timeline_thins_old_samples_but_keeps_the_recent_ones_and_the_peak() -> None:
    timeline = Timeline(capacity=32, recent=8)
    for step in range(1000):
        used = 79.0 if step == 10 else 10.0
        timeline.add(_gpu_sample(float(step), used))
    samples = timeline.samples()
    assert len(samples) <= 32
    assert [s.t for s in samples[-8:]] == [float(t) for t in range(992, 1000)]
    assert samples[0].t == 0.0
    assert timeline.gpu_peaks[0].memory_used_bytes == 79 * GIB
    assert timeline.count == 1000


def test_steady_growth_is_a_leak_a_warm_up_jump_is_not() -> None:
    rising = [int((4 + step * 0.5) * GIB) for step in range(20)]
    # the first 20 % (4 samples, up to 6 GiB) is warm-up
    assert steady_growth(rising, 80 * GIB) == (int(13.5 * GIB) - int(6 * GIB), True)
    warm_up_then_flat = [0, 20 * GIB, *([30 * GIB] * 18)]
    assert steady_growth(warm_up_then_flat, 80 * GIB)[1] is False
    one_jump = [*([10 * GIB] * 10), *([30 * GIB] * 10)]
    assert steady_growth(one_jump, 80 * GIB)[1] is False
    noise = [int((10 + (step % 2) * 0.5) * GIB) for step in range(20)]
    assert steady_growth(noise, 80 * GIB)[1] is False


def test_timeline_facts_name_the_last_seconds() -> None:
    timeline = Timeline()
    for step in range(30):
        reasons = ("hw_thermal_slowdown",) if step >= 25 else ()
        timeline.add(_gpu_sample(float(step), 10 + step, reasons))
    facts = timeline_facts(timeline, duration_s=30.0, gpu_sampled=True, cgroup_limit_bytes=2 * GIB)
    assert facts["run_gpu_memory_peak_bytes"] == 39 * GIB
    assert facts["run_gpu_memory_peak_ratio"] == round(39 / 80, 4)
    assert facts["run_gpu_memory_growing"] is True
    assert facts["run_gpu_thermal_throttle_last"] is True
    assert facts["run_gpu_throttle_reasons_last"] == ["hw_thermal_slowdown"]
    assert facts["run_memory_limit_bytes"] == 2 * GIB
    assert facts["run_tree_rss_limit_ratio"] == 0.5
    assert facts["run_samples"] == 30


def test_timeline_facts_without_gpus_say_nothing_about_them() -> None:
    timeline = Timeline()
    timeline.add(RunSample(t=0.0, tree_rss_bytes=GIB, host_total_bytes=4 * GIB))
    facts = timeline_facts(timeline, duration_s=1.0, gpu_sampled=False)
    assert facts["run_gpu_memory_peak_bytes"] is None
    assert facts["run_gpu_memory_growing"] is None
    assert facts["run_gpu_thermal_throttle_last"] is None
    assert facts["run_tree_rss_limit_ratio"] == 0.25


def _interleaved_feeds(seed: int, lines: int) -> list[tuple[int, bytes]]:
    """Both streams' lines cut at random places, the pieces of the two streams interleaved."""
    rng = random.Random(seed)
    queues: dict[int, list[bytes]] = {}
    for stream, name in ((1, "out"), (2, "err")):
        data = "".join(f"{name} line {n} {'x' * rng.randint(0, 40)}\n" for n in range(lines))
        cuts = sorted(rng.sample(range(1, len(data)), lines // 2))
        raw = data.encode()
        queues[stream] = [raw[a:b] for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True)]
    feeds = []
    while queues[1] or queues[2]:
        stream = rng.choice([s for s in (1, 2) if queues[s]])
        feeds.append((stream, queues[stream].pop(0)))
    return feeds


def _completed(feeds: list[tuple[int, bytes]]) -> list[str]:
    """Each line of either stream, in the order its end arrived."""
    pending = {1: b"", 2: b""}
    done: list[str] = []
    for stream, piece in feeds:
        *lines, pending[stream] = (pending[stream] + piece).split(b"\n")
        done += [line.decode() + "\n" for line in lines]
    return done


def test_kept_output_keeps_the_last_lines_whole_however_the_streams_interleave() -> None:
    feeds = _interleaved_feeds(seed=5, lines=40_000)
    kept = KeptOutput(keep_lines=40)
    for stream, piece in feeds:
        kept.feed(stream, piece)
    completed = _completed(feeds)
    assert len(completed) == 80_000
    assert kept.bytes_seen == sum(len(piece) for _stream, piece in feeds) > 2 * TRIM_FROM
    assert kept.held_bytes < 2 * TRIM_FROM  # trimmed by lines, well below max_bytes
    assert kept.text() == "".join(completed[-40:])


def test_kept_output_bounded_in_bytes_drops_a_line_that_lost_its_start() -> None:
    feeds = _interleaved_feeds(seed=8, lines=3000)
    kept = KeptOutput(keep_lines=100_000, max_bytes=2048)
    for stream, piece in feeds:
        kept.feed(stream, piece)
    completed = _completed(feeds)
    shown = kept.text().splitlines(keepends=True)
    assert shown[-1] == completed[-1]
    assert 10 < len(shown) < 100
    whole = set(completed)
    assert all(line in whole for line in shown)  # no line cut at its start
    positions = [completed.index(line) for line in shown]
    assert positions == sorted(positions)  # in the order their ends arrived
