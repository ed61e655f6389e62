"""Compressed and archived logs: recognised by their magic bytes, unpacked in bounded steps.

gzip, bzip2, xz and zstd streams are decompressed a step of at most :data:`STEP_BYTES` at a
time, so a small file that inflates to gigabytes (a decompression bomb, or a log of zeros)
never holds more than a few steps in memory. Concatenated members are all read. Damage or
truncation ends the stream with a warning; what decompressed before it is kept.

tar and zip archives are read member by member, each member a text of its own (itself
possibly compressed, up to :data:`MAX_DEPTH` layers). Formats gpudoctor cannot read (7-Zip,
RAR, ...) are named in a warning that says how to get the text out.
"""

from __future__ import annotations

import importlib
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, Any, BinaryIO, Protocol

from gpudoctor.logs.stats import InputStats

READ_BYTES = 64 << 10
"""Compressed input read at once."""

STEP_BYTES = 256 << 10
"""The most output one decompression step may produce."""

MAX_DEPTH = 3
"""Layers taken off at most (a tar in a gzip is two)."""

SPOOL_LIMIT = 1 << 30
"""The largest zip read from a pipe or from inside another layer (zip needs to seek, so such
a zip is first copied to a temporary file)."""

SNIFF_BYTES = 512
"""How much of a stream is looked at to recognise its format (tar's magic is at 257)."""


class _Decompressor(Protocol):
    """The interface of :mod:`lzma`'s and :mod:`bz2`'s decompressor objects."""

    @property
    def eof(self) -> bool: ...
    @property
    def needs_input(self) -> bool: ...
    @property
    def unused_data(self) -> bytes: ...
    def decompress(self, data: bytes, max_length: int = -1) -> bytes: ...


class _Gunzip:
    """zlib's gzip inflater behind the same interface as lzma's and bz2's decompressors.

    A step that raises loses its output, so the inflater before each step is kept: after
    an error the step is replayed in small pieces, which keeps all but the last few bytes
    before the damage (a wrong checksum at the end of a member loses nothing).
    """

    def __init__(self) -> None:
        self._inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        self._tail = b""
        self.needs_input = True
        self.salvaged = b""

    @property
    def eof(self) -> bool:
        return self._inflater.eof

    @property
    def unused_data(self) -> bytes:
        return self._inflater.unused_data

    def decompress(self, data: bytes, max_length: int = -1) -> bytes:
        data = self._tail + data if self._tail else data
        saved = self._inflater.copy()
        try:
            out = self._inflater.decompress(data, max_length)
        except zlib.error:
            self.salvaged = _salvage(saved, data)
            raise
        self._tail = self._inflater.unconsumed_tail
        self.needs_input = not self._tail and len(out) < max_length
        return out


def _salvage(inflater: Any, data: bytes) -> bytes:
    """What ``inflater`` yields from ``data`` before it fails: in steps of 1 KiB, then the
    failing step again a byte at a time (a wrong checksum fails only after the last byte)."""
    parts = []
    step = 1024
    while True:
        saved = inflater.copy()
        try:
            out = inflater.decompress(data, step)
        except zlib.error:
            if step == 1:
                break
            inflater, step = saved, 1
            continue
        parts.append(out)
        data = inflater.unconsumed_tail
        if inflater.eof or (not data and len(out) < step):
            break
    return b"".join(parts)


def _zstd_decompressor() -> _Decompressor | None:
    """Python 3.14's zstd decompressor, when this Python has it."""
    try:
        module = importlib.import_module("compression.zstd")
    except ImportError:
        return None
    decompressor: _Decompressor = module.ZstdDecompressor()
    return decompressor


def _module(name: str) -> Any:
    """A standard-library decompression module, imported on first use (start-up time)."""
    return importlib.import_module(name)


@dataclass(frozen=True)
class _Codec:
    """A compressed format: its magic bytes and how to get a decompressor for it."""

    name: str
    magics: tuple[bytes, ...]
    new: Callable[[], _Decompressor | None]


_CODECS = {
    "gzip": _Codec("gzip", (b"\x1f\x8b",), _Gunzip),
    "bzip2": _Codec("bzip2", (b"BZh",), lambda: importlib.import_module("bz2").BZ2Decompressor()),
    "xz": _Codec(
        "xz", (b"\xfd7zXZ\x00",), lambda: importlib.import_module("lzma").LZMADecompressor()
    ),
    # A zstd frame, or a skippable frame (0x184D2A50..5F, little-endian).
    "zstd": _Codec(
        "zstd",
        (b"\x28\xb5\x2f\xfd", *(bytes([b, 0x2A, 0x4D, 0x18]) for b in range(0x50, 0x60))),
        _zstd_decompressor,
    ),
}

# Formats that are recognised but not read, and how the user gets the text out.
_UNREADABLE = (
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive", "extract it (7z x FILE) and pass the logs"),
    (b"Rar!\x1a\x07", "a RAR archive", "extract it (unrar x FILE) and pass the logs"),
    (b"\x04\x22\x4d\x18", "lz4-compressed", "decompress it (lz4 -d FILE) and pass the log"),
    (b"\x1f\x9d", "compress(1)-compressed (.Z)", "decompress it (gzip -d FILE) and pass the log"),
    (b"LZIP", "lzip-compressed", "decompress it (lzip -d FILE) and pass the log"),
    (b"\x7fELF", "an executable (ELF)", "pass the job's log, not a program"),
    (b"%PDF-", "a PDF document", "pass the log as text"),
    (b"\x89PNG\r\n\x1a\n", "a PNG image", "pass the log as text, not a screenshot"),
    (b"\xff\xd8\xff", "a JPEG image", "pass the log as text, not a screenshot"),
)


def _errors() -> tuple[type[Exception], ...]:
    """What decompressors raise on damaged data (bz2 raises OSError; zstd its own ZstdError,
    a subclass of Exception, is caught by name below). Called only when an archive is read, so
    lzma loads only for inputs that need it."""
    import lzma

    return (zlib.error, lzma.LZMAError, OSError, EOFError, ValueError, RuntimeError)


def sniff(head: bytes) -> str | None:
    """The format of a stream starting with ``head``: a codec name, ``"tar"``, ``"zip"``,
    ``"unreadable"``, or None for text (or anything else, read as text)."""
    for codec in _CODECS.values():
        if head.startswith(codec.magics):
            if codec.name == "bzip2" and head[3:4] not in b"123456789":
                continue
            return codec.name
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return "zip"
    if head[257:262] == b"ustar":
        return "tar"
    if any(head.startswith(magic) for magic, _, _ in _UNREADABLE):
        return "unreadable"
    return None


class Reader(Protocol):
    """What is read from: a binary stream's ``read``."""

    def read(self, size: int = -1, /) -> bytes: ...


class _Pushback:
    """A stream with bytes already read from it put back in front."""

    def __init__(self, head: bytes, stream: Reader) -> None:
        self._head = head
        self._stream = stream

    def read(self, size: int = -1, /) -> bytes:
        if not self._head:
            return self._stream.read(size)
        head, self._head = self._head, b""
        if size < 0:
            return head + self._stream.read()
        if len(head) >= size:
            self._head = head[size:]
            return head[:size]
        return head + self._stream.read(size - len(head))


class _Pieces:
    """A readable stream over an iterator of byte strings (a decompressor's output)."""

    def __init__(self, pieces: Iterator[bytes]) -> None:
        self._pieces = pieces
        self._buf = b""

    def read(self, size: int = -1, /) -> bytes:
        parts = [self._buf]
        have = len(self._buf)
        while size < 0 or have < size:
            piece = next(self._pieces, None)
            if piece is None:
                break
            parts.append(piece)
            have += len(piece)
        data = b"".join(parts)
        if 0 <= size < len(data):
            self._buf = data[size:]
            return data[:size]
        self._buf = b""
        return data


def _peek(stream: Reader, size: int) -> tuple[bytes, _Pushback]:
    """The first ``size`` bytes of ``stream`` (fewer at its end), and the stream whole again."""
    parts = []
    have = 0
    while have < size:
        part = stream.read(size - have)
        if not part:
            break
        parts.append(part)
        have += len(part)
    head = b"".join(parts)
    return head, _Pushback(head, stream)


def _chunks(stream: Reader, size: int) -> Iterator[bytes]:
    """``stream`` read ``size`` bytes at a time."""
    while chunk := stream.read(size):
        yield chunk


def _member_chunks(stream: Reader, size: int, source: str, stats: InputStats) -> Iterator[bytes]:
    """An archive member read ``size`` bytes at a time; damage ends it with a warning (each
    archive library raises its own errors, and all of them mean the same here)."""
    try:
        while chunk := stream.read(size):
            yield chunk
    except Exception as exc:
        stats.warn(source, f"reading stopped at damaged data ({exc}); read what came before")


def unpack(
    stream: BinaryIO, stats: InputStats, chunk_bytes: int
) -> Iterator[tuple[str, Iterator[bytes]]]:
    """The texts inside ``stream``: ``(source, chunks)`` for the stream itself when it is
    text, for what it decompresses to, or for each member of an archive (``name:member``).

    Each text's chunks must be read to the end before the next text is asked for. Problems
    are warnings in ``stats``, never exceptions.
    """
    try:
        seekable = stream.seekable()
        start = stream.tell() if seekable else 0
    except (OSError, ValueError, AttributeError):
        seekable, start = False, 0
    origin = (stream, start) if seekable else None
    yield from _layers(stats.name, stream, stats, chunk_bytes, 0, origin)


def _layers(
    source: str,
    stream: Reader,
    stats: InputStats,
    chunk_bytes: int,
    depth: int,
    origin: tuple[BinaryIO, int] | None = None,
) -> Iterator[tuple[str, Iterator[bytes]]]:
    try:
        head, whole = _peek(stream, SNIFF_BYTES)
    except Exception as exc:
        if not depth:
            raise  # the input itself failed to read: the caller reports it
        stats.warn(source, f"cannot be read ({exc})")
        return
    kind = sniff(head)
    if kind is None or depth >= MAX_DEPTH:
        if depth:
            yield source, _member_chunks(whole, chunk_bytes, source, stats)
        else:
            yield source, _chunks(whole, chunk_bytes)
    elif kind in _CODECS:
        stats.compressed = True
        stats.formats.append(kind)
        pieces = _decompress(_CODECS[kind], whole, source, stats)
        yield from _layers(source, _Pieces(pieces), stats, chunk_bytes, depth + 1)
    elif kind == "tar":
        stats.formats.append("tar")
        yield from _tar_members(source, whole, stats, chunk_bytes, depth)
    elif kind == "zip":
        stats.formats.append("zip")
        yield from _zip_members(source, whole, stats, chunk_bytes, depth, origin)
    else:
        what, fix = next((w, f) for m, w, f in _UNREADABLE if head.startswith(m))
        stats.warn(source, f"is {what}, which gpudoctor cannot read: {fix}")


def _decompress(codec: _Codec, stream: Reader, source: str, stats: InputStats) -> Iterator[bytes]:
    """Decompress one member after another, a bounded step at a time."""
    decompressor = codec.new()
    if decompressor is None:
        fallback = _zstandard_fallback(stream, source, stats)
        if fallback is not None:
            yield from fallback
        return
    data = stream.read(READ_BYTES)
    while True:
        try:
            out = decompressor.decompress(data, STEP_BYTES)
        except Exception as exc:  # each library has its own error class; all mean damage
            salvaged = getattr(decompressor, "salvaged", b"")
            if salvaged:
                yield salvaged
            stats.warn(source, f"the {codec.name} data is damaged ({exc}); read what came before")
            return
        if out:
            yield out
        if decompressor.eof:
            rest = decompressor.unused_data
            rest = _next_member(rest, stream, codec)
            if not rest:
                return
            if not rest.startswith(codec.magics):
                stats.warn(
                    source,
                    f"data after the end of the {codec.name} stream is not {codec.name}; "
                    "it was ignored",
                )
                return
            decompressor = codec.new() or decompressor
            data = rest
            continue
        if decompressor.needs_input:
            data = stream.read(READ_BYTES)
            if not data:
                stats.warn(source, f"the {codec.name} stream is truncated; read what it held")
                return
        else:
            data = b""
            if not out:
                stats.warn(source, f"the {codec.name} data is damaged; read what came before")
                return


def _next_member(rest: bytes, stream: Reader, codec: _Codec) -> bytes:
    """The start of the next member after one ended with ``rest`` unused: NUL padding is
    skipped, and enough is read to compare magic bytes."""
    need = max(len(m) for m in codec.magics)
    while True:
        rest = rest.lstrip(b"\x00")
        if len(rest) >= need:
            return rest
        more = stream.read(READ_BYTES)
        if not more:
            return rest
        rest += more


def _zstandard_fallback(stream: Reader, source: str, stats: InputStats) -> Iterator[bytes] | None:
    """zstd through the optional ``zstandard`` package, or a warning that says how to get it."""
    try:
        zstandard: Any = importlib.import_module("zstandard")
    except ImportError:
        stats.warn(
            source,
            "is zstd-compressed and this Python cannot read zstd: install gpudoctor[zstd] "
            "(or decompress it with zstd -d FILE)",
        )
        return None
    reader = zstandard.ZstdDecompressor().stream_reader(stream, read_across_frames=True)

    def pieces() -> Iterator[bytes]:
        try:
            while piece := reader.read(STEP_BYTES):
                yield piece
        except Exception as exc:  # zstandard.ZstdError and what its reader passes on
            stats.warn(
                source, f"the zstd data is damaged or truncated ({exc}); read what came before"
            )

    return pieces()


def _tar_members(
    source: str, stream: Reader, stats: InputStats, chunk_bytes: int, depth: int
) -> Iterator[tuple[str, Iterator[bytes]]]:
    """Each regular file of a tar stream, read in order without seeking."""
    import tarfile

    damaged: tuple[type[Exception], ...] = (tarfile.TarError, *_errors())
    try:
        with tarfile.open(fileobj=stream, mode="r|") as archive:  # type: ignore[call-overload]
            for member in archive:
                if not member.isfile():
                    continue
                extracted = archive.extractfile(member)
                if extracted is None:
                    continue
                yield from _layers(
                    f"{source}:{member.name}", extracted, stats, chunk_bytes, depth + 1
                )
    except damaged as exc:
        stats.warn(
            source, f"the tar archive is damaged or truncated ({exc}); read what came before"
        )


def _zip_members(
    source: str,
    stream: Reader,
    stats: InputStats,
    chunk_bytes: int,
    depth: int,
    origin: tuple[BinaryIO, int] | None,
) -> Iterator[tuple[str, Iterator[bytes]]]:
    """Each file of a zip archive. zip keeps its index at the end, so a zip that is not a
    seekable file of its own is first copied to a temporary file."""
    import tempfile
    import zipfile

    damaged: tuple[type[Exception], ...] = (zipfile.BadZipFile, NotImplementedError, *_errors())
    with tempfile.TemporaryFile() as spool:
        if origin is not None:
            file: IO[bytes] = origin[0]
            file.seek(origin[1])
        else:
            copied = 0
            while copied <= SPOOL_LIMIT and (piece := stream.read(READ_BYTES)):
                spool.write(piece)
                copied += len(piece)
            if copied > SPOOL_LIMIT:
                stats.warn(
                    source,
                    f"the zip archive is over {SPOOL_LIMIT >> 20} MiB and not a file of its "
                    "own: unzip it and pass the logs",
                )
                return
            spool.seek(0)
            file = spool
        try:
            archive = zipfile.ZipFile(file)
            members = [info for info in archive.infolist() if not info.is_dir()]
        except damaged as exc:
            stats.warn(
                source, f"the zip archive is damaged ({exc}); unzip what you can and pass the logs"
            )
            return
        for info in members:
            name = f"{source}:{info.filename}"
            try:
                with archive.open(info) as member:
                    # bzip2 and lzma members decompress a whole read at once: keep reads small.
                    size = READ_BYTES if info.compress_type <= zipfile.ZIP_DEFLATED else 4096
                    yield from _layers(name, _Sized(member, size), stats, chunk_bytes, depth + 1)
            except damaged as exc:
                stats.warn(name, f"cannot be read from the zip archive ({exc})")


class _Sized:
    """A stream read in pieces of at most ``size`` bytes, whatever size is asked for."""

    def __init__(self, stream: Reader, size: int) -> None:
        self._stream = stream
        self._size = size

    def read(self, size: int = -1, /) -> bytes:
        if 0 <= size <= self._size:
            return self._stream.read(size)
        parts = []
        want = size if size >= 0 else 1 << 62
        while want > 0:
            part = self._stream.read(min(self._size, want))
            if not part:
                break
            parts.append(part)
            want -= len(part)
        return b"".join(parts)
