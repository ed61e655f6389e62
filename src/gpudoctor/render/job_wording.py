"""The words for a job of several ranks: who took part, who failed first, what followed.

Plain text shared by the text and Markdown renderers, which escape it (node names and file
names come from the inputs).
"""

from __future__ import annotations

from collections.abc import Sequence

from gpudoctor.report import Diagnosis, FirstFailure, JobSummary, Report
from gpudoctor.wording import count_of

MAX_LISTED = 8
"""Runs of ranks (``5``, ``7-9``) named in a sentence; the others are counted."""

HOW = {
    "earliest": "the earliest failure in time",
    "launcher": "named by torchrun as the first observed failure",
    "desync": "named by c10d's desync report",
    "peer": "the peer NCCL lost contact with",
    "missing": "it never reached the collective the others timed out in",
}


def rank_list(ranks: Sequence[int]) -> str:
    """``[0, 1, 2, 5, 7, 8]`` → ``"0-2, 5, 7-8"``."""
    runs: list[list[int]] = []
    for rank in sorted(set(ranks)):
        if runs and rank == runs[-1][1] + 1:
            runs[-1][1] = rank
        else:
            runs.append([rank, rank])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def shortened_rank_list(ranks: Sequence[int]) -> str:
    """:func:`rank_list`, cut after :data:`MAX_LISTED` runs: ``"1, 3, 5 … and 40 more"``."""
    listed = rank_list(ranks)
    runs = listed.split(", ")
    if len(runs) <= MAX_LISTED:
        return listed
    shown = runs[:MAX_LISTED]
    count = sum(_run_size(run) for run in shown)
    return f"{', '.join(shown)} and {len(set(ranks)) - count} more"


def _run_size(run: str) -> int:
    first, _, last = run.partition("-")
    return int(last or first) - int(first) + 1


def who(ranks: Sequence[int], nodes: Sequence[str]) -> str:
    """``rank 3``, ``63 ranks``, ``ranks 2, 5``, ``rank 3 on gpu-07``, ``node gpu-07``,
    ``2 nodes``; or ``""``."""
    parts = []
    if len(ranks) == 1:
        parts.append(f"rank {ranks[0]}")
    elif 1 < len(ranks) <= 3:
        parts.append(f"ranks {rank_list(ranks)}")
    elif ranks:
        parts.append(count_of(len(ranks), "rank"))
    if len(nodes) == 1:
        parts.append(f"on {nodes[0]}" if ranks else f"node {nodes[0]}")
    elif nodes:
        several = count_of(len(nodes), "node")
        parts.append(f"on {several}" if ranks else several)
    return " ".join(parts)


def _failure_who(failure: FirstFailure) -> str:
    ranks = [] if failure.rank is None else [failure.rank]
    return who(ranks, [] if failure.node is None else [failure.node])


def job_lines(job: JobSummary, diagnoses: Sequence[Diagnosis]) -> list[str]:
    """One or two sentences on the job: its size, then its first failure or its hang."""
    size = count_of(len(job.ranks), "rank") if job.ranks else ""
    if job.world_size and job.world_size > len(job.ranks):
        size = f"{size} seen of {job.world_size}" if size else f"{job.world_size} ranks"
    if job.nodes:
        nodes = count_of(len(job.nodes), "node")
        size = f"{size} on {nodes}" if size else nodes
    lines = [f"Job: {size}."]
    failure = job.first_failure
    if job.hang:
        timed = count_of(len(job.timed_out), "rank")
        text = f"Hang or desync: {timed} timed out in a collective and none failed first"
        if job.missing:
            missing = shortened_rank_list(job.missing)
            noun = "rank" if len(job.missing) == 1 else "ranks"
            verb = "never reached it" if failure and failure.how == "missing" else "lagged"
            text += f"; {noun} {missing} {verb}"
            if failure is not None and failure.how == "desync":
                text += " (c10d's desync report)"
            elif failure is not None and failure.how == "missing" and failure.source:
                text += f"; its log ends where it stopped: {failure.source}"
        lines.append(text + ".")
    elif failure is not None:
        where = _failure_who(failure)
        named = next((d for d in diagnoses if d.rule == failure.rule), None)
        what = f"#{named.rank} {named.title}" if named is not None else "its own log has the cause"
        when = f", at {failure.time}" if failure.time else ""
        where = where or "unknown rank"
        lines.append(f"First failure: {where}, {what} ({HOW[failure.how]}{when}).")
    return lines


def consequence_line(report: Report, diagnosis: Diagnosis) -> str:
    """``63 ranks: <title>, a consequence of rank 3's failure (#1)``."""
    root = next((d for d in report.diagnoses if d.rule == diagnosis.consequence_of), None)
    whose = ""
    failure = report.job.first_failure if report.job is not None else None
    if failure is not None and root is not None and failure.rule == root.rule:
        whose = _failure_who(failure)
    elif root is not None:
        whose = who(root.ranks, root.nodes)
    cause = f"#{root.rank} {root.title}" if root is not None else str(diagnosis.consequence_of)
    subject = who(diagnosis.ranks, diagnosis.nodes)
    head = f"{subject}: " if subject else ""
    of = f"{whose}'s failure, {cause}" if whose else cause
    return f"{head}{diagnosis.title}, a consequence of {of}"
