"""The scanner: one pass over the blocks of every input, applying every pattern at once.

Patterns are RE2 regular expressions (google-re2), matched against one line at a time; RE2
runs in time linear in the input whatever the pattern, so no rule can make a scan backtrack
catastrophically. Each block goes first through one RE2 *set* holding every pattern, which
says in a single pass which patterns occur in the block at all; only those are then searched
line by line for their matches and captures. The set looks at the block in pieces of
:data:`SET_PIECE` bytes, so a pattern is searched only from the first to the last piece where
it occurs (a crash at the end of a 4 MB block costs a search of its last piece, not of the
whole block). A pack too large for one set (several thousand patterns) is split over a few
sets. Lines that match nothing are never decoded.

On a machine with several CPUs, a block of at least :data:`THREAD_MIN_BYTES` is matched by
two threads, each against one half of its pieces: RE2 releases the interpreter lock while it
matches (and a compiled set may be used by several threads at once), so the set pass runs on
two cores while the input is still read once, in order, and every piece keeps its place.

A match becomes an :class:`Event` with the source, the line number, the decoded line, the
typed captures, and the rank, node and time the line (or its file's name) gives
(:mod:`gpudoctor.logs.origin`); every matching line, kept or only counted, adds its rank and
node to its pattern's distinct ones (at most :data:`MAX_ORIGINS`). The scanner keeps the
first :data:`KEEP_FIRST` and the last :data:`KEEP_LAST` events of each pattern and counts the
rest (only kept lines are decoded and their captures converted), so memory is bounded however
often a pattern occurs; a pattern that matches more
than :data:`SATURATION` lines (an epoch counter on every line) is then only searched at the
end of each block, and is taken out of the set (:data:`MAX_SET_REBUILDS`), so time stays
bounded too.
"""

from __future__ import annotations

import enum
import os
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, NamedTuple

import re2

from gpudoctor.logs.origin import PREFIX_BYTES, Origin, line_time, origin_of
from gpudoctor.logs.reader import Block, decode
from gpudoctor.units import parse_size
from gpudoctor.version_numbers import Version, parse_version

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

KEEP_FIRST = 5
KEEP_LAST = 5
SATURATION = 1000
"""Matching lines of one pattern counted exactly; past this, only each block's last ones."""
TAIL_WINDOW = 1 << 10
MAX_TAIL_WINDOW = 256 << 10
"""A saturated pattern's last matches are searched backwards from a block's end in windows
growing from :data:`TAIL_WINDOW` to :data:`MAX_TAIL_WINDOW` bytes."""
MAX_SET_REBUILDS = 1
"""How many times one scanner compiles its sets again to take saturated patterns out (a
second rebuild, for a pattern saturating later, cost more than it saved on the benchmark)."""
RE2_MAX_MEM = 32 << 20
"""RE2's memory budget per compiled regex or set (its default is 8 MiB): the bundled pack's
~2,000 patterns outgrow 8 MiB as one set, and two sets match at about two thirds of the speed
of one (236 against 373 MB/s on the benchmark log). Memory is taken only as the DFA needs it."""
SET_PIECE = 256 << 10
"""The set pass looks at a block in pieces of about this many bytes (whole lines), so that a
pattern found in a block is then searched only over the pieces where it occurs."""
MAX_EVIDENCE_CHARS = 1000
"""Longest line text kept in an event; longer lines are shortened with an ellipsis."""
MAX_ORIGINS = 4096
"""Distinct ranks (and nodes) remembered per pattern; past this, the sets are lower bounds."""
THREAD_MIN_BYTES = 1 << 20
"""Blocks shorter than this are matched in the calling thread alone."""


class CaptureType(enum.Enum):
    """How a named capture's text is turned into a value."""

    STR = "str"
    INT = "int"
    FLOAT = "float"
    SIZE = "size"
    VERSION = "version"


CaptureValue = str | int | float | Version


def convert_capture(text: str, kind: CaptureType) -> CaptureValue | None:
    """Convert captured text to its declared type; ``None`` when it does not parse."""
    if kind is CaptureType.STR:
        return text
    try:
        if kind is CaptureType.INT:
            return int(text, 0) if text.lower().startswith(("0x", "-0x")) else int(text)
        if kind is CaptureType.FLOAT:
            return float(text)
    except ValueError:
        return None
    if kind is CaptureType.SIZE:
        return parse_size(text)
    return parse_version(text)


def regex_options() -> re2.Options:
    """RE2 options shared by every compiled pattern (errors are raised, not logged).

    Logs are matched as raw bytes (Latin-1 to RE2), so an invalid UTF-8 sequence inside a
    line never stops a pattern from matching around it; a pattern's non-ASCII literals are
    given as their UTF-8 bytes and still match. Case folding applies to ASCII letters only.
    """
    options = re2.Options()
    options.log_errors = False
    options.encoding = re2.Options.Encoding.LATIN1
    options.max_mem = RE2_MAX_MEM
    return options


def compile_pattern(regex: str, *, ignore_case: bool = False) -> re2._Regexp:
    """Compile one rule pattern as the scanner runs it; raises ``re2.error`` when invalid."""
    return re2.compile(_effective(regex, ignore_case).encode("utf-8"), regex_options())


def _effective(regex: str, ignore_case: bool) -> str:
    return ("(?mi)" if ignore_case else "(?m)") + regex


class PatternSpec(NamedTuple):
    """One pattern to scan for: ``key`` identifies it in the results (``rule/pattern``).

    A named tuple, not a dataclass: a start builds about a thousand, and a tuple is built
    several times faster."""

    key: str
    regex: str
    ignore_case: bool = False
    captures: Mapping[str, CaptureType] = MappingProxyType({})
    literals: tuple[bytes, ...] | None = None
    """Texts of which every match holds one, as :func:`fold_for_literals` folds them
    (:func:`gpudoctor.rulebook.regex_shape.required_literals`); ``None``: not known."""


@dataclass(frozen=True)
class Event:
    """One pattern matched on one line."""

    key: str
    source: str
    line: int
    text: str
    captures: Mapping[str, CaptureValue]
    order: tuple[int, int]
    """(input index, line number): sorts events in reading order across inputs."""
    rank: int | None = None
    node: str | None = None
    time: float | None = None
    """When the line says (seconds since the start of its year: :mod:`gpudoctor.logs.origin`)."""


@dataclass
class PatternHits:
    """The events kept for one pattern, and how many there were in all.

    ``count`` is exact while ``saturated`` is false; past :data:`SATURATION` matching lines
    only each block's last matches are looked at, and ``count`` is a lower bound.
    """

    first: list[Event] = field(default_factory=list)
    last: deque[Event] = field(default_factory=lambda: deque(maxlen=KEEP_LAST))
    count: int = 0
    saturated: bool = False
    ranks: set[int] = field(default_factory=set)
    """The distinct ranks of the matching lines seen (at most :data:`MAX_ORIGINS`)."""
    nodes: set[str] = field(default_factory=set)

    def add(self, event: Event) -> None:
        self.count += 1
        self.note_origin(Origin(event.rank, event.node))
        if len(self.first) < KEEP_FIRST:
            self.first.append(event)
        else:
            self.last.append(event)

    def events(self) -> list[Event]:
        """Kept events in reading order (first ones, then last ones)."""
        return [*self.first, *self.last]

    @classmethod
    def merged(cls, parts: Sequence[PatternHits]) -> PatternHits:
        """One pattern's hits over consecutive stretches of input (each part scanned after
        the one before it), as if the stretches had been scanned in one pass."""
        events = [event for part in parts for event in part.events()]
        merged = cls(
            count=sum(part.count for part in parts),
            saturated=any(part.saturated for part in parts),
        )
        merged.first = events[:KEEP_FIRST]
        merged.last.extend(events[KEEP_FIRST:])  # the deque keeps the last KEEP_LAST
        for part in parts:
            for rank in part.ranks:
                merged.note_origin(Origin(rank, None))
            for node in part.nodes:
                merged.note_origin(Origin(None, node))
        return merged

    def note_origin(self, origin: Origin) -> None:
        """Count a matching line's rank and node among the distinct ones (bounded)."""
        if origin.rank is not None and len(self.ranks) < MAX_ORIGINS:
            self.ranks.add(origin.rank)
        if origin.node is not None and len(self.nodes) < MAX_ORIGINS:
            self.nodes.add(origin.node)


HYPOTHETICAL = compile_pattern(
    r"\bif you (?:get|see|encounter|run into|hit|are getting|are seeing|ever see)\b",
    ignore_case=True,
)
"""Words before a match that make it a mention of what might happen, not an occurrence:
bitsandbytes' import warning "If you get `CUDA error: invalid device function` errors, the
above might be the cause"; such a line is no event of any pattern."""


def _mention(data: bytes, start: int, end: int) -> bool:
    """Whether :data:`HYPOTHETICAL` occurs in ``data[start:end]`` (a bytes search first: the
    regex runs on few lines)."""
    if data.find(b"you ", start, end) < 0 and data.find(b"YOU ", start, end) < 0:
        return False
    return HYPOTHETICAL.search(data, start, end) is not None


def _line_match(
    regex: re2._Regexp, data: bytes, pos: int, endpos: int | None = None
) -> tuple[re2._Match, int, int] | None:
    """The next match at or after ``pos`` that lies within one line and is not a mention
    (:data:`HYPOTHETICAL` before it on its line): (match, line start, line end), or ``None``."""
    limit = len(data) if endpos is None else endpos
    while pos < limit:
        match = regex.search(data, pos, limit)
        if match is None:
            return None
        start = data.rfind(b"\n", 0, match.start()) + 1
        end = data.find(b"\n", match.start())
        if end < 0:
            end = len(data)
        if match.end() > end:
            match = regex.search(data, start, end)  # the match ran past the line: the line alone
        if match is not None and not _mention(data, start, match.start()):
            return match, start, end
        pos = end + 1
    return None


class _LineCursor:
    """Line numbers of positions in one block, asked for in increasing order: counted
    forwards from the last position asked, or backwards from the block's end for the matches
    that the tail search found near it."""

    def __init__(self, block: Block) -> None:
        self._data = block.data
        self._pos = 0
        self._line = block.first_line
        self._last_line = block.first_line + block.line_count - 1

    def line_of(self, start: int, end: int, from_end: bool = False) -> int:
        """The number of the line from ``start`` (its first byte) to ``end`` (its newline)."""
        data = self._data
        if not from_end:
            self._line += data.count(b"\n", self._pos, start)
        else:
            self._line = self._last_line - data.count(b"\n", end + 1)
        self._pos = start
        return self._line


_FOLDS_TO_ASCII = {"\u212a".encode(): b"k", "\u017f".encode(): b"s"}
"""The two non-ASCII letters that RE2 case-folds to an ASCII letter (Kelvin sign, long s)."""


def fold_for_literals(data: bytes) -> bytes:
    """``data`` as pattern literals are compared with it: ASCII lower-cased, and the two
    non-ASCII letters that case-fold to ASCII letters replaced by them."""
    folded = data.lower()
    for letter, ascii_letter in _FOLDS_TO_ASCII.items():
        if letter in folded:
            folded = folded.replace(letter, ascii_letter)
    return folded


def _default_threads() -> int:
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cpus = os.cpu_count() or 1
    return 2 if cpus > 1 else 1


def _thread_pool() -> ThreadPoolExecutor:
    from concurrent.futures import ThreadPoolExecutor  # only for large blocks

    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="gpudoctor-match")


def _match_pieces(
    pattern_set: re2.Set, view: memoryview, pieces: list[tuple[int, int]]
) -> list[list[int] | None]:
    """The positions of the set's patterns found in each piece of ``view``."""
    return [pattern_set.Match(view[start:end]) for start, end in pieces]


def _pieces(data: bytes) -> Iterator[tuple[int, int]]:
    """``data`` cut into spans of whole lines of about :data:`SET_PIECE` bytes (a line
    longer than that is a piece of its own)."""
    size = len(data)
    start = 0
    while start < size:
        cut = data.find(b"\n", min(start + SET_PIECE, size) - 1)
        end = size if cut < 0 else cut + 1
        yield start, end
        start = end


def _compile_sets(
    specs: Sequence[PatternSpec], indices: Sequence[int]
) -> list[tuple[list[int], re2.Set]]:
    """RE2 sets covering ``specs[i]`` for each ``i`` in ``indices``, each with the spec index
    of its patterns in the order they were added.

    One set holds every pattern when it fits RE2's memory budget (a few thousand patterns);
    past that, the list is halved until each half compiles, so a large user pack costs a few
    passes per block instead of failing.
    """
    pattern_set = re2.Set.SearchSet(regex_options())
    for index in indices:
        spec = specs[index]
        pattern_set.Add(_effective(spec.regex, spec.ignore_case).encode("utf-8"))
    try:
        pattern_set.Compile()
    except re2.error:
        if len(indices) == 1:
            raise ValueError(
                f"pattern {specs[indices[0]].key} is too large for RE2's memory budget"
            ) from None
        middle = len(indices) // 2
        return _compile_sets(specs, indices[:middle]) + _compile_sets(specs, indices[middle:])
    return [(list(indices), pattern_set)]


def asks_line_start(spec: PatternSpec) -> bool:
    """Whether a pattern may only match at the start of a line somewhere (a ``^`` that is
    neither escaped nor a negated class's): a prefix before the line can hide its match."""
    regex = spec.regex
    return "^" in regex and "^" in regex.replace("[^", "").replace("\\^", "")


def _present(specs: Sequence[PatternSpec], data: bytes) -> list[int]:
    """The indices of the ``specs`` whose required literals occur in ``data`` (or are not
    known)."""
    folded = fold_for_literals(data)
    present: dict[bytes, bool] = {}  # catalogue rules share their literals

    def occurs(literal: bytes) -> bool:
        found = present.get(literal)
        if found is None:
            found = present[literal] = literal in folded
        return found

    return [
        index
        for index, spec in enumerate(specs)
        if spec.literals is None or any(occurs(literal) for literal in spec.literals)
    ]


class Scanner:
    """Scans blocks for many patterns at once and collects their events.

    A pattern that saturates is taken out of the sets before the next block (they are
    compiled again without it, at most :data:`MAX_SET_REBUILDS` times per scanner): from then
    on only its tail is searched, in every block, and the set pass no longer pays for a
    pattern that matches every line.
    """

    def __init__(self, patterns: Sequence[PatternSpec], threads: int | None = None) -> None:
        """A scanner for ``patterns``; ``threads`` (1 or 2) is how many threads match a large
        block, by default 2 when this process may run on several CPUs."""
        self._threads = _default_threads() if threads is None else max(1, min(threads, 2))
        self._specs = list(patterns)
        # Compiled one by one only when the set first finds the pattern in a block: most
        # patterns never match, and compiling them all would dominate short runs.
        self._compiled: list[re2._Regexp | None] = [None] * len(self._specs)
        self._sets: list[tuple[list[int], re2.Set]] | None = None  # compiled at the first scan
        self._in_sets = set(range(len(self._specs)))
        self._tail_only: list[int] = []
        """Saturated patterns no longer in the sets: their tail is searched in every block."""
        self._newly_saturated: list[int] = []
        self._rebuilds = 0
        self.hits: dict[str, PatternHits] = {p.key: PatternHits() for p in patterns}

    def fresh(self) -> Scanner:
        """A scanner for the same patterns with no hits yet, sharing this one's compiled sets
        and regexes (compiled first if they were not): one per worker of a parallel scan."""
        if self._rebuilds or self._tail_only or any(h.count for h in self.hits.values()):
            raise RuntimeError("fresh() of a scanner that has scanned")
        self.compile()
        twin = Scanner(self._specs, threads=self._threads)
        twin._sets = self._sets
        twin._in_sets = set(self._in_sets)
        twin._compiled = self._compiled  # filled in as patterns are found; same regexes
        return twin

    def matches(self, key: str, data: bytes) -> bool:
        """Whether the pattern of ``key`` matches somewhere in ``data``."""
        for index, spec in enumerate(self._specs):
            if spec.key == key:
                return self._regex(index).search(data) is not None
        raise KeyError(key)

    @property
    def set_size(self) -> int:
        """How many patterns the sets hold: all of them, or those :meth:`keep_only_present`
        kept."""
        return len(self._in_sets)

    @property
    def compiled(self) -> bool:
        """Whether the sets are compiled (by :meth:`compile` or the first scan)."""
        return self._sets is not None

    def compile(self, threads: int | None = None) -> None:
        """Compile the sets now, for a scanner that will scan many unrelated texts;
        ``threads`` overrides how many threads will match a block (1 for a scanner whose
        twins run in one process per CPU already)."""
        if threads is not None:
            self._threads = max(1, min(threads, 2))
        if self._sets is None:
            self._sets = _compile_sets(self._specs, sorted(self._in_sets)) if self._in_sets else []

    def keep_only_present(self, data: Iterable[bytes]) -> None:
        """Leave out of the sets every pattern whose required literals occur nowhere in
        ``data``, which must hold every byte this scanner will ever scan; call it before the
        first scan.

        Looking for the bundled pack's literals costs about 0.3 ms per KB of data, compiling
        the set of the whole pack about 20 ms: worth it for short logs only, which the caller
        knows (:data:`gpudoctor.pipeline.PREFILTER_BYTES`).
        """
        if self.compiled:
            raise RuntimeError("keep_only_present() after the sets were compiled")
        self._in_sets = set(_present(self._specs, b"".join(data)))

    def for_text(
        self, data: bytes, leave_out: str | None = None, *, line_start_only: bool = False
    ) -> Scanner:
        """A new scanner for only those of this scanner's patterns that may match in
        ``data`` (their required literals occur in it), less those whose key starts with
        ``leave_out`` (and, with ``line_start_only``, less those that never ask for the start
        of a line): a small text scanned on its own costs the set of its few patterns, not the
        hits of the whole pack."""
        specs = [spec for spec in self._specs if not line_start_only or asks_line_start(spec)]
        return Scanner(
            [
                specs[index]
                for index in _present(specs, data)
                if leave_out is None or not specs[index].key.startswith(leave_out)
            ],
            threads=1,
        )

    _origin: Origin | None = None

    def scan(
        self, blocks: Iterable[Block], input_index: int = 0, origin: Origin | None = None
    ) -> None:
        """Scan every block of one input; ``input_index`` orders inputs against each other.

        ``origin`` is where the input comes from when its name does not say (a snapshot's
        kernel log: its node); its lines' own prefixes still win."""
        self._origin = origin
        if not self._specs:
            for _ in blocks:
                pass
            return
        self.compile()
        pool: ThreadPoolExecutor | None = None
        try:
            for block in blocks:
                self._drop_saturated()
                data = block.data
                for index in self._tail_only:
                    self._scan_pattern(index, block, input_index, 0, len(data))
                if pool is None and self._threads > 1 and len(data) >= THREAD_MIN_BYTES:
                    pool = _thread_pool()
                # Per pattern, the first and last piece where the set found it.
                spans: dict[int, list[int]] = {}
                pieces = list(_pieces(data))
                threaded = pool if self._threads > 1 else None
                for indices, found in self._match_sets(memoryview(data), pieces, threaded):
                    for (start, end), positions in zip(pieces, found, strict=True):
                        for position in positions or ():
                            span = spans.setdefault(indices[position], [start, end])
                            span[1] = end
                for index, (start, end) in spans.items():
                    self._scan_pattern(index, block, input_index, start, end)
        finally:
            if pool is not None:
                pool.shutdown()

    def _match_sets(
        self,
        view: memoryview,
        pieces: list[tuple[int, int]],
        pool: ThreadPoolExecutor | None,
    ) -> Iterator[tuple[list[int], list[list[int] | None]]]:
        """Each set's spec indices and what it found in each piece; with ``pool``, a large
        block's second half of pieces is matched in the pool's thread meanwhile."""
        large = bool(pieces) and pieces[-1][1] - pieces[0][0] >= THREAD_MIN_BYTES
        for indices, pattern_set in self._sets or ():
            if pool is None or not large or len(pieces) < 2:
                yield indices, _match_pieces(pattern_set, view, pieces)
                continue
            middle = len(pieces) // 2
            try:
                second = pool.submit(_match_pieces, pattern_set, view, pieces[middle:])
            except RuntimeError:  # no thread can be started (a process or pid limit reached)
                self._threads = 1
                yield indices, _match_pieces(pattern_set, view, pieces)
                continue
            yield indices, _match_pieces(pattern_set, view, pieces[:middle]) + second.result()

    def _drop_saturated(self) -> None:
        """Compile the sets again without the patterns that saturated since the last time.

        Done before a block rather than after one, so that an input that ends with the block
        where a pattern saturated never pays for the compilation."""
        if not self._newly_saturated or self._rebuilds >= MAX_SET_REBUILDS:
            return
        newly = self._newly_saturated
        self._newly_saturated = []
        self._rebuilds += 1
        self._in_sets.difference_update(newly)
        self._tail_only.extend(newly)
        self._sets = _compile_sets(self._specs, sorted(self._in_sets)) if self._in_sets else []

    def _regex(self, index: int) -> re2._Regexp:
        regex = self._compiled[index]
        if regex is None:
            spec = self._specs[index]
            regex = self._compiled[index] = compile_pattern(
                spec.regex, ignore_case=spec.ignore_case
            )
        return regex

    def _scan_pattern(
        self, index: int, block: Block, input_index: int, pos: int, limit: int
    ) -> None:
        """Every matching line of one pattern in ``block.data[pos:limit]`` (whole lines), or
        only the last ones once the pattern is saturated. Events are made only for the lines
        that are kept (the first :data:`KEEP_FIRST` overall and the last :data:`KEEP_LAST`);
        the others are counted."""
        spec = self._specs[index]
        regex = self._regex(index)
        hits = self.hits[spec.key]
        data = block.data
        cursor = _LineCursor(block)
        pending: deque[tuple[re2._Match, int, int, bool]] = deque(maxlen=KEEP_LAST)
        found: list[tuple[re2._Match, int, int]] | None = None
        # ``pos < len(data)``, not ``< limit``: a pattern is marked saturated as soon as it
        # has SATURATION matches and the block goes on, wherever its last piece ends.
        while pos < len(data):
            if hits.count >= SATURATION:
                if not hits.saturated:
                    hits.saturated = True
                    self._newly_saturated.append(index)
                found = self._tail_matches(regex, data, pos, limit)
                break
            line = _line_match(regex, data, pos, limit)
            if line is None:
                break
            self._keep(hits, pending, cursor, spec, block, input_index, *line, from_end=False)
            pos = line[2] + 1
        for match, start, end in found or ():
            self._keep(hits, pending, cursor, spec, block, input_index, match, start, end, True)
        for match, start, end, from_end in pending:
            line_no = cursor.line_of(start, end, from_end)
            hits.last.append(self._event(spec, match, block, line_no, data[start:end], input_index))

    def _keep(
        self,
        hits: PatternHits,
        pending: deque[tuple[re2._Match, int, int, bool]],
        cursor: _LineCursor,
        spec: PatternSpec,
        block: Block,
        input_index: int,
        match: re2._Match,
        start: int,
        end: int,
        from_end: bool,
    ) -> None:
        """Count one matching line: its event is made now while the first ones are being
        kept, else the line waits in ``pending`` (the block's last lines) and is counted."""
        if len(hits.first) < KEEP_FIRST:
            line_no = cursor.line_of(start, end, from_end)
            raw = block.data[start:end]
            hits.add(self._event(spec, match, block, line_no, raw, input_index))
        else:
            hits.count += 1
            hits.note_origin(self._line_origin(block.data[start : start + PREFIX_BYTES], block))
            pending.append((match, start, end, from_end))

    def _line_origin(self, head: bytes, block: Block) -> Origin:
        return self._origin_of(decode(head.split(b"\n", 1)[0]), block.source)

    def _origin_of(self, text: str, source: str) -> Origin:
        origin = origin_of(text, source)
        return origin if self._origin is None else origin.over(self._origin)

    @staticmethod
    def _tail_matches(
        regex: re2._Regexp, data: bytes, pos: int, limit: int
    ) -> list[tuple[re2._Match, int, int]]:
        """For a pattern past :data:`SATURATION`: the last matches in ``data[pos:limit]``,
        found by searching windows backwards from ``limit``, so that a pattern matching every
        line costs no more than one that matches a few."""
        window_end = limit
        window = TAIL_WINDOW
        found: list[tuple[re2._Match, int, int]] = []
        while window_end > pos and len(found) < KEEP_LAST:
            window_start = max(pos, data.rfind(b"\n", pos, max(pos, window_end - window)) + 1)
            window = min(window * 4, MAX_TAIL_WINDOW)
            in_window = []
            cursor = window_start
            while cursor < window_end:
                match = _line_match(regex, data, cursor, window_end)
                if match is None:
                    break
                in_window.append(match)
                cursor = match[2] + 1
            found = in_window + found
            window_end = window_start
        return found[-KEEP_LAST:]

    def _event(
        self,
        spec: PatternSpec,
        match: re2._Match,
        block: Block,
        line_no: int,
        raw: bytes,
        idx: int,
    ) -> Event:
        """The event of one kept line: its captures, text, rank, node and time."""
        captures: dict[str, CaptureValue] = {}
        for name, value in match.groupdict().items():
            if value is None:
                continue
            key = name.decode() if isinstance(name, bytes) else name
            kind = spec.captures.get(key, CaptureType.STR)
            converted = convert_capture(decode(value).strip(), kind)
            if converted is not None:
                captures[key] = converted
        text = decode(raw).rstrip()
        if len(text) > MAX_EVIDENCE_CHARS:
            text = text[: MAX_EVIDENCE_CHARS - 1] + "…"
        origin = self._origin_of(text, block.source)
        return Event(
            spec.key,
            block.source,
            line_no,
            text,
            captures,
            (idx, line_no),
            rank=origin.rank,
            node=origin.node,
            time=line_time(text),
        )
