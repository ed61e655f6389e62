"""The causes every rule must map to, read from the package's ``taxonomy.yaml``."""

from __future__ import annotations

from functools import cache
from importlib import resources

from gpudoctor.yamlnodes import load_data


@cache
def causes() -> dict[str, str]:
    """Cause id → one-line description, in the file's order."""
    text = resources.files("gpudoctor.rulebook").joinpath("taxonomy.yaml").read_text("utf-8")
    data = load_data(text, "taxonomy.yaml")
    assert isinstance(data, dict)
    return {str(k): str(v) for k, v in data["causes"].items()}
