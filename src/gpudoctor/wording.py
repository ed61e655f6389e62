"""Small helpers for the words of messages: counts with their nouns."""

from __future__ import annotations


def count_of(number: int, noun: str, plural: str | None = None) -> str:
    """``count_of(1, "line")`` → ``"1 line"``; ``count_of(3, "line")`` → ``"3 lines"``."""
    word = noun if number == 1 else (plural or noun + "s")
    return f"{number:,} {word}"
