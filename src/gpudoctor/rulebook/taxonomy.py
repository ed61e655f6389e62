"""The causes every rule must map to, read from the package's ``taxonomy.yaml``."""

from __future__ import annotations

from functools import cache
from importlib import resources

import yaml


@cache
def causes() -> dict[str, str]:
    """Cause id → one-line description, in the file's order."""
    text = resources.files("gpudoctor.rulebook").joinpath("taxonomy.yaml").read_text("utf-8")
    data = yaml.safe_load(text)
    return {str(k): str(v) for k, v in data["causes"].items()}
