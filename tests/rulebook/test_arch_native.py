"""The rule function that says whether a build's architecture list has a cubin for a GPU."""

from __future__ import annotations

import pytest

from gpudoctor.rulebook.conditions import Evaluator, arch_native


@pytest.mark.parametrize(
    ("capability", "arch_list", "native"),
    [
        ("75", "sm_35 sm_52 sm_60 sm_61 sm_70 compute_70", True),  # sm_70 runs on 7.5
        ("sm_89", "sm_80 sm_86 sm_90", True),
        ("8.6", "sm_37 sm_50 sm_60 sm_70 sm_75 compute_37", False),  # PTX only: not native
        ("120", "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90", False),
        ("80", "sm_86", False),  # a later minor does not run on an earlier one
        ("75", "", None),
        ("75", None, None),
        ("not a capability", "sm_70", None),
    ],
)
def test_a_cubin_runs_on_its_major_versions_later_minors(
    capability: str, arch_list: str | None, native: bool | None
) -> None:
    assert arch_native(capability, arch_list) is native


def test_conditions_can_ask_it() -> None:
    evaluator = Evaluator({"sm": "75", "archs": "sm_61 sm_70"})
    assert evaluator.holds("arch_native(sm, archs) == True")
