"""The timeline chart of the Markdown report, from samples built here."""

from __future__ import annotations

from gpudoctor.render.chart import BLOCKS, sparkline, timeline_chart
from gpudoctor.render.markdown import render_markdown
from gpudoctor.report import GpuReading, Report, RunSample

GIB = 1 << 30


def test_the_peak_is_the_top_block_and_the_floor_the_bottom_one() -> None:
    points = [(float(t), 10.0) for t in range(10)]
    points[6] = (6.0, 80.0)
    line = sparkline(points, start=0.0, end=9.0, low=0.0, high=80.0, width=10)
    assert len(line) == 10
    assert line[6] == "█"
    assert line.count("█") == 1
    assert set(line) - {"█"} == {BLOCKS[1]}  # 10/80 of the way up: the second block


def test_a_slice_shows_the_highest_value_in_it() -> None:
    # 100 samples in 4 slices: the one-sample spike in the third slice survives.
    points = [(float(t), 100.0 if t == 60 else 0.0) for t in range(100)]
    line = sparkline(points, start=0.0, end=99.0, low=0.0, high=100.0, width=4)
    assert line == "▁▁█▁"


def test_missing_values_repeat_the_last_slice_and_nothing_before_the_first_is_blank() -> None:
    points = [(0.0, None), (5.0, 50.0), (9.0, 100.0)]
    line = sparkline(points, start=0.0, end=9.0, low=0.0, high=100.0, width=10)
    assert line[:5] == "     "
    assert line[5:9] == BLOCKS[4] * 4  # 50 % rounds to the fifth of eight blocks
    assert line[9] == "█"


def _samples() -> list[RunSample]:
    samples = []
    for step in range(20):
        rising = GpuReading(0, (4 + 4 * step) * GIB, 80 * GIB, 90, 60 + step, 300.0)
        flat = GpuReading(1, 20 * GIB, 80 * GIB, 90, 50, 300.0)
        samples.append(
            RunSample(
                t=float(step),
                gpus=(rising, flat),
                tree_rss_bytes=2 * GIB,
                host_total_bytes=64 * GIB,
            )
        )
    return samples


def test_one_chart_per_gpu_for_memory_and_temperature_and_one_for_the_job() -> None:
    lines = timeline_chart(_samples())
    assert [line.split("  ")[0].strip() for line in lines] == [
        "GPU 0 memory", "GPU 0 temp", "GPU 1 memory", "GPU 1 temp", "job RSS",
    ]  # fmt: skip
    gpu0_memory = lines[0].split("  ")[1]
    assert len(gpu0_memory) == 20
    assert gpu0_memory[-1] == "█"  # 80 of 80 GiB at the end
    assert gpu0_memory[0] == BLOCKS[0]
    assert list(gpu0_memory) == sorted(gpu0_memory)  # rising, never falling
    assert "4.00 GiB to 80.00 GiB of 80.00 GiB" in lines[0]
    assert lines[1].endswith("60 to 79 °C")
    assert lines[3].endswith("50 °C")  # flat: one value


def test_the_markdown_report_carries_the_chart_only_when_there_is_a_timeline() -> None:
    with_timeline = render_markdown(Report(inputs=(), diagnoses=(), timeline=tuple(_samples())))
    assert "### Timeline" in with_timeline
    assert "20 samples over 19 s" in with_timeline
    chart = with_timeline.split("```text\n")[1].split("```")[0]
    assert chart.splitlines() == timeline_chart(_samples())
    assert "### Timeline" not in render_markdown(Report(inputs=(), diagnoses=()))


def test_the_json_report_lists_the_samples() -> None:
    data = Report(inputs=(), diagnoses=(), timeline=tuple(_samples()[:2])).to_dict()
    timeline = data["timeline"]
    assert isinstance(timeline, list)
    assert timeline[1]["t"] == 1.0
    assert timeline[1]["gpus"][0]["memory_used_bytes"] == 8 * GIB
    assert "timeline" not in Report(inputs=(), diagnoses=()).to_dict()
