"""Python tracebacks: the terminal exception, its chain, worker re-raises, user vs. library frames.

The scanner finds, in its single pass, the lines a traceback is made of — the header
``Traceback (most recent call last):``, the frame lines ``File "...", line N, in F``, the
exception line ``pkg.mod.SomeError: message``, the chain markers ("The above exception was
the direct cause of the following exception:", "During handling of the above exception,
another exception occurred:") and the worker markers ("Caught X in DataLoader worker process
N.", multiprocessing's ``RemoteTraceback``) — whatever prefix a launcher put before them
(``[rank3]:``, srun's ``3:``, torchrun's ``[default0]:``, glog's ``E1203 ...]``, timestamps).
:func:`facts` rebuilds the last tracebacks from the kept events (the first and last five of
each pattern, in reading order), which is enough for the terminal exception and its innermost
frames.

=========================  =========  =======================================================
``traceback_count``        int        "Traceback (most recent call last)" headers (worker
                                      "Original Traceback" ones not counted twice)
``traceback_frame_count``  int        frame lines (``File "...", line N, in f``), with or
                                      without a header before them: a paste often drops it
``exception_type``         str        the terminal exception, full dotted name: the last
                                      exception line after the last header (or the type an
                                      IPython header names, when the paste ends before it)
``exception_name``         str        its last component ("OutOfMemoryError")
``exception_message``      str        its message (may be empty)
``exception_chain``        list[str]  linked exceptions, from the one that reached the top
                                      to the original cause
``exception_cause_type``   str        the original cause, when the chain has more than one
``exception_in_worker``    bool       raised in a DataLoader worker or a multiprocessing pool
``worker_exception_type``  str        the type the worker raised
``user_frame``             str        innermost frame in the user's code, "path:line in func"
``exception_from_library`` bool       the innermost frame is in a library
``exception_has_traceback`` bool      a header came before the terminal exception (false: a
                                      lone "SomeError: message" line)
``exception_at_end``       bool       nothing says the job went on: no success line ("Training
                                      complete", "Done", "exit code 0") after the terminal
                                      exception
``exception_gpu_like``     bool       the type or message names the GPU stack (CUDA, cuDNN,
                                      NCCL, an accelerator, out of memory)
=========================  =========  =======================================================

A traceback behind "Exception ignored in: ..." (CPython's report of an exception it could not
raise: in a ``__del__``, a weakref callback, an atexit hook; 3.13 words it "Exception ignored
while calling deallocator ...") ended nothing, so it is never the terminal exception: the
destructors that fail while an interpreter shuts down after the real error print a cascade of
them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from gpudoctor.facts.spec import FactSpec
from gpudoctor.logs.scanner import CaptureType, Event, PatternHits, PatternSpec

# What launchers and loggers put before a traceback's lines: "[rank3]:", "3: " (srun
# --label), "[default0]:" (torchrun), "[node7:3]" (torchrun --log-line-prefix-template),
# "(pid=42)" / "(Worker pid=42, ip=10.0.0.1)" (Ray), "node-3: " (pdsh, DeepSpeed), glog
# "E1203 10:11:12.123456 4242 file.cc:12]", timestamps with an optional level, Markdown
# quotes, ExceptionGroup's "| ".
_GLOG = r"\[?[EWIF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+\s+\S+:\d+\]"
_STAMP = (
    r"\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\]?"
    r"(?:\s*[-|:]?\s*\[?(?:ERROR|CRITICAL|FATAL|WARNING|INFO|DEBUG)\]?\s*[-|:]?)?"
)
_ONE_PREFIX = (
    r"\[(?:rank|default)?\d+\]:|\[[A-Za-z][\w.-]*:\d+\]:?|\d{1,4}:|"
    r"\(\w*\s*pid=\d+(?:, ip=[\d.]+)?\)|"
    r"[A-Za-z][\w.-]*\d:\s|" + _GLOG + "|" + _STAMP + r"|>|\|"
)
PREFIX = r"^(?:\s*(?:" + _ONE_PREFIX + r"))*\s*"
"""Line start and the prefixes launchers and loggers add; used by every line pattern here."""

_CLASS = (
    r"(?:[A-Za-z_]\w*\.)*(?:[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt|Warning|Failure|Fault)"
    r"|Exception|StopIteration|StopAsyncIteration|KeyboardInterrupt|SystemExit|GeneratorExit"
    r"|BaseException)|(?:[a-z_]\w*\.)+[A-Z]\w*"
)
# "ray.exceptions.RayTaskError(ValueError): ..." names the wrapped type in parentheses.
TYPE = r"(?P<type>(?:" + _CLASS + r")(?:\(\w+\))?)"

_S = CaptureType.STR
_I = CaptureType.INT

SUCCESS_KEY = "facts/tb_success"
"""The pattern of a line that says the job went on or finished ("Training complete", "Done")."""

PATTERNS: tuple[PatternSpec, ...] = (
    # IPython names the exception before the header, padded to the header's column:
    # "ValueError                                Traceback (most recent call last)"
    PatternSpec(
        "facts/tb_header",
        r"(?:^\s*" + TYPE + r"\s{2,})?(?P<original>Original )?Traceback \(most recent call last\)",
        captures={"type": _S},
    ),
    PatternSpec(
        "facts/tb_frame",
        r"\bFile \"(?P<path>[^\"]+)(?:\", line (?P<lineno>\d+)(?:, in (?P<func>\S.*?))?\s*$|$)",
        captures={"path": _S, "lineno": _I, "func": _S},
    ),
    # IPython 8: "File ~/env/lib/python3.11/site-packages/x.py:12, in f(a)", "Cell In[3], line 5"
    PatternSpec(
        "facts/tb_frame_ipython",
        r"^\s*(?:File (?P<path>[^\s\"]+):(?P<lineno>\d+), in (?P<func>\S.*?)|"
        r"(?P<cell>Cell In\[\d+\]), line (?P<cellline>\d+))\s*$",
        captures={"path": _S, "lineno": _I, "func": _S, "cell": _S, "cellline": _I},
    ),
    PatternSpec(
        "facts/tb_exception",
        PREFIX + TYPE + r"(?::(?:\s(?P<message>.*?))?)?\s*$",
        captures={"type": _S, "message": _S},
    ),
    # The same line behind a logging library's own prefix, which no fixed list of prefixes can
    # name: "(EngineCore_0 pid=42) ERROR 05-14 10:00:01 [core.py:700] KeyError: 'x'",
    # "2024-05-14 10:00:01,123 - train - ERROR - ValueError: bad". The level word (ERROR,
    # CRITICAL, FATAL) must come first, and the type right after a "] ", " - " or ": " separator.
    PatternSpec(
        "facts/tb_exception_logged",
        r"\b(?:ERROR|CRITICAL|FATAL)\b.*?(?:\] |\s-\s|: |\|\s)"
        + TYPE
        + r"(?::(?:\s(?P<message>.*?))?)?\s*$",
        captures={"type": _S, "message": _S},
    ),
    # A traceback pasted on one line (newlines lost): the last "SomeError: message" after a frame.
    PatternSpec(
        "facts/tb_inline",
        r"File \"[^\"]+\", line \d+.*\s" + TYPE + r": (?P<message>.*?)\s*$",
        captures={"type": _S, "message": _S},
    ),
    PatternSpec(
        "facts/tb_chain",
        r"The above exception was the direct cause of the following exception:|"
        r"During handling of the above exception, another exception occurred:",
    ),
    # CPython's unraisable-exception report (Python/errors.c: "Exception ignored in: %R",
    # "Exception ignored while calling deallocator %R", "... in atexit callback %R"); the
    # traceback that follows it did not end the program
    PatternSpec("facts/tb_ignored", PREFIX + r"Exception ignored (?:in|while|on|during)\b"),
    PatternSpec(
        "facts/tb_worker",
        r"Caught (?P<wtype>[\w.]+) in DataLoader worker process (?P<worker>\d+)|"
        r"(?P<remote>RemoteTraceback)\b",
        captures={"wtype": _S, "worker": _I},
    ),
    # What says the job went on: a success line. (Progress lines would say it too, but a
    # pattern matching every training line costs the scanner a sixth of its throughput.)
    PatternSpec(
        SUCCESS_KEY,
        r"(?i)(?:^\W*(?:all )?(?:done|finished|complete|completed)\W*$|"
        r"(?:training|optimi[sz]ation) (?:is )?(?:complete|completed|finished|done)\b|"
        r"(?:finished|completed) (?:training|optimi[sz]ation)\b|"
        r"(?:completed|finished) successfully|\bexit(?:ed)? (?:with )?(?:code|status):? 0\b|"
        # nvidia-smi --gpu-reset
        r"\bwas successfully reset\b)",
    ),
)

FACTS: tuple[FactSpec, ...] = (
    FactSpec("traceback_count", "int", "-", "log structure",
             "How many Python tracebacks the log holds."),
    FactSpec("traceback_frame_count", "int", "-", "log structure",
             "How many traceback frame lines ('File \"...\", line N, in f') the log holds, "
             "with or without a 'Traceback (most recent call last)' header before them."),
    FactSpec("exception_type", "str", "-", "log structure",
             "The terminal exception's full dotted type (the last exception after the last "
             "traceback header), e.g. torch.OutOfMemoryError."),
    FactSpec("exception_name", "str", "-", "log structure",
             "The last component of exception_type, e.g. OutOfMemoryError."),
    FactSpec("exception_message", "str", "-", "log structure",
             "The terminal exception's message (may be empty)."),
    FactSpec("exception_chain", "list[str]", "-", "log structure",
             "Linked exceptions (chained causes, worker re-raises), from the one that reached "
             "the top to the original cause."),
    FactSpec("exception_cause_type", "str", "-", "log structure",
             "The original cause at the end of exception_chain, when it has more than one."),
    FactSpec("exception_in_worker", "bool", "-", "log structure",
             "The exception was raised in a DataLoader worker or a multiprocessing pool and "
             "re-raised in the main process."),
    FactSpec("worker_exception_type", "str", "-", "log structure",
             "The exception type the worker raised."),
    FactSpec("user_frame", "str", "-", "log structure",
             "The innermost traceback frame in the user's code, 'path:line in func'."),
    FactSpec("exception_from_library", "bool", "-", "log structure",
             "The innermost frame of the terminal traceback is in a library (site-packages, "
             "the standard library, a frozen module)."),
    FactSpec("exception_has_traceback", "bool", "-", "log structure",
             "A traceback header came before the terminal exception."),
    FactSpec("exception_at_end", "bool", "-", "log structure",
             "Nothing after the terminal exception says the job went on (no success line "
             "such as 'Training complete', 'Done' or 'exit code 0')."),
    FactSpec("exception_gpu_like", "bool", "-", "log structure",
             "The terminal exception's type or message names the GPU stack (CUDA, cuDNN, "
             "NCCL, an accelerator, out of memory)."),
)  # fmt: skip

_LIBRARY = re.compile(
    r"site-packages|dist-packages|[/\\]lib[/\\]python\d|[/\\]Lib[/\\]|<frozen |^<string>$|"
    r"[/\\](?:\.?venv|envs|miniconda\d?|anaconda\d?|conda)[/\\].*[/\\]lib|"
    r"^/usr/lib/|^/usr/local/lib/|[/\\]python\d\.\d+[/\\]"
)
_GPU_LIKE = re.compile(
    r"(?i)cuda|cudnn|cublas|cufft|curand|cusolver|cusparse|nccl|nvrtc|nvml|accelerator|"
    r"\bgpu\b|out of memory|outofmemory|\bOOM\b|device-side|illegal memory|\bhip\b|rocm"
)


def fact_names() -> frozenset[str]:
    """Every fact name this reader can produce."""
    return frozenset(spec.name for spec in FACTS)


def is_library_path(path: str) -> bool:
    """A frame's file belongs to an installed library or the standard library."""
    return bool(_LIBRARY.search(path))


@dataclass
class _Block:
    """One traceback: header, frames, exception line."""

    header: Event | None
    frames: list[Event] = field(default_factory=list)
    exception: Event | None = None
    link: str = ""  # "chain": it follows a chain marker; "original": a worker's re-raise
    worker: bool = False
    ignored: bool = False  # an unraisable exception's report ("Exception ignored in: ...")


def _events(hits: Mapping[str, PatternHits], *keys: str) -> list[Event]:
    found = [e for key in keys if (h := hits.get(key)) for e in h.events()]
    return sorted(found, key=lambda e: e.order)


def _frame_text(event: Event) -> str:
    caps = event.captures
    if "cell" in caps:
        return f"{caps['cell']}:{caps.get('cellline', '?')}"
    text = f"{caps.get('path', '?')}:{caps.get('lineno', '?')}"
    return f"{text} in {caps['func']}" if "func" in caps else text


def _frame_is_library(event: Event) -> bool:
    path = event.captures.get("path")
    return isinstance(path, str) and is_library_path(path)


def _blocks(events: Sequence[Event]) -> tuple[list[_Block], list[Event]]:
    """Tracebacks rebuilt from events in reading order, and exception lines outside any."""
    blocks: list[_Block] = []
    loose: list[Event] = []
    pending_link = ""
    pending_worker = pending_ignored = False
    current: _Block | None = None

    def opened(block: _Block) -> _Block:
        nonlocal pending_link, pending_ignored
        # a cause chained to an ignored exception is part of the same report
        chained_to_ignored = block.link == "chain" and bool(blocks) and blocks[-1].ignored
        block.ignored = pending_ignored or chained_to_ignored
        blocks.append(block)
        pending_link, pending_ignored = "", False
        return block

    for event in events:
        key = event.key
        if key == "facts/tb_header":
            original = "original" in event.captures
            current = opened(_Block(event, link="original" if original else pending_link))
            current.worker = pending_worker or original
            pending_worker = False
        elif key in ("facts/tb_frame", "facts/tb_frame_ipython"):
            if current is None or current.exception is not None:
                current = opened(_Block(None, link=pending_link))
            current.frames.append(event)
        elif key in ("facts/tb_exception", "facts/tb_exception_logged", "facts/tb_inline"):
            if current is not None and current.exception is None:
                current.exception = event
            elif pending_ignored:  # "Exception ignored in: ..." straight before the exception
                current = opened(_Block(None))
                current.exception = event
            else:
                loose.append(event)
        elif key == "facts/tb_chain":
            pending_link = "chain"
            current = None
        elif key == "facts/tb_worker":
            pending_worker = True
        elif key == "facts/tb_ignored":
            pending_ignored = True
            current = None
    return blocks, loose


def _name_cut_notebook_traceback(blocks: list[_Block]) -> None:
    """A notebook's traceback cut before its exception line still says what was raised: IPython
    puts the type in the header, which then stands for the exception (with no message)."""
    last = blocks[-1] if blocks else None
    if last is None or last.exception is not None or last.header is None:
        return
    if "type" in last.header.captures:
        last.exception = last.header


def _chain(blocks: list[_Block], terminal: int) -> list[_Block]:
    """The blocks linked to the terminal one, from the outermost to the original cause."""
    start = terminal
    while start > 0 and blocks[start].link:
        start -= 1
    ordered = [blocks[start]]
    for block in blocks[start + 1 : terminal + 1]:
        if block.link == "chain":
            ordered.insert(0, block)
        else:
            ordered.append(block)
    return [b for b in ordered if b.exception is not None]


def last_success_lines(hits: Mapping[str, PatternHits]) -> dict[int, tuple[int, int]]:
    """For each input, where its last success line is ("Training complete", "Done", "exit code
    0"): the engine reads any failure before it as one the job went on from."""
    last: dict[int, tuple[int, int]] = {}
    for event in _events(hits, SUCCESS_KEY):
        source = event.order[0]
        last[source] = max(last.get(source, event.order), event.order)
    return last


def _went_on(hits: Mapping[str, PatternHits], terminal: Event) -> bool:
    """Whether a success line after the terminal exception says the job carried on."""
    source = terminal.order[0]
    return any(
        e.order[0] == source and e.order > terminal.order for e in _events(hits, SUCCESS_KEY)
    )


def _type_of(event: Event) -> str:
    return str(event.captures.get("type", ""))


_TRACEBACK_KEYS = (
    "facts/tb_header",
    "facts/tb_frame",
    "facts/tb_frame_ipython",
    "facts/tb_exception",
    "facts/tb_exception_logged",
    "facts/tb_inline",
    "facts/tb_chain",
    "facts/tb_worker",
    "facts/tb_ignored",
)


def ignored_report_lines(hits: Mapping[str, PatternHits]) -> set[tuple[int, int]]:
    """Where the lines of "Exception ignored in: ..." reports are (input, line): the marker,
    and the traceback of an exception the interpreter printed and went on from."""
    markers = hits.get("facts/tb_ignored")
    if markers is None:
        return set()
    blocks, _ = _blocks(_events(hits, *_TRACEBACK_KEYS))
    lines = {e.order for e in markers.events()}
    for block in blocks:
        if block.ignored:
            lines.update(e.order for e in (block.header, *block.frames, block.exception) if e)
    return lines


def uncaught_exceptions(hits: Mapping[str, PatternHits]) -> list[Event]:
    """The exception lines that ended a traceback (not an "Exception ignored" report), in
    reading order."""
    blocks, _ = _blocks(_events(hits, *_TRACEBACK_KEYS))
    return [b.exception for b in blocks if b.exception is not None and not b.ignored]


def facts(
    hits: Mapping[str, PatternHits], input_lines: Sequence[int | None] = ()
) -> dict[str, object]:
    """Facts about the log's tracebacks (see the module doc for each name)."""
    events = _events(hits, *_TRACEBACK_KEYS)
    if not events:
        return {}
    blocks, loose = _blocks(events)
    headers = hits.get("facts/tb_header")
    originals = sum(1 for b in blocks if b.header is not None and "original" in b.header.captures)
    found: dict[str, object] = {}
    count = (headers.count if headers else 0) - originals
    found["traceback_count"] = max(count, 0)
    found["traceback_frame_count"] = sum(
        h.count for key in ("facts/tb_frame", "facts/tb_frame_ipython") if (h := hits.get(key))
    )
    _name_cut_notebook_traceback(blocks)
    with_exception = [i for i, b in enumerate(blocks) if b.exception is not None and not b.ignored]
    terminal_event: Event | None = None
    chain: list[_Block] = []
    if with_exception:
        index = with_exception[-1]
        terminal_block = blocks[index]
        terminal_event = terminal_block.exception
        chain = _chain(blocks, index)
        found["exception_has_traceback"] = terminal_block.header is not None or bool(
            terminal_block.frames
        )
    else:
        candidates = [e for e in loose if not _type_of(e).endswith("Warning")]
        if candidates:
            terminal_event = candidates[-1]
            found["exception_has_traceback"] = False
    if terminal_event is None:
        return found
    type_ = _type_of(terminal_event)
    message = str(terminal_event.captures.get("message", ""))
    found["exception_type"] = type_
    found["exception_name"] = type_.split("(", 1)[0].rsplit(".", 1)[-1]
    found["exception_message"] = message
    found["exception_gpu_like"] = bool(_GPU_LIKE.search(type_) or _GPU_LIKE.search(message))
    found["exception_at_end"] = not _went_on(hits, terminal_event)
    types = [_type_of(b.exception) for b in chain if b.exception is not None] or [type_]
    found["exception_chain"] = types
    if len(types) > 1:
        found["exception_cause_type"] = types[-1]
    workers = [b for b in chain if b.worker and b.exception is not None]
    caught = [
        e
        for e in _events(hits, "facts/tb_worker")
        if "wtype" in e.captures and e.order < terminal_event.order
    ]
    found["exception_in_worker"] = bool(workers)
    if workers and workers[-1].exception is not None:
        found["worker_exception_type"] = _type_of(workers[-1].exception)
    elif workers and caught:
        found["worker_exception_type"] = str(caught[-1].captures["wtype"])
    frames = [f for b in reversed(chain) for f in reversed(b.frames)]
    # The terminal block's own frames first (innermost first), then the linked ones.
    if chain:
        terminal_frames = [
            f for b in chain if b.exception is terminal_event for f in reversed(b.frames)
        ]
        frames = terminal_frames + [f for f in frames if f not in terminal_frames]
    if frames:
        found["exception_from_library"] = _frame_is_library(frames[0])
        user = next((f for f in frames if not _frame_is_library(f)), None)
        if user is not None:
            found["user_frame"] = _frame_text(user)
    return found
