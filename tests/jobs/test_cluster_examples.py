"""The cluster recipes in examples/cluster/ are valid, and gpudoctor reads what they write."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from gpudoctor.pipeline import LogInput, diagnose
from gpudoctor.rulebook.book import load_rulebook

sys.path.insert(0, str(Path(__file__).parent))
import joblogs

CLUSTER = Path(__file__).parents[2] / "examples" / "cluster"


@pytest.mark.parametrize("name", ["slurm-epilog.sh", "train.sbatch"])
def test_shell_scripts_parse(name: str) -> None:
    bash = shutil.which("bash")
    if bash is None:
        pytest.fail("bash is needed to check the examples")
    result = subprocess.run([bash, "-n", str(CLUSTER / name)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    ("name", "kinds"),
    [("pytorchjob.yaml", ["PyTorchJob"]), ("indexed-job.yaml", ["Service", "Job"])],
)
def test_kubernetes_recipes_parse_and_snapshot_after_the_run(name: str, kinds: list[str]) -> None:
    text = (CLUSTER / name).read_text(encoding="utf-8")
    assert [d["kind"] for d in yaml.safe_load_all(text)] == kinds
    assert 'TORCHELASTIC_LOG_PREFIX_TEMPLATE="[$pod:\\${rank}]:"' in text
    assert re.search(r"gpudoctor snapshot -o \S+/snapshots/\$pod\.json", text)
    assert "exit $status" in text


def test_the_recipes_prefix_gives_node_and_rank(tmp_path: Path) -> None:
    """The lines the Kubernetes recipes write: "[{pod}:{rank}]:" before every worker line."""
    files = []
    for node, ranks in (("pretrain-master-0", range(0, 4)), ("pretrain-worker-1", range(4, 8))):
        lines = []
        for rank in ranks:
            own = (
                joblogs.cuda_oom(rank, gpu=rank % 4)
                if rank == 6
                else joblogs.watchdog_timeout(rank)
            )
            lines += [f"[{node}:{rank}]:{line}" for line in own]
        files.append(joblogs.write(tmp_path / "logs" / f"{node}.log", lines))
    report = diagnose(load_rulebook(()), [LogInput.from_path(f) for f in files])
    first = report.diagnoses[0]
    assert (first.cause, first.ranks, first.nodes) == ("gpu_oom", (6,), ("pretrain-worker-1",))
    assert report.job is not None
    assert report.job.nodes == ("pretrain-master-0", "pretrain-worker-1")
    assert report.job.ranks == tuple(range(8))
