"""The causes every rule must map to, read from the package's ``taxonomy.yaml``.

The file is the project's copy of the shared taxonomy, with one extra mark: ``consequences``
lists the causes that usually follow from another failure (an NCCL timeout after a rank died,
a notebook kernel's death, a native abort, a generic application error). The engine lets any
likely cause of another kind explain them, so rules need not list them in ``explains``.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

from gpudoctor.yamlnodes import load_data


@cache
def _data() -> dict[str, Any]:
    text = resources.files("gpudoctor.rulebook").joinpath("taxonomy.yaml").read_text("utf-8")
    data = load_data(text, "taxonomy.yaml")
    assert isinstance(data, dict)
    return data


@cache
def causes() -> dict[str, str]:
    """Cause id → one-line description, in the file's order."""
    return {str(k): str(v) for k, v in _data()["causes"].items()}


@cache
def consequence_causes() -> frozenset[str]:
    """The causes marked as usually a consequence of another failure (each a known cause)."""
    marked = frozenset(str(c) for c in _data().get("consequences") or ())
    unknown = marked - set(causes())
    if unknown:
        raise ValueError(f"taxonomy.yaml: consequences name unknown causes: {sorted(unknown)}")
    return marked
