"""Strict field access for the bundled YAML tables.

A bundled table that does not have the expected shape is a bug in gpudoctor, so every
problem raises :class:`CompatDataError` naming the file and the field (``rows[3].linux``).
Unknown keys are rejected rather than ignored, and versions must be quoted strings
(YAML would read an unquoted ``12.10`` as the number ``12.1``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TypeVar

from gpudoctor.errors import GpudoctorError
from gpudoctor.version_numbers import Version

_VERSION_TEXT = re.compile(r"^\d+(?:\.\d+)*$")
_T = TypeVar("_T")


class CompatDataError(GpudoctorError):
    """A bundled compatibility table is malformed (always a gpudoctor bug)."""

    def __init__(self, file: str, where: str, message: str) -> None:
        location = f"{file}: {where}" if where else file
        super().__init__(f"invalid compatibility table {location}: {message}")
        self.file = file
        self.where = where


class Fields:
    """One YAML mapping with the keys it may have; typed getters raise on bad values."""

    def __init__(
        self,
        data: object,
        *,
        file: str,
        where: str,
        required: frozenset[str],
        optional: frozenset[str] = frozenset(),
    ) -> None:
        if not isinstance(data, Mapping):
            raise CompatDataError(file, where, f"expected a mapping, got {_kind(data)}")
        unknown = sorted(str(k) for k in data if k not in required | optional)
        if unknown:
            raise CompatDataError(file, where, f"unknown key(s): {', '.join(unknown)}")
        missing = sorted(required - set(data))
        if missing:
            raise CompatDataError(file, where, f"missing key(s): {', '.join(missing)}")
        self._data: Mapping[object, object] = data
        self.file = file
        self.where = where

    def _path(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def error(self, key: str, message: str) -> CompatDataError:
        """Build an error located at ``key`` of this mapping."""
        return CompatDataError(self.file, self._path(key), message)

    def _get(self, key: str, kind: type[_T], label: str) -> _T:
        value = self._data.get(key)
        # bool is a subclass of int; a YAML "yes" must never pass as a number.
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise self.error(key, f"expected {label}, got {_kind(value)}")
        return value

    def has(self, key: str) -> bool:
        """Whether the key is present with a non-null value."""
        return self._data.get(key) is not None

    def text(self, key: str) -> str:
        """A non-empty string."""
        value = self._get(key, str, "a string")
        if not value.strip():
            raise self.error(key, "must not be empty")
        return value

    def opt_text(self, key: str) -> str | None:
        """A non-empty string, or ``None`` when absent or null."""
        return self.text(key) if self.has(key) else None

    def integer(self, key: str) -> int:
        """An integer (not a boolean)."""
        return self._get(key, int, "an integer")

    def opt_integer(self, key: str) -> int | None:
        """An integer, or ``None`` when absent or null."""
        return self.integer(key) if self.has(key) else None

    def flag(self, key: str, default: bool = False) -> bool:
        """A boolean; ``default`` when absent."""
        if key not in self._data:
            return default
        return self._get(key, bool, "true or false")

    def version(self, key: str) -> Version:
        """A dotted numeric version written as a quoted string."""
        value = self._data.get(key)
        if not isinstance(value, str) or not _VERSION_TEXT.match(value):
            raise self.error(key, f"expected a quoted version such as '12.4', got {value!r}")
        return Version(value)

    def opt_version(self, key: str) -> Version | None:
        """A version, or ``None`` when absent or null."""
        return self.version(key) if self.has(key) else None

    def texts(self, key: str) -> tuple[str, ...]:
        """A list of non-empty strings (may be empty)."""
        items = self._get(key, list, "a list")
        for index, item in enumerate(items):
            if not isinstance(item, str) or not item.strip():
                raise self.error(f"{key}[{index}]", f"expected a string, got {_kind(item)}")
        return tuple(items)

    def integers(self, key: str) -> tuple[int, ...]:
        """A list of integers (may be empty)."""
        items = self._get(key, list, "a list")
        for index, item in enumerate(items):
            if not isinstance(item, int) or isinstance(item, bool):
                raise self.error(f"{key}[{index}]", f"expected an integer, got {_kind(item)}")
        return tuple(items)

    def rows(
        self, key: str, *, required: frozenset[str], optional: frozenset[str] = frozenset()
    ) -> list[Fields]:
        """A non-empty list of mappings, each checked for its keys."""
        items = self._get(key, list, "a list")
        if not items:
            raise self.error(key, "must not be empty")
        return [
            Fields(
                item,
                file=self.file,
                where=f"{self._path(key)}[{index}]",
                required=required,
                optional=optional,
            )
            for index, item in enumerate(items)
        ]

    def mapping(
        self, key: str, *, required: frozenset[str], optional: frozenset[str] = frozenset()
    ) -> Fields:
        """A nested mapping checked for its keys."""
        return Fields(
            self._data.get(key),
            file=self.file,
            where=self._path(key),
            required=required,
            optional=optional,
        )


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__
