"""The snapshot record: JSON round trip, schema versioning and validation errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpudoctor.errors import SnapshotError
from gpudoctor.snapshot import GpuInfo, GpuProcess, KernelEvent, Snapshot, load_snapshot
from gpudoctor.snapshot.model import DriverInfo, KernelLogInfo


def _minimal(**extra: object) -> dict[str, object]:
    return {"schema": "gpudoctor.snapshot/1", "driver": {"status": "ok"}, **extra}


def test_hand_built_snapshot_round_trips() -> None:
    snap = Snapshot(
        driver=DriverInfo(status="ok", driver_version="550.90.07", unavailable={"x": "y"}),
        gpus=(
            GpuInfo(
                index=0,
                power_draw_w=71.5,
                clock_event_reason_names=("gpu_idle",),
                processes=(GpuProcess(pid=7, cmdline=("python", "a b.py"), exists=True),),
                unavailable={"serial": "NotSupported"},
            ),
        ),
        kernel_log=KernelLogInfo(
            source="dmesg", events=(KernelEvent(kind="xid", line="l", xid=79),)
        ),
    )
    data = snap.to_dict()
    assert next(iter(data)) == "schema"
    assert Snapshot.from_dict(json.loads(json.dumps(data))) == snap


def test_minimal_snapshot_defaults_missing_optional_keys() -> None:
    snap = Snapshot.from_dict(_minimal(gpus=[{"index": 3}]))
    assert snap.driver.status == "ok"
    assert snap.driver.driver_version is None
    assert snap.gpus[0].index == 3
    assert snap.gpus[0].temperature_c is None
    assert snap.gpus[0].unavailable == {}
    assert snap.host.shm_total_bytes is None
    assert snap.kernel_log.events == ()


def test_newer_minor_with_unknown_keys_is_accepted() -> None:
    data = _minimal(future_section={"a": 1}, gpus=[{"index": 0, "fan_speed_pct": 40}])
    data["schema"] = "gpudoctor.snapshot/1.4"
    snap = Snapshot.from_dict(data)
    assert snap.gpus[0].index == 0
    assert snap.schema == "gpudoctor.snapshot/1"


def test_newer_major_schema_asks_to_upgrade() -> None:
    data = _minimal()
    data["schema"] = "gpudoctor.snapshot/2"
    with pytest.raises(SnapshotError, match="newer gpudoctor") as info:
        Snapshot.from_dict(data)
    assert "upgrade" in str(info.value)
    assert "gpudoctor.snapshot/2" in str(info.value)


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ([1, 2], "expected a JSON object"),
        ({"driver": {"status": "ok"}}, '"schema" key is missing'),
        (_minimal(schema="gpudoctor.report/1"), "not a gpudoctor snapshot"),
        ({"schema": "gpudoctor.snapshot/1"}, "'driver' is missing"),
        (_minimal(gpus=[{"index": "0"}]), "gpus[0].index must be an integer"),
        (_minimal(gpus=[{"index": True}]), "gpus[0].index must be an integer"),
        (_minimal(gpus={"index": 0}), "gpus must be a list"),
        (_minimal(host={"in_container": "yes"}), "host.in_container must be true or false"),
        (_minimal(gpus=[{"index": 0, "power_draw_w": "71"}]), "power_draw_w must be a number"),
        (_minimal(environment={"A": 1}), "environment.A must be a string"),
    ],
)
def test_invalid_snapshots_raise_snapshot_error(data: object, fragment: str) -> None:
    with pytest.raises(SnapshotError) as info:
        Snapshot.from_dict(data)
    assert fragment in str(info.value)


def test_integer_json_number_for_float_field_becomes_float() -> None:
    snap = Snapshot.from_dict(_minimal(gpus=[{"index": 0, "power_limit_w": 700}]))
    assert snap.gpus[0].power_limit_w == 700.0
    assert isinstance(snap.gpus[0].power_limit_w, float)


def test_invalid_json_text() -> None:
    with pytest.raises(SnapshotError, match="invalid JSON at line 1"):
        Snapshot.from_json("{not json")


def test_load_snapshot_errors_name_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    with pytest.raises(SnapshotError, match=r"nope\.json: cannot read snapshot"):
        load_snapshot(missing)
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps({"schema": "gpudoctor.snapshot/2", "driver": {}}))
    with pytest.raises(SnapshotError, match=r"newer\.json: .*newer gpudoctor"):
        load_snapshot(newer)


def test_lost_property() -> None:
    assert GpuInfo(index=0, status="lost").lost
    assert not GpuInfo(index=0).lost
