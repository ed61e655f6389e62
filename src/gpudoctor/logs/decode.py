"""Text encodings: which one a log is written in, and re-encoding it to UTF-8 for the scanner.

Most logs are UTF-8 (or ASCII, or a legacy 8-bit encoding that is read as UTF-8 with
replacement). Windows PowerShell's ``>`` writes UTF-16LE with a byte-order mark, and some
tools write UTF-16 or UTF-32 without one. A byte-order mark names the encoding; without one,
the NUL bytes of ASCII text written in UTF-16/32 fall in a fixed pattern (every other byte,
or three bytes in four), which names it too.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterator

SNIFF_BYTES = 1024
"""How much of the start of a text is looked at for the NUL pattern."""

# UTF-32LE's mark starts with UTF-16LE's, so it is tried first.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

# For each encoding, the byte positions (mod 4) that hold NUL in ASCII text and those that
# never do.
_NUL_PATTERNS = (
    ("utf-32-le", (1, 2, 3), (0,)),
    ("utf-32-be", (0, 1, 2), (3,)),
    ("utf-16-le", (1, 3), (0, 2)),
    ("utf-16-be", (0, 2), (1, 3)),
)


def sniff_encoding(head: bytes) -> tuple[str, int]:
    """The encoding of a text that starts with ``head``, and the length of its byte-order mark.

    Returns ``("utf-8", 0)`` when nothing says otherwise.
    """
    for bom, encoding in _BOMS:
        if head.startswith(bom):
            return encoding, len(bom)
    return _by_nul_pattern(head[:SNIFF_BYTES]), 0


def _by_nul_pattern(sample: bytes) -> str:
    """UTF-16/32 told by where NUL bytes fall: in nearly all of the NUL positions of the
    encoding (non-ASCII characters have fewer NULs) and in nearly none of the others."""
    usable = len(sample) // 4 * 4
    if usable < 4:
        return "utf-8"
    quarter = usable // 4
    nul_share = [sample[i:usable:4].count(0) / quarter for i in range(4)]
    for encoding, nul_at, never_at in _NUL_PATTERNS:
        if min(nul_share[i] for i in nul_at) >= 0.7 and max(nul_share[i] for i in never_at) <= 0.1:
            return encoding
    return "utf-8"


def to_utf8(chunks: Iterator[bytes], encoding: str) -> Iterator[bytes]:
    """Re-encode a stream of ``encoding`` text to UTF-8, chunk by chunk.

    Undecodable bytes (an odd byte at the end of UTF-16, a surrogate out of place) become
    U+FFFD; a character split between chunks is kept whole.
    """
    decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
    for chunk in chunks:
        text = decoder.decode(chunk)
        if text:
            yield text.encode("utf-8", errors="replace")
    text = decoder.decode(b"", final=True)
    if text:
        yield text.encode("utf-8", errors="replace")
