"""bench/throughput.py: the rule pack's RE2 patterns as POSIX ERE for the grep baseline."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "bench"))

import throughput
from gpudoctor.rulebook.book import load_rulebook


@pytest.mark.parametrize(
    ("re2", "posix"),
    [
        (r"[\w.\- ]{1,40}", "[[:alnum:]_. -]{1,40}"),
        (r"(?P<size>\d+?) MiB", "([0-9]+) MiB"),
        (r"(?i:cuda) error", "(cuda) error"),
        (r"(?i)out of memory", "out of memory"),
        (r"Check failed: [^\n]*", "Check failed: .*"),
        (r"\[[^\]]+\]", r"\[[^]]+\]"),
        (r"[\d.]+x??", "[0-9.]+x?"),
    ],
)
def test_re2_syntax_grep_lacks_is_rewritten(re2: str, posix: str) -> None:
    assert throughput.ere(re2) == posix


def test_grep_accepts_every_translated_pattern_of_the_pack(tmp_path: Path) -> None:
    grep = shutil.which("grep")
    assert grep is not None, "the throughput bench compares against grep"
    patterns = tmp_path / "pack.ere"
    rules = load_rulebook().rules
    patterns.write_text("\n".join(throughput.ere(p.regex) for r in rules for p in r.patterns))
    log = tmp_path / "train.log"
    log.write_text("RuntimeError: CUDA error: out of memory\nstep 10 loss 0.31\n")
    done = subprocess.run(
        [grep, "-E", "-c", "-f", str(patterns), str(log)],
        capture_output=True,
        text=True,
        env={"LC_ALL": "C"},
    )
    assert (done.returncode, done.stderr) == (0, "")


def test_the_benches_name_the_tree_they_time(tmp_path: Path) -> None:
    """A run meant for another tree (PYTHONPATH=OLD/src) says it times that tree."""
    fake = tmp_path / "old" / "src"
    (fake / "gpudoctor").mkdir(parents=True)
    (fake / "gpudoctor" / "__init__.py").write_text("")
    bench = Path(__file__).parent.parent / "bench"
    code = "import _common; print(_common.measured_source())"
    found = subprocess.run(
        [sys.executable, "-c", code],
        env={"PYTHONPATH": f"{fake}:{bench}", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert found.stdout.strip() == str(fake.resolve())
