"""Byte sizes as logs and tools print them: parse ``"2.00 GiB"``, format a byte count."""

from __future__ import annotations

import re

_SIZE_RE = re.compile(
    r"^\s*(?P<num>\d+(?:\.\d+)?)\s*(?P<unit>[KMGTP]?i?B|bytes?|[KMGTP])?\s*$", re.IGNORECASE
)
_BINARY = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40, "P": 1 << 50}


def parse_size(text: str) -> int | None:
    """Turn ``"2.00 GiB"``, ``"512 MiB"``, ``"1024 bytes"`` or ``"3.5GB"`` into bytes.

    ``KiB``/``MiB``/``GiB`` and bare ``K``/``M``/``G`` are powers of 1024 (PyTorch and
    TensorFlow print binary units, sometimes as ``MB``); ``kB``/``MB``/``GB`` follow the
    same binary reading because every framework gpudoctor reads means 1024 when it prints
    them. Returns ``None`` when the text is not a size.
    """
    match = _SIZE_RE.match(text)
    if match is None:
        return None
    number = float(match.group("num"))
    unit = (match.group("unit") or "").upper()
    prefix = "" if unit.startswith("BYTE") or unit == "B" else unit[:1]
    return round(number * _BINARY[prefix])


def format_size(num_bytes: int | float) -> str:
    """Format bytes the way PyTorch does (``"2.00 GiB"``)."""
    value = float(num_bytes)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{int(value)} bytes" if unit == "bytes" else f"{value:.2f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")
