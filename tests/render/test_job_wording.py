"""The words for a job of several ranks."""

from __future__ import annotations

from gpudoctor.render.job_wording import rank_list, shortened_rank_list, who


def test_rank_list_joins_runs() -> None:
    assert rank_list([5, 0, 1, 2, 7, 8]) == "0-2, 5, 7-8"
    assert rank_list([3]) == "3"


def test_long_lists_are_counted_not_cut_silently() -> None:
    odd = list(range(1, 40, 2))  # 20 runs of one rank each
    assert shortened_rank_list(odd) == "1, 3, 5, 7, 9, 11, 13, 15 and 12 more"
    assert shortened_rank_list(list(range(100))) == "0-99"


def test_who() -> None:
    assert who([3], []) == "rank 3"
    assert who([2, 5], []) == "ranks 2, 5"
    assert who(list(range(63)), ["gpu-node-01"]) == "63 ranks on gpu-node-01"
    assert who([], ["gpu-node-02"]) == "node gpu-node-02"
    assert who([], ["a1", "b2"]) == "2 nodes"
    assert who([], []) == ""
