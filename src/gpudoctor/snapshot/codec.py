"""JSON in and out for the snapshot records (generic, and bounded for hostile files).

:func:`to_jsonable` turns a record into JSON types. :func:`record_from_dict` builds a record
from parsed JSON, checking every value against the field's annotation (``int``, ``float``,
``bool``, ``str``, ``X | None``, ``tuple[X, ...]``, ``dict[str, X]``, nested records) and
against a field's ``pattern`` metadata when it has one (a compute capability must look like
``"8.0"``); keys it does not know are ignored, missing optional keys take their defaults.

:func:`read_json_file` and :func:`parse_json` are the only way snapshot text is read. A
snapshot is someone else's file, so reading is bounded: at most :data:`MAX_SNAPSHOT_BYTES`
are read, the bytes must be UTF-8, ``NaN``/``Infinity`` and numbers that overflow are
refused, and nesting too deep for the parser is one error rather than a crash. Every
problem is a :class:`~gpudoctor.errors.SnapshotError` saying what is wrong and where.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import types
import typing
from pathlib import Path
from typing import Any, TypeVar, Union

from gpudoctor.errors import SnapshotError

#: Snapshots are a few hundred KiB even for big nodes; anything past this is not one.
MAX_SNAPSHOT_BYTES = 64 << 20

#: Field metadata key: a regular expression a string value must match in full.
PATTERN = "pattern"

_T = TypeVar("_T")
_HINTS: dict[type, dict[str, Any]] = {}
_PATTERNS: dict[str, re.Pattern[str]] = {}


# --- out ----------------------------------------------------------------------------------


def to_jsonable(value: object) -> object:
    """A record (or any value built of records, tuples, lists and dicts) as JSON types."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [to_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    return value


# --- text in ------------------------------------------------------------------------------


def _refuse_constant(name: str) -> object:
    raise SnapshotError(f"not a gpudoctor snapshot: JSON holds {name}, which is not a number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise SnapshotError(f"not a gpudoctor snapshot: the number {text[:40]} is out of range")
    return value


def parse_json(text: str) -> object:
    """Parse snapshot JSON text, refusing what JSON or Python cannot hold faithfully.

    Raises:
        SnapshotError: invalid JSON, ``NaN``/``Infinity``, a number out of range, or nesting
            deeper than the parser allows.
    """
    try:
        return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        raise SnapshotError(
            f"not a gpudoctor snapshot: invalid JSON at line {exc.lineno} column {exc.colno}: "
            f"{exc.msg}"
        ) from None
    except RecursionError:
        raise SnapshotError("not a gpudoctor snapshot: JSON nested too deeply") from None
    except ValueError as exc:  # an integer with more digits than Python converts
        raise SnapshotError(f"not a gpudoctor snapshot: {exc}") from None


def read_json_file(path: str | Path, *, max_bytes: int = MAX_SNAPSHOT_BYTES) -> object:
    """Read and parse a JSON file of at most ``max_bytes``.

    Raises:
        SnapshotError: unreadable, too big, not UTF-8, or not valid JSON; the message starts
            with the path.
    """
    too_big = SnapshotError(f"{path}: not a gpudoctor snapshot: larger than {max_bytes:,} bytes")
    try:
        with Path(path).open("rb") as handle:
            if os.fstat(handle.fileno()).st_size > max_bytes:
                raise too_big
            # Read one byte past the cap too: pipes and /proc files report a size of 0.
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        raise SnapshotError(f"{path}: cannot read snapshot: {exc.strerror or exc}") from None
    if len(data) > max_bytes:
        raise too_big
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SnapshotError(
            f"{path}: not a gpudoctor snapshot: not UTF-8 text (byte {exc.start})"
        ) from None
    try:
        return parse_json(text)
    except SnapshotError as exc:
        raise SnapshotError(f"{path}: {exc}") from None


# --- records in ---------------------------------------------------------------------------


def _hints(cls: type) -> dict[str, Any]:
    hints = _HINTS.get(cls)
    if hints is None:
        hints = typing.get_type_hints(cls)
        _HINTS[cls] = hints
    return hints


def kind(value: object) -> str:
    """How a JSON value is named in error messages (``"a string"``, ``"null"``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _fail(path: str, expected: str, value: object) -> SnapshotError:
    where = path or "snapshot"
    return SnapshotError(f"invalid snapshot: {where} must be {expected}, got {kind(value)}")


def _from_jsonable(tp: Any, value: object, path: str) -> object:
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        non_none = [a for a in args if a is not type(None)]
        if len(non_none) != 1:
            raise TypeError(f"unsupported annotation {tp!r}")
        return _from_jsonable(non_none[0], value, path)
    if origin is tuple:
        if not isinstance(value, list):
            raise _fail(path, "a list", value)
        (item_tp, _ellipsis) = typing.get_args(tp)
        return tuple(_from_jsonable(item_tp, v, f"{path}[{i}]") for i, v in enumerate(value))
    if origin is dict:
        if not isinstance(value, dict):
            raise _fail(path, "an object", value)
        _key_tp, val_tp = typing.get_args(tp)
        return {str(k): _from_jsonable(val_tp, v, f"{path}.{k}") for k, v in value.items()}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _dataclass_from_dict(tp, value, path)
    if tp is bool:
        if not isinstance(value, bool):
            raise _fail(path, "true or false", value)
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _fail(path, "an integer", value)
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _fail(path, "a number", value)
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise _fail(path, "a string", value)
        return value
    raise TypeError(f"unsupported annotation {tp!r}")


def _check_pattern(pattern: str, value: object, path: str) -> None:
    if not isinstance(value, str):
        return
    compiled = _PATTERNS.get(pattern)
    if compiled is None:
        compiled = _PATTERNS[pattern] = re.compile(pattern)
    if compiled.fullmatch(value) is None:
        raise SnapshotError(
            f"invalid snapshot: {path} is {value[:40]!r}, which does not match {pattern!r}"
        )


def record_from_dict(cls: type[_T], value: object, path: str = "") -> _T:
    """Build a record dataclass (``HostInfo``, ``Snapshot``...) from parsed JSON.

    Args:
        cls: the dataclass to build.
        value: the parsed JSON object.
        path: where ``value`` sits in the document, for messages (``"gpus[2]"``).

    Raises:
        SnapshotError: a value has the wrong type or form, or a required key is missing;
            the message names the path (``gpus[2].index``).
    """
    return _dataclass_from_dict(cls, value, path)


def _dataclass_from_dict(cls: type[_T], value: object, path: str) -> _T:
    if not isinstance(value, dict):
        raise _fail(path, "an object", value)
    hints = _hints(cls)
    kwargs: dict[str, object] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        sub = f"{path}.{f.name}" if path else f.name
        if f.name in value:
            kwargs[f.name] = _from_jsonable(hints[f.name], value[f.name], sub)
            if PATTERN in f.metadata:
                _check_pattern(f.metadata[PATTERN], kwargs[f.name], sub)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise SnapshotError(f"invalid snapshot: required key {sub!r} is missing")
    # Keys this version does not know (from a newer minor schema) are ignored on purpose.
    return cls(**kwargs)
