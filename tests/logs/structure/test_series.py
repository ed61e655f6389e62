"""Metric series facts read in the scanner's pass (gpudoctor.logs.structure.series)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpudoctor.logs.structure import series
from gpudoctor.pipeline import LogInput, make_scanner, scan_logs
from gpudoctor.rulebook.book import load_rulebook

FIXTURES = Path(__file__).parents[2] / "fixtures" / "series"


def series_facts(text: str) -> dict[str, object]:
    scan = scan_logs([LogInput.from_text("log", text)], make_scanner(load_rulebook([])))
    return series.facts(scan.hits)


def test_growth_first_nan_and_recovery_from_mmcv_lines() -> None:
    facts = series_facts((FIXTURES / "mmdet-growth-nan-recovered.log").read_text())
    assert facts["memory_series_first"] == 4012 << 20
    assert facts["memory_series_last"] == 9800 << 20
    assert facts["memory_series_growth"] == pytest.approx(9800 / 4012, abs=1e-3)
    assert facts["loss_nonfinite"] is True
    assert facts["loss_first_nonfinite_step"] == 2.0
    assert facts["loss_recovered"] is True
    assert facts["loss_last_finite"] == 0.9
    assert facts["grad_norm_nonfinite"] is False
    assert "memory=9800MiB" in facts["series_last_values"]  # type: ignore[operator]


def test_flat_memory_is_no_growth() -> None:
    lines = "".join(f"iter: {i * 20}  total_loss: 0.5  max_mem: 12071M\n" for i in range(30))
    facts = series_facts(lines)
    assert facts["memory_series_points"] == 30
    assert "memory_series_growth" not in facts


def test_growth_that_stopped_is_not_steady() -> None:
    values = [1000, 2000, 3000, 3000, 2900, 2950]
    assert series.steady_growth([float(v) for v in values]) is None
    assert series.steady_growth([1000.0, 1100.0, 1300.0, 1500.0]) == pytest.approx(1.5)
    assert series.steady_growth([1000.0, 1100.0]) is None


def test_nan_that_stays_is_not_recovered_and_first_step_is_kept() -> None:
    lines = [
        f"{{'loss': {0.5 - i / 100:.3f}, 'grad_norm': 1.0, 'epoch': {i / 10}}}\n" for i in range(40)
    ]
    lines += [f"{{'loss': nan, 'grad_norm': nan, 'epoch': {4 + i / 10}}}\n" for i in range(40)]
    facts = series_facts("".join(lines))
    assert facts["loss_first_nonfinite_step"] == 4.0
    assert facts["loss_recovered"] is False
    assert facts["grad_norm_nonfinite"] is True


def test_exploding_loss() -> None:
    lines = "".join(f"step {i}: loss={0.5 * 10 ** (i / 2):.4g}\n" for i in range(12))
    facts = series_facts(lines)
    assert facts["loss_exploded"] is True


def test_loss_scale_and_single_memory_line_are_not_series() -> None:
    facts = series_facts("loss scale: 65536.0\nTotal Activation Memory: 1073741824\n")
    assert facts == {}


def test_every_fact_is_declared() -> None:
    facts = series_facts((FIXTURES / "mmdet-growth-nan-recovered.log").read_text())
    assert set(facts) <= series.fact_names()


def test_a_table_of_bare_numbers_that_turns_nan_and_stays_so() -> None:
    facts = series_facts("100 0.91\n110 0.88\n120 0.93\nSaving the model\n130 nan\n140 nan\n")
    assert facts["table_nonfinite"] is True
    assert facts["table_first_nonfinite_line"] == "130 nan"


def test_a_table_that_recovers_or_never_ran_finite_has_not_diverged() -> None:
    recovered = series_facts("100 0.91\n110 0.88\n120 inf\n130 0.87\n")
    assert recovered["table_nonfinite"] is False
    assert series_facts("0 nan\n1 nan\n")["table_nonfinite"] is False  # nothing finite before


def test_rows_of_another_width_do_not_count_as_the_finite_ones() -> None:
    facts = series_facts("1 2 3\n4 5 6\n7 nan\n8 nan\n")
    assert facts["table_nonfinite"] is False


def test_csv_rows_and_infinities() -> None:
    facts = series_facts("1000,-512.3,299.1\n2000,-510.9,300.4\n3000,-inf,1.2e+31\n")
    assert facts["table_nonfinite"] is True


def test_a_nan_objective_under_another_name_and_a_zero_loss_after_it() -> None:
    torch7 = "err\t0.412\nerr\t0.377\nerr\tnan\nerr\tnan\n[EPOCH : 3 LOSS: 0.000000 TOTAL: 9182]\n"
    facts = series_facts(torch7)
    assert facts["loss_nonfinite"] is True
    assert facts["loss_first_nonfinite_line"] == "err\tnan"
    assert facts["loss_recovered"] is False  # a loss of exactly zero after it is the NaN averaged
    survived = series_facts("loss: 2.41\ncost = nan\nloss: 2.37\n")
    assert survived["loss_recovered"] is True
    assert "loss_nonfinite" not in series_facts("train err 0.31 valid err 0.35\n")


MD_ROWS = (
    '#"Progress (%)"\t"Step"\t"Potential Energy (kJ/mole)"\t"Temperature (K)"\t"Speed (ns/day)"\n'
    "31.0%\t310000\t-51234.5\t300.2\t88\t3:12:40\n"
    "31.1%\t311000\t-51190.7\t299.8\t88\t3:12:01\n"
    "31.2%\t312000\t-51302.2\t301.1\t87\t3:11:25\n"
    "31.3%\t313000\t7.25e+23\t4.1e+15\t60\t4:40:02\n"
    "31.4%\t314000\t2.9e+24\t4.0e+15\t41\t6:51:33\n"
)


def test_a_reporter_table_whose_energy_leaps_and_stays_has_exploded() -> None:
    facts = series_facts(MD_ROWS)
    assert facts["table_exploded"] is True
    assert facts["table_exploded_line"] == "31.3%\t313000\t7.25e+23\t4.1e+15\t60\t4:40:02"
    assert facts["table_exploded_from"] == -51302.2
    assert facts["table_exploded_to"] == 7.25e23


@pytest.mark.parametrize(
    "text",
    [
        "900 2.3187\n1000 4.1e+12\n1100 2.2876\n",  # back down: a spike, not a blow-up
        "1 17179869184 35.2\n2 17180000000 35.9\n3 17181234567 36.1\n",  # large and steady
        "0 0 1.5\n1 25000000000 1.4\n2 51000000000 1.4\n",  # from zero: a counter that starts
        "10 2.5\nsaving\n20 3.1e+15\n30 3.3e+15\n",  # rows not adjacent
    ],
)
def test_tables_that_did_not_blow_up(text: str) -> None:
    assert "table_exploded" not in series_facts(text)
