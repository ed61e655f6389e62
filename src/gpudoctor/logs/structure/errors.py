"""Error lines: the last lines of a log that read as an error, whatever program printed them.

A crash that no rule recognises still leaves words behind: a C++ program's ``error: ...``, a
library's ``FATAL: ...``, a launcher's "failed", a message with no traceback around it. This
reader keeps the lines that carry one of a few error words (error, fatal, failed, abort,
exception, panic, cannot, unable to, out of memory, not supported, ...) so that what a log
ended on can be named (``fallback-error-line``) and compared with known signatures
(:mod:`gpudoctor.similar`) when no rule fired.

=====================  =========  ===================================================
``error_lines``        list[str]  the last (at most three) such lines, in reading order,
                                  warnings and process-ending reports left out
``error_at_end``       bool       the last of them is among the last :data:`END_LINES`
                                  lines of its input and no success line or training
                                  progress follows it (what the log ended on, not an
                                  error the job went on after)
``runtime_crash``      str        the runtime whose own crash report the log holds:
                                  ``c++`` (std::terminate), ``java``, ``.net``, ``go``
                                  (panic), ``rust`` (panic), or ``native``: a native
                                  stack as gdb prints it (a debugged crash, a core file)
                                  or a crash reporter's report (Omniverse Kit's)
=====================  =========  ===================================================

:func:`terminal_error` gives the lines a log ended on as events: the terminal exception of
the last traceback (or the error lines after it; "Exception ignored in: ..." reports left
out), else these error lines.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from gpudoctor.facts.spec import FactSpec
from gpudoctor.logs.prefixes import unprefixed
from gpudoctor.logs.scanner import Event, PatternHits, PatternSpec
from gpudoctor.logs.structure.series import last_progress_lines
from gpudoctor.logs.structure.tracebacks import ignored_report_lines, last_success_lines

MAX_ERROR_LINES = 3
END_LINES = 5
"""An error line this close to the end of its input is what the log ended on."""
MAX_LINE_CHARS = 300
"""A kept line is cut to this many characters: the words that say what failed come first."""

# "error" anywhere in a word: error codes and enum names carry it inside one
# (UNKNOWN_CUDA_ERROR, cudaErrorNoDevice, ERROR_OUT_OF_MEMORY).
_ERROR_WORDS = (
    r"error|\b(?:fatal|fail(?:s|ed|ure|ing)?|abort(?:ed|ing)?|exception|panic|"
    r"segmentation fault|core dumped|cannot|could not|unable to|out of memory|"
    r"not enough (?:\w+ )?memory|(?:not |un)supported)\b"
)

# How other runtimes report an uncaught error, as their own sources print it: libstdc++'s
# verbose terminate handler, the JVM's default uncaught-exception handler, .NET's unhandled
# exception report, Go's and Rust's panics.
_RUNTIME_CRASHES: dict[str, tuple[str, str]] = {
    "facts/crash_cpp": ("c++", r"terminate called after throwing an instance of '"),
    "facts/crash_java": ("java", r"^Exception in thread \"[^\"]*\" [\w.$]+(?:Exception|Error)\b"),
    "facts/crash_dotnet": (".net", r"\bUnhandled [Ee]xception(?:\. |: )System\.\w+"),
    "facts/crash_go": ("go", r"^panic: \S|^goroutine \d+ \[running\]:"),
    "facts/crash_rust": ("rust", r"thread '[^']*' panicked at "),
    # a native stack as gdb prints it (bt, a core file): "#3  0x00007f2c41a3b1e2 in f () from x.so"
    "facts/crash_native": ("native", r"^\s*#\d{1,3}\s+0x[0-9a-fA-F]{4,16} in [\w:~<(]"),
    # Omniverse Kit's Breakpad crash reporter (Isaac Sim, Isaac Lab and other Kit apps):
    # "[carb.crashreporter-breakpad.plugin] [crash] A crash has occurred.", "[crash] Crash
    # detected in pid 4242 thread 4250"
    "facts/crash_kit": (
        "native",
        r"\[crash\] (?:A crash has occurred\b|Crash detected in pid \d+)",
    ),
}
"""Scanner key → (runtime, how it reports an uncaught error)."""

PATTERNS: tuple[PatternSpec, ...] = (
    PatternSpec("facts/error_line", _ERROR_WORDS, ignore_case=True),
    *(PatternSpec(key, regex) for key, (_, regex) in _RUNTIME_CRASHES.items()),
)

FACTS: tuple[FactSpec, ...] = (
    FactSpec("error_lines", "list[str]", "-", "log structure",
             "The last (at most three) lines that carry an error word (error, fatal, failed, "
             "abort, exception, panic, cannot, unable to, out of memory, not supported), "
             "warnings and process-ending reports left out."),
    FactSpec("error_at_end", "bool", "-", "log structure",
             "The last error line is among the last five lines of its input and no success "
             "line or training progress follows it: the log ended on it (not said when the "
             "input's length is not known)."),
    FactSpec("runtime_crash", "str", "-", "log structure",
             "The runtime whose own report of an uncaught error the log holds: c++ "
             "(std::terminate), java, .net, go or rust (a panic); native for a native stack "
             "as gdb prints it (a debugged crash, a core file) or a crash reporter's report."),
)  # fmt: skip

# Warnings and informational lines: the word "warning", glog / TensorFlow / c10 severity
# letters ("W1203 10:00:00", "I tensorflow/x.cc:12]", "[W NNPACK.cpp:80]"), and a table row
# that says there was none ("Uncorrectable Error : 0", "Remapping Failure Occurred : No").
_NOT_AN_ERROR = re.compile(
    r"(?i)warn(?:ing)?s?\b|\s[:=|]\s*(?:0|no|none|n/a|false|disabled)\s*\|?\s*$|"
    r"(?-i:\b[IW]\d{4} \d|(?:^|[\s:\[])[IW] \S+\.(?:cc|cpp|cu|h|py):\d+\]|\[[IW] )"
)
_EXCEPTION_KEYS = ("facts/tb_exception", "facts/tb_exception_logged", "facts/tb_inline")


def fact_names() -> frozenset[str]:
    """Every fact name this reader can produce."""
    return frozenset(spec.name for spec in FACTS)


_ENDING_PREFIX = "facts/end_"
"""The process-endings reader's keys (:mod:`gpudoctor.logs.structure.endings`)."""


def _error_events(
    hits: Mapping[str, PatternHits], left_out: set[tuple[int, int]] | None = None
) -> list[Event]:
    """The last error lines, warnings, process-ending reports and "Exception ignored" reports
    left out (a launcher's "exited with exit code 1" says that something failed, not what).

    Only the pattern's last kept lines are looked at when it matched more lines than it
    keeps: the first ones kept are not the log's last error lines."""
    found = hits.get("facts/error_line")
    if found is None:
        return []
    events = found.events()
    if found.count > len(events):
        events = list(found.last)
    kept = [e for e in events if not _NOT_AN_ERROR.search(e.text)]
    if kept:  # the lines to leave out, looked up only when there is something to drop
        left_out = _left_out_lines(hits) if left_out is None else left_out
        kept = [e for e in kept if e.order not in left_out]
    return kept[-MAX_ERROR_LINES:]


def _left_out_lines(hits: Mapping[str, PatternHits]) -> set[tuple[int, int]]:
    """Where the lines that report a process ending ("CalledProcessError: ... returned non-zero
    exit status 1") or an ignored exception ("Exception ignored in: ...") are (input, line)."""
    endings = {
        e.order for key, h in hits.items() if key.startswith(_ENDING_PREFIX) for e in h.events()
    }
    return endings | ignored_report_lines(hits)


def crash_report(hits: Mapping[str, PatternHits]) -> tuple[Event, str] | None:
    """The last report of another runtime's crash in the log, with the runtime's name."""
    crashes = [
        (event, runtime)
        for key, (runtime, _) in _RUNTIME_CRASHES.items()
        if key in hits
        for event in hits[key].events()
    ]
    return max(crashes, key=lambda found: found[0].order, default=None)


def near_end(event: Event, input_lines: Sequence[int | None]) -> bool:
    """Whether ``event`` is among the last :data:`END_LINES` lines of its input
    (``input_lines`` gives each input's line count; an unknown count says no)."""
    index = event.order[0]
    total = input_lines[index] if 0 <= index < len(input_lines) else None
    return total is not None and total - event.line < END_LINES


def _went_on(hits: Mapping[str, PatternHits], event: Event) -> bool:
    """Whether a success line or training progress after ``event`` (in its input) says the
    job went on: a short log can end a few lines after an error it survived."""
    source = event.order[0]
    after = [last.get(source) for last in (last_success_lines(hits), last_progress_lines(hits))]
    return any(order is not None and order > event.order for order in after)


def facts(
    hits: Mapping[str, PatternHits], input_lines: Sequence[int | None] = ()
) -> dict[str, object]:
    """The log's last error lines, whether the log ended on them, and the runtime that
    reported a crash (see the module doc)."""
    found: dict[str, object] = {}
    events = _error_events(hits)
    if events:
        # the words of the error, not a tool's prefix before them (a syslog host, compose's
        # service): the fallbacks quote them
        found["error_lines"] = [unprefixed(e.text).strip()[:MAX_LINE_CHARS] for e in events]
        if input_lines:
            found["error_at_end"] = near_end(events[-1], input_lines) and not _went_on(
                hits, events[-1]
            )
    crash = crash_report(hits)
    if crash is not None:
        found["runtime_crash"] = crash[1]
    return found


def terminal_error(hits: Mapping[str, PatternHits]) -> list[Event]:
    """The lines the log ended on: the last exception line of a traceback when there is one,
    or the error lines that follow it in the same input (process-ending reports left out);
    without a traceback, the last error lines."""
    left_out = _left_out_lines(hits)
    exceptions = sorted(
        (
            e
            for key in _EXCEPTION_KEYS
            if key in hits
            for e in hits[key].events()
            if not str(e.captures.get("type", "")).endswith("Warning") and e.order not in left_out
        ),
        key=lambda e: e.order,
    )
    errors = _error_events(hits, left_out)
    if exceptions:
        last = exceptions[-1]
        later = [e for e in errors if e.order[0] == last.order[0] and e.order > last.order]
        return later or [last]
    return errors
