"""Counts with their nouns."""

from __future__ import annotations

from gpudoctor.wording import count_of


def test_one_is_singular_and_others_plural() -> None:
    assert count_of(1, "line") == "1 line"
    assert count_of(0, "line") == "0 lines"
    assert count_of(1234, "line") == "1,234 lines"
    assert count_of(2, "GPU") == "2 GPUs"
    assert count_of(2, "child", "children") == "2 children"
