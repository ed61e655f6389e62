"""Snapshots of several nodes read as one job: facts keep their node, a fault outranks."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from click.testing import CliRunner

from gpudoctor.cli import main
from gpudoctor.jobs.snapshots import merge_facts

sys.path.insert(0, str(Path(__file__).parent))
import joblogs

FIXTURES = Path(__file__).parents[1] / "snapshot" / "fixtures"
HEALTHY = FIXTURES / "healthy-8xh100.json"  # host dgx-h100-07
GPU_LOST = FIXTURES / "gpu-lost.json"  # host gpu-node-12, Xid 79 in its kernel log


def test_a_fact_that_says_something_wins_and_keeps_its_node() -> None:
    merged, nodes = merge_facts(
        [
            ("a", {"xid_codes": [], "oom_kills": 0, "driver_version": "550.54", "gone": None}),
            ("b", {"xid_codes": [79], "oom_kills": 0, "driver_version": "535.1", "gone": None}),
            ("c", {"xid_codes": [48], "oom_kills": 2, "driver_version": "550.54"}),
        ]
    )
    assert merged == {"xid_codes": [79], "oom_kills": 2, "driver_version": "550.54", "gone": None}
    assert nodes == {"xid_codes": "b", "oom_kills": "c", "driver_version": "a"}


def test_facts_all_nodes_agree_on_have_no_node() -> None:
    merged, nodes = merge_facts([("a", {"gpu_count": 8}), ("b", {"gpu_count": 8})])
    assert merged == {"gpu_count": 8}
    assert nodes == {}


def test_gpu_fault_on_one_node_outranks_timeouts_on_another(tmp_path: Path) -> None:
    files = [
        str(joblogs.write(tmp_path / f"rank{r}.log", joblogs.watchdog_timeout(r))) for r in range(8)
    ]
    args = ["explain", "--format", "json", "--snapshot", str(HEALTHY), "--snapshot", str(GPU_LOST)]
    result = CliRunner().invoke(main, [*args, *files])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    first = report["diagnoses"][0]
    assert first["cause"] == "xid_hardware"
    assert first["nodes"] == ["gpu-node-12"]
    timeouts = next(d for d in report["diagnoses"] if d["rule"] == "nccl-watchdog-timeout")
    assert timeouts["ranks"] == list(range(8))
    assert timeouts["consequence_of"] == first["rule"]
    assert report["job"]["first_failure"]["node"] == "gpu-node-12"
    assert set(report["job"]["nodes"]) == {"dgx-h100-07", "gpu-node-12"}
    assert report["fact_nodes"]["xid_codes"] == "gpu-node-12"
    assert report["fact_nodes"]["gpu_fallen_off_bus"] == "gpu-node-12"
    assert report["facts"]["gpu_fallen_off_bus"] is True  # the healthy node does not hide it
    kernels = [i["name"] for i in report["inputs"] if i["kind"] == "kernel"]
    assert any("gpu-node-12" in name for name in kernels)
    assert [i["name"] for i in report["inputs"] if i["kind"] == "snapshot"] == [
        str(HEALTHY),
        str(GPU_LOST),
    ]


def test_text_names_the_node_of_the_fault(tmp_path: Path) -> None:
    files = [
        str(joblogs.write(tmp_path / f"rank{r}.log", joblogs.watchdog_timeout(r))) for r in range(4)
    ]
    args = ["explain", "--no-color", "--width", "100", "--snapshot", str(HEALTHY)]
    result = CliRunner().invoke(main, [*args, "--snapshot", str(GPU_LOST), *files])
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert "2 snapshots" in text
    assert "4 ranks: A NCCL collective timed out" in text
    assert "a consequence of node gpu-node-12's failure" in text


def test_a_directory_or_a_glob_stands_for_its_snapshots(tmp_path: Path) -> None:
    snapshots = tmp_path / "snapshots"
    snapshots.mkdir()
    for source in (HEALTHY, GPU_LOST):
        (snapshots / source.name).write_bytes(source.read_bytes())
    log = str(joblogs.write(tmp_path / "logs" / "rank0.log", joblogs.watchdog_timeout(0)))
    for given in (str(snapshots), str(snapshots / "*.json")):
        result = CliRunner().invoke(main, ["explain", "--format", "json", "--snapshot", given, log])
        assert result.exit_code == 0, result.output
        report = json.loads(result.stdout)
        assert len([i for i in report["inputs"] if i["kind"] == "snapshot"]) == 2
        assert report["diagnoses"][0]["cause"] == "xid_hardware"


def test_a_snapshot_glob_that_matches_nothing_is_a_usage_error(tmp_path: Path) -> None:
    log = str(joblogs.write(tmp_path / "rank0.log", joblogs.watchdog_timeout(0)))
    result = CliRunner().invoke(main, ["explain", "--snapshot", str(tmp_path / "*.json"), log])
    assert result.exit_code == 2
    assert "no snapshot file matches" in result.stderr


def test_markdown_redacts_the_nodes_of_a_job(tmp_path: Path) -> None:
    files = [
        str(joblogs.write(tmp_path / f"rank{r}.log", joblogs.watchdog_timeout(r))) for r in range(4)
    ]
    args = ["explain", "--format", "markdown", "--snapshot", str(HEALTHY)]
    result = CliRunner().invoke(main, [*args, "--snapshot", str(GPU_LOST), *files])
    assert result.exit_code == 0, result.output
    assert "gpu-node-12" not in result.stdout
    assert "dgx-h100-07" not in result.stdout
    assert "a consequence of node &lt;host>'s failure" in result.stdout
    unredacted = CliRunner().invoke(
        main, [*args, "--no-redact", "--snapshot", str(GPU_LOST), *files]
    )
    assert "a consequence of node gpu-node-12's failure" in unredacted.stdout
