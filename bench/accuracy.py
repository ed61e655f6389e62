"""Measures the rule pack on labelled real crash logs.

Usage: ``python bench/accuracy.py CORPUS_DIR... [--min-top1 0.85 --min-top3 0.95
--max-false-alarms 0.10 --max-no-diagnosis 0.03]``. Each CORPUS_DIR holds ``cases/``
(crashes, ``label`` = the true cause, ``also`` = other fair answers) and/or ``negatives/``
(``label`` none or app_exception). Prints, per cause, n / top-1 (its recall) / top-3 /
precision, then totals, the share of crash logs with no diagnosis at all, and a calibration
table: for each confidence band of the top diagnosis (over cases and negatives), how many
logs and how often that top diagnosis was right. Exits 1 when a threshold is missed.
A case counts as top-1 when the first cause is its label or one of its ``also``; precision
of a cause is how often it was right when it came first. A false alarm is a negative that
gets any diagnosis other than ``app_exception`` with confidence >= 0.5.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import yaml

from gpudoctor.errors import RuleErrors
from gpudoctor.pipeline import explain_text
from gpudoctor.rulebook.book import RuleBook, load_rulebook

ALARM_CONFIDENCE = 0.5
BANDS = ((0.0, 0.3), (0.3, 0.5), (0.5, 0.7), (0.7, 0.9), (0.9, 1.01))
"""Confidence bands of the calibration table, [low, high)."""


@dataclass(frozen=True)
class Outcome:
    """What gpudoctor said about one labelled log."""

    case_id: str
    label: str
    accepted: frozenset[str]
    ranked: tuple[tuple[str, float], ...]  # (cause, confidence) of the causes, best first


def load_cases(folder: Path) -> list[dict[str, object]]:
    """Every YAML case in ``folder``, sorted by file name."""
    cases = []
    for path in sorted(folder.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        data["_path"] = str(path)
        cases.append(data)
    return cases


def run(book: RuleBook, case: dict[str, object]) -> Outcome:
    """Explain one case's log."""
    report = explain_text(str(case.get("log") or ""), book, name=str(case.get("id")))
    label = str(case["label"])
    also = case.get("also") or []
    assert isinstance(also, list)
    return Outcome(
        case_id=str(case.get("id")),
        label=label,
        accepted=frozenset([label, *map(str, also)]),
        ranked=tuple((d.cause, d.confidence) for d in report.causes),
    )


def calibration(outcomes: list[Outcome]) -> list[tuple[str, int, int]]:
    """(band, logs whose top diagnosis falls in it, how many of those were right), per band
    of :data:`BANDS`; logs without a diagnosis are left out."""
    rows = []
    for low, high in BANDS:
        tops = [o for o in outcomes if o.ranked and low <= o.ranked[0][1] < high]
        right = sum(o.ranked[0][0] in o.accepted for o in tops)
        label = (
            f"< {high:.1f}"
            if low == 0
            else (f">= {low:.1f}" if high > 1 else f"{low:.1f}-{high:.1f}")
        )
        rows.append((label, len(tops), right))
    return rows


def print_calibration(outcomes: list[Outcome]) -> None:
    """The calibration table: does a confidence of 0.7 mean right about 7 times in 10?"""
    print(f"{'top confidence':<15} {'logs':>5} {'right':>6} {'share right':>12}")
    for label, count, right in calibration(outcomes):
        share = f"{right / count:.0%}" if count else "-"
        print(f"{label:<15} {count:>5} {right:>6} {share:>12}")


def main(argv: list[str] | None = None) -> int:
    """Run the corpus and print the tables; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", nargs="+", type=Path)
    parser.add_argument("--min-top1", type=float, default=0.0)
    parser.add_argument("--min-top3", type=float, default=0.0)
    parser.add_argument("--max-false-alarms", type=float, default=1.0)
    parser.add_argument("--max-no-diagnosis", type=float, default=1.0,
                        help="Largest share of crash logs allowed no diagnosis.")  # fmt: skip
    parser.add_argument("--show-misses", action="store_true", help="List every miss.")
    parser.add_argument("--rules", type=Path, action="append", default=[])
    args = parser.parse_args(argv)
    try:
        book = load_rulebook(args.rules, examples=False)  # as `explain` builds it
    except RuleErrors as exc:
        print(exc, file=sys.stderr)
        return 2
    positives: list[Outcome] = []
    negatives: list[Outcome] = []
    for root in args.corpus:
        positives += [run(book, c) for c in load_cases(root / "cases")]
        negatives += [run(book, c) for c in load_cases(root / "negatives")]

    per_cause: dict[str, Counter[str]] = defaultdict(Counter)
    for o in positives:
        causes = [c for c, _ in o.ranked]
        per_cause[o.label]["n"] += 1
        per_cause[o.label]["top1"] += bool(causes) and causes[0] in o.accepted
        per_cause[o.label]["top3"] += any(c in o.accepted for c in causes[:3])
        if causes:
            per_cause[causes[0]]["predicted"] += 1
            per_cause[causes[0]]["correct"] += causes[0] in o.accepted
    print(f"{'cause':<34} {'n':>3} {'top-1 (recall)':>14} {'top-3':>6} {'precision':>13}")
    for cause in sorted(per_cause):
        row = per_cause[cause]
        n, predicted = row["n"], row["predicted"]
        top1 = f"{row['top1'] / n:.0%}" if n else "-"
        top3 = f"{row['top3'] / n:.0%}" if n else "-"
        precision = (
            f"{row['correct'] / predicted:.0%} ({row['correct']}/{predicted})" if predicted else "-"
        )
        print(f"{cause:<34} {n:>3} {top1:>14} {top3:>6} {precision:>13}")

    total = len(positives)
    top1 = sum(bool(o.ranked) and o.ranked[0][0] in o.accepted for o in positives)
    top3 = sum(any(c in o.accepted for c, _ in o.ranked[:3]) for o in positives)
    alarms = [
        o for o in negatives
        if any(c != "app_exception" and conf >= ALARM_CONFIDENCE for c, conf in o.ranked)
    ]  # fmt: skip
    top1_rate = top1 / total if total else 0.0
    top3_rate = top3 / total if total else 0.0
    alarm_rate = len(alarms) / len(negatives) if negatives else 0.0
    print()
    print(f"cases: {total}  top-1: {top1}/{total} = {top1_rate:.1%}  "
          f"top-3: {top3}/{total} = {top3_rate:.1%}")  # fmt: skip
    print(f"negatives: {len(negatives)}  false alarms: {len(alarms)} = {alarm_rate:.1%}")
    app = [o for o in negatives if o.label == "app_exception"]
    if app:
        named = sum(bool(o.ranked) and o.ranked[0][0] == "app_exception" for o in app)
        print(f"application bugs named as such (app_exception first): {named}/{len(app)}")
    silent = [o for o in positives if not o.ranked]
    silent_rate = len(silent) / total if total else 0.0
    print(f"crash logs with no diagnosis: {len(silent)}/{total} = {silent_rate:.1%}")
    print()
    print_calibration([*positives, *negatives])
    if args.show_misses:
        for o in positives:
            if not (o.ranked and o.ranked[0][0] in o.accepted):
                print(f"  miss {o.case_id}: label {o.label}, got {list(o.ranked[:3])}")
        for o in alarms:
            print(f"  false alarm {o.case_id}: got {list(o.ranked[:3])}")
    failed = []
    if top1_rate < args.min_top1:
        failed.append(f"top-1 {top1_rate:.1%} < {args.min_top1:.0%}")
    if top3_rate < args.min_top3:
        failed.append(f"top-3 {top3_rate:.1%} < {args.min_top3:.0%}")
    if alarm_rate > args.max_false_alarms:
        failed.append(f"false alarms {alarm_rate:.1%} > {args.max_false_alarms:.0%}")
    if silent_rate > args.max_no_diagnosis:
        failed.append(f"no diagnosis {silent_rate:.1%} > {args.max_no_diagnosis:.0%}")
    if failed:
        print("FAILED: " + "; ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
