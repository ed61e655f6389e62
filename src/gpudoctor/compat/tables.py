"""Loading, validating and caching the bundled compatibility tables.

Each table is a YAML file in ``gpudoctor/compat/data/`` shipped inside the wheel and read
with :func:`importlib.resources.files` (so it works from a zip or an installed wheel). A
table starts with ``table`` (its name), ``version`` (a date-like table version such as
``"2026.11"``) and ``sources`` (the documents its facts come from), then its rows. Files
are parsed with PyYAML's safe composer only (never ``yaml.load``), checked strictly (see
:mod:`gpudoctor.compat._fields`) and loaded once per process.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from typing import TypeVar

from gpudoctor.compat._fields import CompatDataError
from gpudoctor.compat._parsers import PARSERS
from gpudoctor.compat.model import (
    CudaDriverTable,
    DriverBranchTable,
    ForwardCompatTable,
    GpuTable,
    JaxBuildsTable,
    TableMeta,
    TfBuildsTable,
    TorchBuildsTable,
)
from gpudoctor.yamlnodes import NodeError, load_data

__all__ = [
    "TABLE_FILES",
    "CompatDataError",
    "cuda_driver_table",
    "driver_branch_table",
    "forward_compat_table",
    "gpu_table",
    "jax_builds_table",
    "load_all_tables",
    "parse_table",
    "table_versions",
    "tf_builds_table",
    "torch_builds_table",
]

_T = TypeVar("_T")


#: The bundled table files, in the order ``--explain-data`` lists them.
TABLE_FILES: tuple[str, ...] = tuple(PARSERS)


def parse_table(file: str, text: str) -> object:
    """Parse and validate the text of the bundled table ``file`` (e.g. ``"tf_builds.yaml"``).

    Used by the loaders below and by tests that feed deliberately broken tables.

    Raises:
        CompatDataError: the text is not valid YAML or the table is malformed; the message
            names ``file`` and the offending field.
    """
    parser = PARSERS.get(file)
    if parser is None:
        raise CompatDataError(file, "", "not a known compatibility table")
    try:
        data = load_data(text, file)
    except NodeError as exc:
        raise CompatDataError(file, "", f"not valid YAML: {exc.location}: {exc.message}") from None
    return parser(data, file)


def _load(file: str, kind: type[_T]) -> _T:
    resource = files("gpudoctor.compat").joinpath("data").joinpath(file)
    try:
        text = resource.read_text(encoding="utf-8")
    except OSError as exc:
        raise CompatDataError(file, "", f"cannot be read: {exc}") from None
    table = parse_table(file, text)
    assert isinstance(table, kind)
    return table


@cache
def cuda_driver_table() -> CudaDriverTable:
    """The CUDA toolkit → driver table (loaded once)."""
    return _load("cuda_driver.yaml", CudaDriverTable)


@cache
def driver_branch_table() -> DriverBranchTable:
    """The driver branch → highest CUDA table (loaded once)."""
    return _load("driver_branches.yaml", DriverBranchTable)


@cache
def forward_compat_table() -> ForwardCompatTable:
    """The forward-compatibility (cuda-compat) rules (loaded once)."""
    return _load("forward_compat.yaml", ForwardCompatTable)


@cache
def torch_builds_table() -> TorchBuildsTable:
    """PyTorch releases, flavours and compiled architectures (loaded once)."""
    return _load("torch_builds.yaml", TorchBuildsTable)


@cache
def tf_builds_table() -> TfBuildsTable:
    """TensorFlow tested CUDA/cuDNN versions (loaded once)."""
    return _load("tf_builds.yaml", TfBuildsTable)


@cache
def jax_builds_table() -> JaxBuildsTable:
    """JAX CUDA plugins and their requirements (loaded once)."""
    return _load("jax_builds.yaml", JaxBuildsTable)


@cache
def gpu_table() -> GpuTable:
    """GPU name patterns → compute capability and category (loaded once)."""
    return _load("gpu_compute_capability.yaml", GpuTable)


def _metas() -> tuple[TableMeta, ...]:
    return (
        cuda_driver_table().meta,
        driver_branch_table().meta,
        forward_compat_table().meta,
        torch_builds_table().meta,
        tf_builds_table().meta,
        jax_builds_table().meta,
        gpu_table().meta,
    )


def load_all_tables() -> None:
    """Load (and so validate) every bundled table; raises :class:`CompatDataError`."""
    _metas()


def table_versions() -> list[tuple[str, str, tuple[str, ...]]]:
    """``(table name, table version, sources)`` for every bundled table.

    This is what ``--explain-data`` prints: which facts gpudoctor's verdicts rest on.
    """
    return [(meta.name, meta.version, meta.sources) for meta in _metas()]
