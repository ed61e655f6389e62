"""The facts rules test: one flat namespace built from every source of knowledge.

Sources, from weakest to strongest (a later source wins where it knows a value):

1. facts the structure readers found in the logs (:mod:`gpudoctor.logs.structure`: a pasted
   ``nvidia-smi`` table, ``collect_env`` output, a traceback);
2. the snapshot (live, or a saved ``snapshot.json``);
3. facts observed directly: the exit status and the timeline of a job ``gpudoctor run``
   wrapped (:mod:`gpudoctor.runner`), or the exit status given to ``explain --exit-code``;
4. compatibility verdicts computed from 1 to 3 with the versioned data tables
   (``driver_too_old``, ``torch_arch_supported`` …).
"""

from __future__ import annotations

from collections.abc import Mapping

from gpudoctor.report import FactValue


def assemble_facts(
    text_facts: Mapping[str, object],
    snapshot_facts: Mapping[str, object] | None = None,
    observed_facts: Mapping[str, object] | None = None,
) -> dict[str, FactValue]:
    """Merge the sources into one namespace and add the compatibility verdicts."""
    facts: dict[str, object] = dict(text_facts)
    for source in (snapshot_facts, observed_facts):
        for name, value in (source or {}).items():
            if value is not None or name not in facts:
                facts[name] = value
    facts.update(_compat(facts))
    return {name: plain_value(value) for name, value in facts.items()}


_COMPAT_INPUTS = (
    "driver_version",
    "driver_cuda_version",
    "torch_version",
    "torch_cuda_version",
    "cuda_runtime_versions",
    "gpu_names",
    "gpu_compute_capabilities",
    "torch_arch_list",
)


def _compat(facts: Mapping[str, object]) -> dict[str, object]:
    if not any(facts.get(name) for name in _COMPAT_INPUTS):
        return {}  # nothing to check: skip loading the tables
    from gpudoctor.facts.compat import compat_facts

    return dict(compat_facts(facts))


def plain_value(value: object) -> FactValue:
    """``value`` as JSON-ready data: scalars kept, lists and tuples mapped, anything else
    (a :class:`~gpudoctor.version_numbers.Version`, …) as its text."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [plain_value(v) for v in value]
    return str(value)
