"""The codec: records to JSON and back, type checks with paths, and hostile snapshot files."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from gpudoctor.errors import SnapshotError
from gpudoctor.snapshot import Snapshot, load_snapshot
from gpudoctor.snapshot.codec import (
    MAX_SNAPSHOT_BYTES,
    PATTERN,
    parse_json,
    read_json_file,
    record_from_dict,
    to_jsonable,
)


@dataclass(frozen=True)
class Inner:
    count: int
    ratio: float | None = None


@dataclass(frozen=True)
class Outer:
    name: str = field(metadata={PATTERN: r"[a-z]+"})
    items: tuple[Inner, ...] = ()
    tags: dict[str, str] = field(default_factory=dict)
    flag: bool | None = None


def test_round_trip_of_any_record() -> None:
    value = Outer("abc", (Inner(1, 0.5), Inner(2)), {"k": "v"}, True)
    data = to_jsonable(value)
    assert data == {
        "name": "abc",
        "items": [{"count": 1, "ratio": 0.5}, {"count": 2, "ratio": None}],
        "tags": {"k": "v"},
        "flag": True,
    }
    assert record_from_dict(Outer, json.loads(json.dumps(data))) == value


def test_unknown_keys_are_ignored_and_defaults_fill_in() -> None:
    assert record_from_dict(Outer, {"name": "x", "added_later": [1]}) == Outer("x")


def test_integer_is_accepted_as_float_but_not_the_reverse() -> None:
    assert record_from_dict(Inner, {"count": 1, "ratio": 2}).ratio == 2.0
    with pytest.raises(SnapshotError, match=r"items\[0\]\.count must be an integer, got a number"):
        record_from_dict(Outer, {"name": "x", "items": [{"count": 1.5}]})


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"name": "x", "flag": 1}, "flag must be true or false, got a number"),
        ({"name": "x", "tags": {"a": 3}}, "tags.a must be a string, got a number"),
        ({"name": "x", "items": {}}, "items must be a list, got an object"),
        ({"items": []}, "required key 'name' is missing"),
        ({"name": "sm_90"}, "name is 'sm_90', which does not match"),
    ],
)
def test_wrong_values_name_their_path(data: dict[str, object], message: str) -> None:
    with pytest.raises(SnapshotError, match=message.replace("[", r"\[")):
        record_from_dict(Outer, data)


# --- hostile snapshot files ------------------------------------------------------------------


def _healthy(fixtures_dir: Path) -> dict[str, object]:
    data = json.loads((fixtures_dir / "healthy-8xh100.json").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def _load_fast(path: Path) -> SnapshotError:
    started = time.perf_counter()
    with pytest.raises(SnapshotError) as info:
        load_snapshot(path)
    assert time.perf_counter() - started < 2.0
    assert str(info.value).startswith(f"{path}: ")
    assert "\n" not in str(info.value)
    return info.value


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("NaN", "NaN, which is not a number"),
        ("Infinity", "Infinity, which is not a number"),
        ("-Infinity", "-Infinity, which is not a number"),
        ("1e999", "1e999 is out of range"),
    ],
)
def test_non_finite_numbers_are_refused(
    tmp_path: Path, fixtures_dir: Path, text: str, needle: str
) -> None:
    raw = json.dumps(_healthy(fixtures_dir)).replace(
        '"power_draw_w": 71.25', f'"power_draw_w": {text}', 1
    )
    assert text in raw
    path = tmp_path / "snap.json"
    path.write_text(raw, encoding="utf-8")
    assert needle in str(_load_fast(path))


def test_integer_with_too_many_digits(tmp_path: Path) -> None:
    path = tmp_path / "snap.json"
    path.write_text('{"schema": "gpudoctor.snapshot/1", "x": ' + "9" * 100_000 + "}")
    assert "not a gpudoctor snapshot" in str(_load_fast(path))


def test_non_utf8_bytes(tmp_path: Path, fixtures_dir: Path) -> None:
    raw = json.dumps(_healthy(fixtures_dir)).encode()
    path = tmp_path / "snap.json"
    path.write_bytes(raw[:40] + b"\xff\xfe" + raw[40:])
    assert "not UTF-8 text (byte 40)" in str(_load_fast(path))


def test_compute_capability_must_be_a_version(tmp_path: Path, fixtures_dir: Path) -> None:
    data = _healthy(fixtures_dir)
    data["gpus"][3]["compute_capability"] = "sm_90"  # type: ignore[index]
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    message = str(_load_fast(path))
    assert "gpus[3].compute_capability is 'sm_90'" in message


@pytest.mark.parametrize("depth", [10_000, 200_000])
def test_deep_nesting(tmp_path: Path, depth: int) -> None:
    path = tmp_path / "snap.json"
    path.write_text('{"schema": "gpudoctor.snapshot/1", "x": ' + "[" * depth + "]" * depth + "}")
    assert "nested too deeply" in str(_load_fast(path))


def test_huge_file_is_refused_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "snap.json"
    with path.open("wb") as handle:  # sparse: 500 MB on paper, nothing on disk
        handle.truncate(500_000_000)
    message = str(_load_fast(path))
    assert f"larger than {MAX_SNAPSHOT_BYTES:,} bytes" in message


def test_size_cap_also_holds_when_stat_says_nothing(tmp_path: Path) -> None:
    path = tmp_path / "snap.json"
    path.write_text('{"schema": "gpudoctor.snapshot/1"}' + " " * 100)
    with pytest.raises(SnapshotError, match="larger than 64 bytes"):
        read_json_file(path, max_bytes=64)
    # /dev/zero has a size of 0 and never ends: the read itself stops at the cap.
    message = str(_load_fast(Path("/dev/zero")))
    assert f"larger than {MAX_SNAPSHOT_BYTES:,} bytes" in message


def test_newer_schema_says_where_to_upgrade_without_pip_install(fixtures_dir: Path) -> None:
    data = _healthy(fixtures_dir)
    data["schema"] = "gpudoctor.snapshot/2"
    with pytest.raises(SnapshotError) as info:
        Snapshot.from_dict(data)
    message = str(info.value)
    assert "newer gpudoctor" in message and "source repository" in message
    assert "pip install" not in message


def test_parse_json_keeps_json_error_position() -> None:
    with pytest.raises(SnapshotError, match="invalid JSON at line 2 column 1"):
        parse_json("{\n]")
