"""The command line when things go wrong: its own bugs, output errors, odd inputs and options.

Some of these need the real process (a closed pipe, a full disk, piped standard input), so
they run ``python -m gpudoctor`` in a subprocess; the rest use click's CliRunner.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpudoctor import pipeline
from gpudoctor.cli import main
from gpudoctor.cli.app import EXIT_INTERNAL, EXIT_NO_INPUT, EXIT_USAGE
from gpudoctor.cli.output import terminal_columns, use_colour, write_file
from gpudoctor.errors import OutputError

ROOT = Path(__file__).parents[1]
OOM_LOG = ROOT / "examples" / "logs" / "pytorch-oom.log"
DDP_LOG = ROOT / "examples" / "logs" / "ddp" / "rank0.log"
SNAPSHOT = Path(__file__).parent / "snapshot" / "fixtures" / "healthy-8xh100.json"


def gpudoctor(
    *args: str, stdin: int | None = subprocess.DEVNULL, stdout: int | None = subprocess.PIPE
) -> subprocess.CompletedProcess[bytes]:
    """Run the real entry point, as the installed ``gpudoctor`` script does."""
    env = {k: v for k, v in os.environ.items() if k not in ("GPUDOCTOR_DEBUG", "NO_COLOR")}
    return subprocess.run(
        [sys.executable, "-m", "gpudoctor", *args],
        stdin=stdin,
        stdout=stdout,
        stderr=subprocess.PIPE,
        env=env,
        timeout=60,
        check=False,
    )


# --- gpudoctor's own failures: exit 4, one line, the traceback on request -------------------


def _explode(*args: object, **kwargs: object) -> None:
    raise RuntimeError("the engine fell over")


@pytest.fixture
def broken_core(monkeypatch: pytest.MonkeyPatch) -> None:
    import gpudoctor.cli.explain

    monkeypatch.setattr(gpudoctor.cli.explain, "diagnose", _explode)


@pytest.mark.usefixtures("broken_core")
def test_internal_error_is_one_line_and_exit_4(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GPUDOCTOR_DEBUG", raising=False)
    result = CliRunner().invoke(main, ["explain", str(OOM_LOG)])
    assert result.exit_code == EXIT_INTERNAL == 4
    assert result.stderr == (
        "gpudoctor: internal error: RuntimeError: the engine fell over; "
        "run with -v for the traceback\n"
    )
    assert result.stdout == ""


@pytest.mark.usefixtures("broken_core")
@pytest.mark.parametrize(
    ("args", "env"),
    [(["-v"], {}), (["--verbose"], {}), ([], {"GPUDOCTOR_DEBUG": "1"})],
)
def test_internal_error_traceback_on_request(args: list[str], env: dict[str, str]) -> None:
    result = CliRunner().invoke(main, ["explain", *args, str(OOM_LOG)], env=env)
    assert result.exit_code == 4
    assert "Traceback (most recent call last)" in result.stderr
    assert "_explode" in result.stderr
    assert result.stderr.rstrip().endswith("run with -v for the traceback")


def test_internal_error_through_the_real_entry_point(tmp_path: Path) -> None:
    # The real process: patch the core before the CLI imports it, then run the entry point.
    code = (
        "import sys, gpudoctor.pipeline as p\n"
        "def boom(*a, **k): raise KeyError('x')\n"
        "p.diagnose = boom\n"
        "from gpudoctor.cli import run\n"
        f"run(['explain', {str(OOM_LOG)!r}])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, timeout=60, check=False
    )
    assert done.returncode == 4
    assert done.stderr.decode().splitlines() == [
        "gpudoctor: internal error: KeyError: 'x'; run with -v for the traceback"
    ]


def test_a_finding_is_still_exit_1_not_4() -> None:
    result = CliRunner().invoke(main, ["explain", "--fail-on", "error", str(OOM_LOG)])
    assert result.exit_code == 1
    assert "internal error" not in result.stderr


# --- output errors ------------------------------------------------------------------------


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs Linux's /dev/full")
@pytest.mark.parametrize("command", [["explain", str(OOM_LOG)], ["rules", "list"]])
def test_full_disk_is_one_line_and_exit_2(command: list[str]) -> None:
    with open("/dev/full", "wb") as full:
        done = gpudoctor(*command, stdout=full.fileno())
    assert done.returncode == EXIT_USAGE
    assert done.stderr.decode() == "gpudoctor: cannot write the output: No space left on device\n"


def test_closed_pipe_is_silent() -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before gpudoctor writes (like `| head -0`)
    try:
        done = gpudoctor("explain", "--format", "json", str(OOM_LOG), stdout=write_end)
    finally:
        os.close(write_end)
    assert done.stderr == b""
    assert done.returncode == 141


def test_head_reads_a_long_report_and_gpudoctor_stays_quiet() -> None:
    script = (
        f"{sys.executable} -m gpudoctor explain -v --format json {DDP_LOG} {OOM_LOG} | head -c 10"
    )
    done = subprocess.run(
        ["bash", "-o", "pipefail", "-c", script], capture_output=True, timeout=60, check=False
    )
    assert done.stdout == b'{\n  "schem'
    assert b"Traceback" not in done.stderr
    assert b"Exception ignored" not in done.stderr


def test_closed_standard_output_is_one_line() -> None:
    script = f"{sys.executable} -m gpudoctor explain {OOM_LOG} >&-"
    done = subprocess.run(["bash", "-c", script], capture_output=True, timeout=60, check=False)
    assert done.returncode == EXIT_USAGE
    assert done.stderr == b"gpudoctor: cannot write the output: standard output is closed\n"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs Linux's /dev/full")
def test_unwritable_standard_error_still_gives_the_exit_code() -> None:
    script = f"{sys.executable} -m gpudoctor explain {OOM_LOG} >/dev/full 2>/dev/full"
    done = subprocess.run(["bash", "-c", script], capture_output=True, timeout=60, check=False)
    assert done.returncode == EXIT_USAGE


def test_ctrl_c_is_exit_130_without_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    import gpudoctor.cli.explain

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(gpudoctor.cli.explain, "diagnose", interrupted)
    result = CliRunner().invoke(main, ["explain", str(OOM_LOG)])
    assert result.exit_code == 130
    assert "Traceback" not in result.stderr
    assert "internal error" not in result.stderr


# --- writing -o FILE whole or not at all ----------------------------------------------------


def test_write_file_replaces_whole_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "snap.json"
    target.write_text("old")
    write_file(target, "new content\n")
    assert target.read_text() == "new content\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["snap.json"]
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask


def test_write_file_failing_midway_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "snap.json"
    target.write_text("the previous snapshot")

    def no_space(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", no_space)
    with pytest.raises(OutputError, match="No space left on device"):
        write_file(target, "x" * 100_000)
    assert target.read_text() == "the previous snapshot"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["snap.json"]


def test_snapshot_to_a_missing_directory_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUDOCTOR_FAKE_NVML", "healthy-8xh100")
    target = tmp_path / "no" / "such" / "dir" / "snap.json"
    result = CliRunner().invoke(main, ["snapshot", "-o", str(target)])
    assert result.exit_code == EXIT_USAGE
    assert result.stderr.startswith(f"gpudoctor: cannot write {target}: ")
    assert "Traceback" not in result.stderr


def test_snapshot_crash_leaves_no_half_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUDOCTOR_FAKE_NVML", "healthy-8xh100")
    target = tmp_path / "snap.json"

    def crash(*args: object) -> None:
        raise RuntimeError("power cut")

    monkeypatch.setattr(os, "replace", crash)
    result = CliRunner().invoke(main, ["snapshot", "-o", str(target)])
    assert result.exit_code == 4
    assert list(tmp_path.iterdir()) == []


# --- colour -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flag", "env", "tty", "expected"),
    [
        (None, {}, True, True),
        (None, {}, False, False),
        (None, {"NO_COLOR": "1"}, True, False),
        (None, {"NO_COLOR": ""}, True, True),  # no-color.org: only a non-empty value counts
        (None, {"TERM": "dumb"}, True, False),
        (None, {"TERM": "xterm-256color"}, True, True),
        (True, {"TERM": "dumb", "NO_COLOR": "1"}, False, True),  # --color forces
        (False, {}, True, False),
    ],
)
def test_use_colour(flag: bool | None, env: dict[str, str], tty: bool, expected: bool) -> None:
    assert use_colour(flag, env, to_terminal=tty) is expected


def test_forced_colour_with_dumb_terminal() -> None:
    result = CliRunner().invoke(main, ["explain", "--color", str(OOM_LOG)], env={"TERM": "dumb"})
    assert "\x1b[" in result.stdout


def test_colour_never_reaches_machine_formats() -> None:
    result = CliRunner().invoke(main, ["explain", "--color", "--format", "json", str(OOM_LOG)])
    assert "\x1b[" not in result.stdout
    assert json.loads(result.stdout)["schema"] == "gpudoctor.report/1"


# --- empty inputs ---------------------------------------------------------------------------


def test_empty_file_says_so_and_exits_3(tmp_path: Path) -> None:
    empty = tmp_path / "train.log"
    empty.write_bytes(b"")
    result = CliRunner().invoke(main, ["explain", str(empty)])
    assert result.exit_code == EXIT_NO_INPUT
    assert f"gpudoctor: warning: {empty}: the input was empty" in result.stderr
    assert "the input was empty; there is nothing to explain" in result.stderr
    assert result.stdout == ""


def test_empty_stdin_says_so_and_exits_3() -> None:
    done = gpudoctor("explain", stdin=subprocess.PIPE)  # closed at once: nothing in it
    assert done.returncode == 3
    assert b"<stdin>: the input was empty" in done.stderr


def test_one_empty_input_among_good_ones_is_a_warning(tmp_path: Path) -> None:
    empty = tmp_path / "rank1.log"
    empty.write_bytes(b"")
    result = CliRunner().invoke(main, ["explain", "--format", "json", str(OOM_LOG), str(empty)])
    assert result.exit_code == 0
    assert "the input was empty" in result.stderr
    inputs = json.loads(result.stdout)["inputs"]
    assert inputs[1] == {
        "kind": "log",
        "name": str(empty),
        "lines": 0,
        "bytes": 0,
        "warnings": [f"{empty}: the input was empty"],
    }


def test_empty_and_unreadable_inputs_exit_3(tmp_path: Path) -> None:
    empty = tmp_path / "a.log"
    empty.write_bytes(b"")
    result = CliRunner().invoke(main, ["explain", str(empty), str(tmp_path / "gone.log")])
    assert result.exit_code == 3
    assert "none of the inputs could be read or held any text" in result.stderr


def test_empty_log_with_a_snapshot_still_reports(tmp_path: Path) -> None:
    empty = tmp_path / "a.log"
    empty.write_bytes(b"")
    args = ["explain", "--snapshot", str(SNAPSHOT), "--format", "json", str(empty)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0
    assert "the input was empty" in result.stderr
    assert json.loads(result.stdout)["inputs"][0]["bytes"] == 0


# --- diagnose without logs ------------------------------------------------------------------


def test_diagnose_without_logs_suggests_log_option() -> None:
    result = CliRunner().invoke(main, ["diagnose", "--snapshot", str(SNAPSHOT), "--no-color"])
    assert result.exit_code == 0, result.output
    assert "no logs given" in result.stderr
    assert "--log 'logs/**/*.log'" in result.stderr
    assert "gpudoctor diagnose --log FILE" in result.stdout
    assert "run `gpudoctor diagnose`" not in result.stdout


def test_diagnose_with_logs_gives_no_hint() -> None:
    args = ["diagnose", "--snapshot", str(SNAPSHOT), "--log", str(OOM_LOG)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0
    assert "no logs given" not in result.stderr


# --- options and commands -------------------------------------------------------------------


@pytest.mark.parametrize("value", ["nan", "NaN", "-0.1", "1.5", "inf"])
def test_min_confidence_out_of_range_is_refused(value: str) -> None:
    result = CliRunner().invoke(main, ["explain", "--min-confidence", value, str(OOM_LOG)])
    assert result.exit_code == 2
    assert "--min-confidence" in result.stderr


def test_min_confidence_bounds_are_accepted() -> None:
    for value in ("0", "1", "0.75"):
        args = ["explain", "--min-confidence", value, str(OOM_LOG)]
        assert CliRunner().invoke(main, args).exit_code == 0


@pytest.mark.parametrize("name", ["train.log", "logs/rank0.log", str(OOM_LOG)])
def test_a_file_name_as_command_points_to_explain(name: str) -> None:
    result = CliRunner().invoke(main, [name])
    assert result.exit_code == 2
    assert f"not a command; to explain a log, run: gpudoctor explain {name}" in result.stderr


def test_a_misspelt_command_is_still_no_such_command() -> None:
    result = CliRunner().invoke(main, ["explian"])
    assert result.exit_code == 2
    assert "No such command 'explian'" in result.stderr


def test_a_log_piped_into_bare_gpudoctor_points_to_explain() -> None:
    with open(OOM_LOG, "rb") as log:
        done = gpudoctor(stdin=log.fileno())
    assert done.returncode == 2
    assert b"| gpudoctor explain" in done.stderr
    assert done.stdout == b""


def test_bare_gpudoctor_on_no_input_prints_help() -> None:
    done = gpudoctor()  # stdin is /dev/null: not a pipe
    assert b"Commands:" in done.stdout + done.stderr
    assert b"| gpudoctor explain" not in done.stderr


def test_the_core_call_is_what_explain_uses(monkeypatch: pytest.MonkeyPatch) -> None:
    """``explain`` does no work of its own: it passes what it opened to pipeline.diagnose."""
    import gpudoctor.cli.explain

    seen: list[tuple[list[str], str]] = []

    def spy(book, logs, snapshot=None, snapshot_name="", observed_facts=None):  # type: ignore[no-untyped-def]
        seen.append(([log.name for log in logs], snapshot_name))
        return pipeline.diagnose(book, logs, snapshot, snapshot_name, observed_facts)

    monkeypatch.setattr(gpudoctor.cli.explain, "diagnose", spy)
    result = CliRunner().invoke(main, ["explain", "--snapshot", str(SNAPSHOT), str(OOM_LOG)])
    assert result.exit_code == 0
    assert seen == [([str(OOM_LOG)], str(SNAPSHOT))]


def test_internal_error_text_is_escaped(monkeypatch: pytest.MonkeyPatch) -> None:
    import gpudoctor.cli.explain

    def quoting(*args: object, **kwargs: object) -> None:
        raise ValueError("bad line \x1b]0;pwned\x07 here")

    monkeypatch.setattr(gpudoctor.cli.explain, "diagnose", quoting)
    result = CliRunner().invoke(main, ["explain", str(OOM_LOG)])
    assert result.exit_code == 4
    assert "\x1b" not in result.stderr
    assert "bad line \\x1b]0;pwned\\x07 here" in result.stderr


def test_a_file_name_too_long_is_an_unreadable_input_not_a_crash(tmp_path: Path) -> None:
    name = str(tmp_path / ("a" * 300))
    result = CliRunner().invoke(main, ["explain", name])
    assert result.exit_code == EXIT_NO_INPUT
    assert "File name too long" in result.stderr
    assert "internal error" not in result.stderr


def test_a_huge_since_is_a_usage_error_not_an_overflow() -> None:
    result = CliRunner().invoke(main, ["diagnose", "--since", "99999999999999999999d"])
    assert result.exit_code == EXIT_USAGE
    assert "longer than 3650 days" in result.stderr


@pytest.mark.parametrize(
    ("env", "expected"),
    [({"COLUMNS": "87"}, 87), ({"COLUMNS": "wide"}, 100), ({"COLUMNS": "-3"}, 100), ({}, 100)],
)
def test_terminal_columns_without_a_terminal(
    env: dict[str, str], expected: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Standard output is not a terminal under pytest: $COLUMNS when valid, else the fallback."""
    with open(os.devnull, "w") as devnull:
        monkeypatch.setattr(sys, "__stdout__", devnull)
        assert terminal_columns(env) == expected
