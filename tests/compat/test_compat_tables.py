"""The bundled tables load, carry a version and sources, and malformed ones are rejected."""

from __future__ import annotations

import re
from importlib.resources import files
from typing import Any

import pytest
import yaml

from gpudoctor.compat import CompatDataError, table_versions
from gpudoctor.compat.tables import (
    TABLE_FILES,
    cuda_driver_table,
    driver_branch_table,
    gpu_table,
    parse_table,
)
from gpudoctor.version_numbers import Version

EXPECTED_TABLES = {
    "cuda_driver",
    "driver_branches",
    "forward_compat",
    "torch_builds",
    "tf_builds",
    "jax_builds",
    "gpu_compute_capability",
}


def _bundled(file: str) -> dict[str, Any]:
    text = files("gpudoctor.compat").joinpath("data").joinpath(file).read_text("utf-8")
    data = yaml.safe_load(text)
    assert isinstance(data, dict)
    return data


def test_every_table_loads_with_version_and_sources() -> None:
    versions = table_versions()
    assert {name for name, _, _ in versions} == EXPECTED_TABLES
    for name, version, sources in versions:
        assert re.fullmatch(r"\d{4}\.\d{2}", version), name
        assert sources, name
        assert all(isinstance(s, str) and s.strip() for s in sources), name


def test_table_files_are_package_data() -> None:
    assert len(TABLE_FILES) == len(EXPECTED_TABLES)
    for file in TABLE_FILES:
        data = _bundled(file)
        assert data["table"] + ".yaml" == file
        assert {"table", "version", "sources"} <= set(data)


def test_tables_are_loaded_once() -> None:
    assert cuda_driver_table() is cuda_driver_table()
    assert gpu_table() is gpu_table()


@pytest.mark.parametrize(
    ("cuda", "linux", "windows"),
    [
        # Spot checks against cuda_driver_compat.md §1 (GA rows).
        ("12.0", "525.60.13", "527.41"),
        ("12.4", "550.54.14", "551.61"),
        ("11.8", "520.61.05", "520.06"),
        ("13.0", "580.65.06", None),
        ("10.2", "440.33", "441.22"),
    ],
)
def test_toolkit_ga_rows(cuda: str, linux: str, windows: str | None) -> None:
    rows = [t for t in cuda_driver_table().toolkits if t.ga and t.cuda == Version(cuda)]
    assert len(rows) == 1
    assert str(rows[0].linux) == linux
    assert (str(rows[0].windows) if rows[0].windows else None) == windows


def test_toolkit_drivers_agree_with_driver_branches() -> None:
    # Cross-table consistency: each toolkit's Linux driver reports at least that CUDA.
    branches = driver_branch_table().branches
    for toolkit in cuda_driver_table().toolkits:
        if toolkit.linux is None or toolkit.cuda < Version("10.0"):
            continue
        branch = max(
            (b for b in branches if b.branch <= toolkit.linux.major), key=lambda b: b.branch
        )
        assert branch.max_cuda >= toolkit.cuda, toolkit.release


# --- malformed tables -----------------------------------------------------------------


def _reject(file: str, data: object, *fragments: str) -> None:
    with pytest.raises(CompatDataError) as caught:
        parse_table(file, yaml.safe_dump(data))
    message = str(caught.value)
    assert file in message
    for fragment in fragments:
        assert fragment in message


def test_unknown_key_is_rejected() -> None:
    data = _bundled("tf_builds.yaml")
    data["builds"][0]["cudaa"] = "12.5"
    _reject("tf_builds.yaml", data, "builds[0]", "cudaa")


def test_unquoted_version_is_rejected() -> None:
    data = _bundled("tf_builds.yaml")
    data["builds"][1]["cuda"] = 12.5
    _reject("tf_builds.yaml", data, "builds[1].cuda", "quoted version")


def test_wrong_table_name_is_rejected() -> None:
    data = _bundled("jax_builds.yaml")
    data["table"] = "tf_builds"
    _reject("jax_builds.yaml", data, "table")


def test_missing_sources_are_rejected() -> None:
    data = _bundled("driver_branches.yaml")
    data["sources"] = []
    _reject("driver_branches.yaml", data, "sources")


def test_bad_regex_is_rejected() -> None:
    data = _bundled("gpu_compute_capability.yaml")
    data["gpus"][0]["pattern"] = "(unclosed"
    _reject("gpu_compute_capability.yaml", data, "gpus[0].pattern")


def test_pypi_default_must_be_a_flavour() -> None:
    data = _bundled("torch_builds.yaml")
    data["releases"][3]["pypi_default"] = "cu999"
    _reject("torch_builds.yaml", data, "releases[3].pypi_default")


def test_arch_list_for_unknown_flavour_is_rejected() -> None:
    data = _bundled("torch_builds.yaml")
    data["arch_lists"][0]["flavours"] = ["cu130"]
    _reject("torch_builds.yaml", data, "arch_lists[0].flavours")


def test_branches_must_ascend() -> None:
    data = _bundled("driver_branches.yaml")
    data["branches"][0], data["branches"][1] = data["branches"][1], data["branches"][0]
    _reject("driver_branches.yaml", data, "branches")


def test_invalid_yaml_names_the_file() -> None:
    with pytest.raises(CompatDataError, match=r"cuda_driver\.yaml.*not valid YAML"):
        parse_table("cuda_driver.yaml", "toolkits: [\n")


def test_unknown_table_file() -> None:
    with pytest.raises(CompatDataError, match=r"nope\.yaml"):
        parse_table("nope.yaml", "table: nope\n")
