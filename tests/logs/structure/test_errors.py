"""The error-lines reader: the last lines that read as an error, and what a log ended on."""

from __future__ import annotations

import io

from gpudoctor.logs.reader import InputStats, read_blocks
from gpudoctor.logs.scanner import PatternHits, Scanner
from gpudoctor.logs.structure import errors, tracebacks


def hits_of(text: str) -> dict[str, PatternHits]:
    scanner = Scanner([*tracebacks.PATTERNS, *errors.PATTERNS])
    scanner.scan(read_blocks(io.BytesIO(text.encode()), InputStats(name="t")))
    return scanner.hits


def test_keeps_the_last_three_error_lines_in_order() -> None:
    text = "\n".join(
        [
            "step 1 ok",
            "solver: cannot open checkpoint /data/ck1.bin",
            "solver: error: retry 1 failed",
            "step 2 ok",
            "FATAL: device context lost on ordinal 0",
            "runner: aborting job 4411",
        ]
    )
    assert errors.facts(hits_of(text)) == {
        "error_lines": [
            "solver: error: retry 1 failed",
            "FATAL: device context lost on ordinal 0",
            "runner: aborting job 4411",
        ]
    }


def test_error_lines_are_kept_without_a_tools_prefix() -> None:
    text = "\n".join(
        [
            "May  4 08:00:01 gpu-node-7 solver[4821]: FATAL: device context lost on ordinal 0",
            "trainer-1  | runner: aborting job 4411",
        ]
    )
    assert errors.facts(hits_of(text))["error_lines"] == [
        "FATAL: device context lost on ordinal 0",
        "runner: aborting job 4411",
    ]


def test_warnings_and_informational_lines_are_not_errors() -> None:
    text = "\n".join(
        [
            "UserWarning: loading failed for optional plugin, continuing",
            "W1203 10:00:01.5 881 loader.cc:64] Could not load dynamic library 'libx.so.7'",
            "2026-01-02 10:00:02: I tensorflow/core/util/port.cc:113] round-off errors possible",
            "[W socket.cpp:601] [c10d] The client socket cannot be initialized to connect",
        ]
    )
    assert errors.facts(hits_of(text)) == {}


def test_a_log_without_error_words_has_no_error_lines() -> None:
    assert errors.facts(hits_of("epoch 1 loss 0.5\nepoch 2 loss 0.4\n")) == {}
    assert errors.terminal_error(hits_of("epoch 1 loss 0.5\n")) == []


def test_terminal_error_is_the_last_exception_line_of_a_traceback() -> None:
    text = "\n".join(
        [
            "Traceback (most recent call last):",
            '  File "/srv/fit.py", line 9, in <module>',
            "    main()",
            "RuntimeError: the solver failed to converge after 40 steps",
        ]
    )
    [event] = errors.terminal_error(hits_of(text))
    assert event.line == 4


def test_an_error_line_after_the_traceback_ends_the_log_instead() -> None:
    text = "\n".join(
        [
            "Traceback (most recent call last):",
            '  File "/srv/fit.py", line 9, in <module>',
            "ValueError: bad shape",
            "launcher: fatal: worker 3 lost its device, aborting",
        ]
    )
    assert [e.line for e in errors.terminal_error(hits_of(text))] == [4]


def test_words_that_say_something_failed_without_saying_error() -> None:
    text = "\n".join(
        [
            "[42] Call to cuModuleLoadData results in UNKNOWN_CUDA_ERROR",
            "cuda out of memory. tried to allocate 20.00 mib",
            "The quantization method fp8 is not supported for the current GPU.",
            "Not enough free memory on device 1 to run the search",
            "FAIL: test_gemm",
        ]
    )
    assert len(errors.facts(hits_of(text))["error_lines"]) == errors.MAX_ERROR_LINES
    for line in text.splitlines():
        assert errors.facts(hits_of(line))["error_lines"] == [line]


def test_the_log_ended_on_an_error_line() -> None:
    text = "solver: 812 blocks\nsolver: factorisation of block 77 failed\n"
    assert errors.facts(hits_of(text), [2])["error_at_end"] is True


def test_an_error_line_far_from_the_end_is_not_what_the_log_ended_on() -> None:
    text = "solver: factorisation of block 77 failed\n" + "solver: block done\n" * 9
    assert errors.facts(hits_of(text), [10])["error_at_end"] is False


def test_an_error_line_followed_by_success_is_not_what_the_log_ended_on() -> None:
    text = "solver: factorisation of block 77 failed, retrying\nTraining complete\n"
    assert errors.facts(hits_of(text), [2])["error_at_end"] is False


def test_without_line_counts_the_end_is_not_known() -> None:
    assert "error_at_end" not in errors.facts(hits_of("fatal: no table\n"))


def test_a_warning_type_is_not_the_terminal_exception() -> None:
    text = "\n".join(
        [
            "UserWarning: the loader failed to pin memory",
            "engine: fatal error: kernel image not found for sm_90",
        ]
    )
    assert [e.line for e in errors.terminal_error(hits_of(text))] == [2]


def test_other_runtimes_crash_reports_are_named() -> None:
    cases = {
        "terminate called after throwing an instance of 'std::runtime_error'": "c++",
        'Exception in thread "main" java.lang.IllegalStateException: no device': "java",
        "Unhandled exception. System.InvalidOperationException: queue closed": ".net",
        "panic: runtime error: invalid memory address or nil pointer dereference": "go",
        "thread 'main' panicked at src/infer.rs:88:14:": "rust",
        "#4  0x00007f0c2a1d3e90 in ncclGroupEnd () from /opt/lib/libnccl.so.2": "native",
        "[Error] [carb.crashreporter-breakpad.plugin] [crash] A crash has occurred.": "native",
        "[crash] Crash detected in pid 7712 thread 7730": "native",
    }
    for line, runtime in cases.items():
        assert errors.facts(hits_of(line + "\n")).get("runtime_crash") == runtime, line
    assert "runtime_crash" not in errors.facts(hits_of("the panic button was not pressed\n"))
    assert "runtime_crash" not in errors.facts(hits_of("gcc: fatal error: no input files\n"))
    assert "runtime_crash" not in errors.facts(hits_of("#3 in the queue: job 0x1f2e in progress\n"))
    assert "runtime_crash" not in errors.facts(hits_of("[crash] reporter enabled, dumps in /tmp\n"))


def test_an_ignored_exception_after_the_traceback_is_not_what_the_log_ended_on() -> None:
    text = "\n".join(
        [
            "Traceback (most recent call last):",
            '  File "/srv/fit.py", line 9, in <module>',
            "KeyError: 'decoder.weight'",
            "Exception ignored in: <function Session.__del__ at 0x7f2a10c4e8b0>",
            "Traceback (most recent call last):",
            '  File "/opt/env/lib/python3.12/site-packages/kit/session.py", line 88, in __del__',
            "AttributeError: 'NoneType' object has no attribute 'close'",
        ]
    )
    assert [e.line for e in errors.terminal_error(hits_of(text))] == [3]
