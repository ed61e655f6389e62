"""Start-up cost: ``gpudoctor explain`` and ``gpudoctor check`` next to the bare interpreter
start and to ``python -m torch.utils.collect_env``.

Usage: ``python bench/startup.py [--repeat 15] [--repeat-env 3] [--baseline OLD/src]``.
Times, in the same run and with the same interpreter (median of the repeats):

* ``python -c pass``, ``python -c "import click"`` (the floor of any click program),
  ``gpudoctor --version``, ``gpudoctor explain`` on examples/logs/pytorch-oom.log and on a
  5 KB log, and ``gpudoctor check``, each with its ratio to ``python -c pass``: ``explain``
  targets at most 6x. The commands run in turns (one of each, then again), so that a change
  in the machine's load touches them all alike, and with a warm rule cache in a private
  temporary directory;
* ``gpudoctor check`` and ``python -m torch.utils.collect_env`` (which imports torch and runs
  nvidia-smi, pip and conda), and their ratio: ``check`` targets at most 0.05x collect_env.

The comparison with collect_env needs torch importable by this interpreter; without it the
comparison is skipped with a hint (``pip install torch==2.13.0`` installs a CPU wheel).
gpudoctor's modules are byte-compiled first, as an installed wheel is, so that the figures do
not include compiling sources. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import compileall
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import gpudoctor_command, measured_source, run_timed, write_training_log

CHECK_TARGET = 0.05
EXPLAIN_TARGET = 6.0
OOM_LOG = Path(__file__).resolve().parents[1] / "examples" / "logs" / "pytorch-oom.log"


def _precompile(source: Path | None = None) -> None:
    """Byte-compile gpudoctor (the importable one, or the one under ``source``)."""
    if source is not None:
        compileall.compile_dir(source, quiet=1)
        return
    spec = importlib.util.find_spec("gpudoctor")
    for location in (spec.submodule_search_locations or []) if spec else []:
        compileall.compile_dir(location, quiet=1)


def _run_in_turns(
    commands: dict[str, tuple[list[str], dict[str, str]]], repeat: int
) -> dict[str, float]:
    """Median wall time in seconds of each command (argv, environment), run one after the
    other ``repeat`` times."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    for command, env in commands.values():  # warm the file-system and rule caches
        subprocess.run(command, env=env, **quiet)  # type: ignore[call-overload]
    for _ in range(repeat):
        for name, (command, env) in commands.items():
            start = time.perf_counter()
            subprocess.run(command, env=env, **quiet)  # type: ignore[call-overload]
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}


def _startup(repeat: int, baseline: Path | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "small.log"
        write_training_log(log, 5_000)
        env = {**os.environ, "GPUDOCTOR_CACHE_DIR": str(Path(tmp) / "cache")}
        # An installed package runs from compiled bytecode; with PYTHONDONTWRITEBYTECODE set,
        # every edited module would be compiled again on each run and measured as start-up.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        size = log.stat().st_size // 1000
        gpudoctor = gpudoctor_command()
        commands = {
            "python -c pass": ([sys.executable, "-c", "pass"], env),
            'python -c "import click"': ([sys.executable, "-c", "import click"], env),
            "gpudoctor --version": ([*gpudoctor, "--version"], env),
            "gpudoctor explain pytorch-oom.log": ([*gpudoctor, "explain", str(OOM_LOG)], env),
            f"gpudoctor explain small.log ({size} KB)": ([*gpudoctor, "explain", str(log)], env),
            "gpudoctor check": ([*gpudoctor, "check", "--format", "json"], env),
        }
        if baseline is not None:
            _precompile(baseline)
            old = {**env, "PYTHONPATH": str(baseline), "GPUDOCTOR_CACHE_DIR": f"{tmp}/old"}
            command = [sys.executable, "-m", "gpudoctor", "explain"]
            commands["baseline explain pytorch-oom.log"] = ([*command, str(OOM_LOG)], old)
            commands[f"baseline explain small.log ({size} KB)"] = ([*command, str(log)], old)
        medians = _run_in_turns(commands, repeat)
    bare = medians["python -c pass"]
    for name, seconds in medians.items():
        print(f"{name:36} {seconds * 1000:7.1f} ms  {seconds / bare:5.1f}x python -c pass")
    ratio = medians["gpudoctor explain pytorch-oom.log"] / bare
    verdict = "within" if ratio <= EXPLAIN_TARGET else "ABOVE"
    target = f"{verdict} the {EXPLAIN_TARGET:g}x target"
    print(f"explain: {ratio:.1f}x the bare interpreter start ({target})")


def _check_vs_collect_env(repeat: int, repeat_env: int) -> None:
    check_cmd = [*gpudoctor_command(), "check", "--format", "json"]
    run_timed(check_cmd, 1)  # warm the file-system cache
    check, code = run_timed(check_cmd, repeat)
    print(f"gpudoctor check:          {check * 1000:6.1f} ms (exit {code}; 0/1 = ran)")
    if code not in (0, 1, 3):
        print("  (gpudoctor check did not run: is the check command registered?)")
    if importlib.util.find_spec("torch") is None:
        print(
            "torch.utils.collect_env: skipped, torch is not importable by "
            f"{sys.executable}; install it for the comparison: "
            f"{sys.executable} -m pip install torch==2.13.0 (a local CPU wheel on this machine)"
        )
        return
    env_cmd = [sys.executable, "-m", "torch.utils.collect_env"]
    run_timed(env_cmd, 1)
    collect_env, env_code = run_timed(env_cmd, repeat_env)
    print(f"python -m torch.utils.collect_env: {collect_env * 1000:6.1f} ms (exit {env_code})")
    ratio = check / collect_env
    verdict = "within" if ratio <= CHECK_TARGET else "ABOVE"
    print(f"ratio: check is {ratio:.3f}x collect_env ({verdict} the {CHECK_TARGET}x target)")


def main() -> None:
    """Run the commands repeatedly and print the medians and the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument(
        "--baseline",
        type=Path,
        metavar="SRC",
        help="also time another gpudoctor's source tree (e.g. a git worktree's src/) in turns",
    )
    parser.add_argument(
        "--repeat-env", type=int, default=3, help="repeats of collect_env (seconds each)"
    )
    args = parser.parse_args()
    print(f"gpudoctor from {measured_source()}")
    _precompile()
    _startup(args.repeat, args.baseline)
    _check_vs_collect_env(args.repeat, args.repeat_env)


if __name__ == "__main__":
    main()
