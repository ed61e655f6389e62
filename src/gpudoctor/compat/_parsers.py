"""Parsers that turn the bundled YAML tables into the typed records of :mod:`.model`.

Each parser takes the parsed YAML data and the file name, checks every field
(unknown keys, types, quoted versions, cross-references such as "the PyPI default is one
of the release's flavours") and raises :class:`~gpudoctor.compat._fields.CompatDataError`
naming the file and field on the first problem.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import pairwise

from gpudoctor.compat._fields import Fields
from gpudoctor.compat.model import (
    CompatPackage,
    CudaDriverTable,
    DriverBranch,
    DriverBranchTable,
    ErrorCaveat,
    ForwardCompatError,
    ForwardCompatTable,
    GpuCategory,
    GpuEntry,
    GpuTable,
    JaxBuildsTable,
    JaxPlugin,
    MinorCompatFloor,
    SassExclusion,
    TableMeta,
    TfBuild,
    TfBuildsTable,
    ToolkitDriver,
    TorchArchEntry,
    TorchBuildsTable,
    TorchRelease,
)
from gpudoctor.version_numbers import Version

_META = frozenset({"table", "version", "sources"})
_TABLE_VERSION = re.compile(r"^\d{4}\.\d{2}(?:\.\d+)?$")
_SASS = re.compile(r"^sm_\d{2,3}[af]?$")
_PTX = re.compile(r"^compute_\d{2,3}[af]?$")
_FLAVOUR = re.compile(r"^cu\d{2,3}$")
_CC = re.compile(r"^\d{1,2}\.\d$")
_RELEASE = re.compile(r"^\d+\.\d+$")


def _meta(root: Fields, expected: str) -> TableMeta:
    name = root.text("table")
    if name != expected:
        raise root.error("table", f"expected {expected!r}, got {name!r}")
    version = root.text("version")
    if not _TABLE_VERSION.match(version):
        raise root.error(
            "version", f"expected a date-like version such as '2026.11', got {version!r}"
        )
    sources = root.texts("sources")
    if not sources:
        raise root.error("sources", "must list at least one source")
    return TableMeta(name=name, version=version, sources=sources, file=root.file)


def _root(data: object, file: str, keys: set[str], optional: set[str] | None = None) -> Fields:
    return Fields(
        data,
        file=file,
        where="",
        required=_META | frozenset(keys),
        optional=frozenset(optional or ()),
    )


def _parse_cuda_driver(data: object, file: str) -> CudaDriverTable:
    root = _root(
        data,
        file,
        {
            "toolkits",
            "minor_version_compat",
            "no_minor_version_compat_note",
            "minor_version_compat_caveats",
        },
    )
    toolkits = tuple(
        ToolkitDriver(
            cuda=row.version("cuda"),
            release=row.text("release"),
            ga=row.flag("ga"),
            linux=row.opt_version("linux"),
            windows=row.opt_version("windows"),
            note=row.opt_text("note"),
        )
        for row in root.rows(
            "toolkits",
            required=frozenset({"cuda", "release", "ga", "linux", "windows"}),
            optional=frozenset({"note"}),
        )
    )
    ga_count: dict[Version, int] = {}
    for toolkit in toolkits:
        if len(toolkit.cuda.parts) != 2:
            raise root.error("toolkits", f"cuda {toolkit.cuda} must be major.minor")
        ga_count[toolkit.cuda] = ga_count.get(toolkit.cuda, 0) + toolkit.ga
    for cuda, count in ga_count.items():
        if count != 1:
            raise root.error("toolkits", f"CUDA {cuda} needs exactly one ga row, has {count}")
    floors = tuple(
        MinorCompatFloor(
            major=row.integer("major"),
            linux=row.version("linux"),
            windows=row.version("windows"),
            uncertain=row.flag("uncertain"),
            note=row.opt_text("note"),
        )
        for row in root.rows(
            "minor_version_compat",
            required=frozenset({"major", "linux", "windows"}),
            optional=frozenset({"uncertain", "note"}),
        )
    )
    if len({f.major for f in floors}) != len(floors):
        raise root.error("minor_version_compat", "duplicate major")
    caveats = tuple(
        ErrorCaveat(
            error=row.opt_integer("error"),
            name=row.opt_text("name"),
            text=row.opt_text("text"),
            caveat=row.text("caveat"),
        )
        for row in root.rows(
            "minor_version_compat_caveats",
            required=frozenset({"caveat"}),
            optional=frozenset({"error", "name", "text"}),
        )
    )
    return CudaDriverTable(
        meta=_meta(root, "cuda_driver"),
        toolkits=toolkits,
        minor_version_compat=floors,
        no_minor_version_compat_note=root.text("no_minor_version_compat_note"),
        minor_version_compat_caveats=caveats,
    )


def _parse_driver_branches(data: object, file: str) -> DriverBranchTable:
    root = _root(data, file, {"last_known_driver_major", "branches"})
    branches = tuple(
        DriverBranch(
            branch=row.integer("branch"),
            max_cuda=row.version("max_cuda"),
            confirmed=row.opt_text("confirmed"),
            note=row.opt_text("note"),
        )
        for row in root.rows(
            "branches",
            required=frozenset({"branch", "max_cuda"}),
            optional=frozenset({"confirmed", "note"}),
        )
    )
    for before, after in pairwise(branches):
        if not (before.branch < after.branch and before.max_cuda < after.max_cuda):
            raise root.error(
                "branches", f"R{after.branch} must follow R{before.branch} in ascending order"
            )
    last = root.integer("last_known_driver_major")
    if last < branches[-1].branch:
        raise root.error("last_known_driver_major", "is below the newest branch")
    return DriverBranchTable(
        meta=_meta(root, "driver_branches"), last_known_driver_major=last, branches=branches
    )


def _categories(root: Fields, key: str) -> frozenset[GpuCategory]:
    values = root.texts(key)
    try:
        return frozenset(GpuCategory(v) for v in values)
    except ValueError as exc:
        raise root.error(key, str(exc)) from None


def _parse_forward_compat(data: object, file: str) -> ForwardCompatTable:
    root = _root(
        data,
        file,
        {
            "supported_categories",
            "unknown_categories",
            "unsupported_categories",
            "categories_note",
            "package",
            "install_dir",
            "loader_note",
            "caveats",
            "errors",
            "matrix",
        },
    )
    supported = _categories(root, "supported_categories")
    unknown = _categories(root, "unknown_categories")
    unsupported = _categories(root, "unsupported_categories")
    if supported & unknown or supported & unsupported or unknown & unsupported:
        raise root.error("supported_categories", "categories must be listed only once")
    if supported | unknown | unsupported != set(GpuCategory):
        raise root.error("supported_categories", "every GPU category must be classified")
    errors = tuple(
        ForwardCompatError(
            code=row.integer("code"),
            name=row.text("name"),
            driver_name=row.text("driver_name"),
            text=row.text("text"),
            meaning=row.text("meaning"),
        )
        for row in root.rows(
            "errors", required=frozenset({"code", "name", "driver_name", "text", "meaning"})
        )
    )
    matrix = root.mapping("matrix", required=frozenset({"base_branches", "packages"}))
    bases = matrix.integers("base_branches")
    packages: list[CompatPackage] = []
    for row in matrix.rows("packages", required=frozenset({"cuda", "compatible", "not_needed"})):
        package = CompatPackage(
            cuda=row.version("cuda"),
            compatible=frozenset(row.integers("compatible")),
            not_needed=frozenset(row.integers("not_needed")),
        )
        if not (package.compatible | package.not_needed) <= set(bases):
            raise row.error("compatible", "lists a branch missing from base_branches")
        packages.append(package)
    return ForwardCompatTable(
        meta=_meta(root, "forward_compat"),
        supported_categories=supported,
        unknown_categories=unknown,
        unsupported_categories=unsupported,
        categories_note=root.text("categories_note"),
        package=root.text("package"),
        install_dir=root.text("install_dir"),
        loader_note=root.text("loader_note"),
        caveats=root.texts("caveats"),
        errors=errors,
        base_branches=bases,
        packages=tuple(packages),
    )


def _checked(row: Fields, key: str, pattern: re.Pattern[str], what: str) -> tuple[str, ...]:
    values = row.texts(key)
    for value in values:
        if not pattern.match(value):
            raise row.error(key, f"{value!r} is not {what}")
    return values


def _parse_torch_builds(data: object, file: str) -> TorchBuildsTable:
    root = _root(
        data,
        file,
        {"releases", "arch_lists", "sass_exclusions", "unsuffixed_cuda_versioned_wheels"},
    )
    releases: dict[str, TorchRelease] = {}
    for row in root.rows(
        "releases",
        required=frozenset(
            {"release", "date", "stable", "experimental", "pypi_default", "pypi_default_verified"}
        ),
        optional=frozenset({"note"}),
    ):
        release = TorchRelease(
            release=row.text("release"),
            date=row.text("date"),
            stable=_checked(row, "stable", _FLAVOUR, "a CUDA flavour like cu121"),
            experimental=_checked(row, "experimental", _FLAVOUR, "a CUDA flavour like cu121"),
            pypi_default=row.text("pypi_default"),
            pypi_default_verified=row.flag("pypi_default_verified"),
            note=row.opt_text("note"),
        )
        if not _RELEASE.match(release.release) or release.release in releases:
            raise row.error("release", f"{release.release!r} is malformed or duplicated")
        if release.pypi_default not in release.flavours:
            raise row.error("pypi_default", "is not one of the release's flavours")
        releases[release.release] = release
    entries: list[TorchArchEntry] = []
    seen: set[tuple[str, str]] = set()
    for row in root.rows(
        "arch_lists",
        required=frozenset({"releases", "flavours", "sass", "ptx", "how_known"}),
        optional=frozenset({"uncertain", "note"}),
    ):
        entry = TorchArchEntry(
            releases=row.texts("releases"),
            flavours=_checked(row, "flavours", _FLAVOUR, "a CUDA flavour like cu121"),
            sass=_checked(row, "sass", _SASS, "a SASS arch like sm_80"),
            ptx=_checked(row, "ptx", _PTX, "a PTX arch like compute_90"),
            how_known=row.text("how_known"),
            uncertain=row.flag("uncertain"),
            note=row.opt_text("note"),
        )
        for name in entry.releases:
            if name not in releases:
                raise row.error("releases", f"unknown release {name!r}")
            for flavour in entry.flavours:
                if flavour not in releases[name].flavours:
                    raise row.error("flavours", f"{flavour} is not a flavour of torch {name}")
                if (name, flavour) in seen:
                    raise row.error("flavours", f"torch {name} {flavour} is listed twice")
                seen.add((name, flavour))
        entries.append(entry)
    exclusions = tuple(
        SassExclusion(
            sass=_one(row, "sass", _SASS, "a SASS arch like sm_80"),
            not_on=_checked(row, "not_on", _CC, "a compute capability like 8.7"),
            note=row.opt_text("note"),
        )
        for row in root.rows(
            "sass_exclusions",
            required=frozenset({"sass", "not_on"}),
            optional=frozenset({"note"}),
        )
    )
    return TorchBuildsTable(
        meta=_meta(root, "torch_builds"),
        releases=tuple(releases.values()),
        arch_lists=tuple(entries),
        sass_exclusions=exclusions,
        unsuffixed_cuda_versioned_wheels=root.texts("unsuffixed_cuda_versioned_wheels"),
    )


def _one(row: Fields, key: str, pattern: re.Pattern[str], what: str) -> str:
    value = row.text(key)
    if not pattern.match(value):
        raise row.error(key, f"{value!r} is not {what}")
    return value


def _parse_tf_builds(data: object, file: str) -> TfBuildsTable:
    root = _root(data, file, {"notes", "builds"})
    builds = tuple(
        TfBuild(
            releases=_checked(row, "releases", _RELEASE, "a release like 2.16"),
            cuda=row.version("cuda"),
            cudnn=row.text("cudnn"),
            inferred=row.flag("inferred"),
            note=row.opt_text("note"),
        )
        for row in root.rows(
            "builds",
            required=frozenset({"releases", "cuda", "cudnn", "inferred"}),
            optional=frozenset({"note"}),
        )
    )
    names = [name for build in builds for name in build.releases]
    if len(names) != len(set(names)):
        raise root.error("builds", "a TensorFlow release is listed twice")
    return TfBuildsTable(meta=_meta(root, "tf_builds"), notes=root.texts("notes"), builds=builds)


def _parse_jax_builds(data: object, file: str) -> JaxBuildsTable:
    root = _root(data, file, {"notes", "plugins"})
    plugins = tuple(
        JaxPlugin(
            package=row.text("package"),
            pjrt=row.text("pjrt"),
            cuda_major=row.integer("cuda_major"),
            min_driver_linux=row.opt_version("min_driver_linux"),
            min_compute_capability=(
                _one(row, "min_compute_capability", _CC, "a compute capability like 7.5")
                if row.has("min_compute_capability")
                else None
            ),
            inferred=row.flag("inferred"),
            note=row.opt_text("note"),
        )
        for row in root.rows(
            "plugins",
            required=frozenset(
                {
                    "package",
                    "pjrt",
                    "cuda_major",
                    "min_driver_linux",
                    "min_compute_capability",
                    "inferred",
                }
            ),
            optional=frozenset({"note"}),
        )
    )
    if len({p.package for p in plugins}) != len(plugins):
        raise root.error("plugins", "a package is listed twice")
    return JaxBuildsTable(
        meta=_meta(root, "jax_builds"), notes=root.texts("notes"), plugins=plugins
    )


def _parse_gpus(data: object, file: str) -> GpuTable:
    root = _root(data, file, {"normalisation", "gpus"})
    gpus: list[GpuEntry] = []
    for row in root.rows(
        "gpus",
        required=frozenset({"pattern", "cc", "category", "examples"}),
        optional=frozenset({"note"}),
    ):
        try:
            pattern = re.compile(row.text("pattern"))
        except re.error as exc:
            raise row.error("pattern", f"bad regular expression: {exc}") from None
        try:
            category = GpuCategory(row.text("category"))
        except ValueError as exc:
            raise row.error("category", str(exc)) from None
        examples = row.texts("examples")
        if not examples:
            raise row.error("examples", "must give at least one GPU name")
        gpus.append(
            GpuEntry(
                pattern=pattern,
                cc=_one(row, "cc", _CC, "a compute capability like 8.6"),
                category=category,
                examples=examples,
                note=row.opt_text("note"),
            )
        )
    return GpuTable(
        meta=_meta(root, "gpu_compute_capability"),
        normalisation=root.text("normalisation"),
        gpus=tuple(gpus),
    )


PARSERS: dict[str, Callable[[object, str], object]] = {
    "cuda_driver.yaml": _parse_cuda_driver,
    "driver_branches.yaml": _parse_driver_branches,
    "forward_compat.yaml": _parse_forward_compat,
    "torch_builds.yaml": _parse_torch_builds,
    "tf_builds.yaml": _parse_tf_builds,
    "jax_builds.yaml": _parse_jax_builds,
    "gpu_compute_capability.yaml": _parse_gpus,
}
