"""The causes every rule must map to, read from the package's ``taxonomy.yaml``.

The file is the project's copy of the shared taxonomy. :data:`CONSEQUENCE_CAUSES` marks the
causes that usually follow from another failure (an NCCL timeout after a rank died, a notebook
kernel's death, a native abort, a generic application error). The engine lets any likely cause
of another kind explain them, so rules need not list them in ``explains``. The mark is kept
here rather than in the YAML file so that ranking never needs the YAML parser (start-up).
"""

from __future__ import annotations

from functools import cache
from typing import Any


@cache
def _data() -> dict[str, Any]:
    from importlib import resources  # both only when the causes are asked for (start-up)

    from gpudoctor.yamlnodes import load_data

    text = resources.files("gpudoctor.rulebook").joinpath("taxonomy.yaml").read_text("utf-8")
    data = load_data(text, "taxonomy.yaml")
    assert isinstance(data, dict)
    return data


@cache
def causes() -> dict[str, str]:
    """Cause id → one-line description, in the file's order."""
    return {str(k): str(v) for k, v in _data()["causes"].items()}


CONSEQUENCE_CAUSES = frozenset(
    {
        "nccl_failure",
        "segfault_native",
        "jupyter_kernel_died",
        "app_exception",
        "dataloader_worker_crash",
        "cudnn_cublas_init",
    }
)
"""Causes that are usually the consequence of another failure (``tests`` check each is known)."""


ENDING_CAUSES = frozenset({"segfault_native"})
"""Consequence causes that say only how the process ended (a native crash, an abort): any
failure of another cause reported before the ending explains it, a consequence cause too (an
error code printed before "Segmentation fault" says more than the segfault)."""


def consequence_causes() -> frozenset[str]:
    """The causes marked as usually a consequence of another failure."""
    return CONSEQUENCE_CAUSES
