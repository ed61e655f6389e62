"""The rule function that names the device of a PyTorch tensor type."""

from __future__ import annotations

import pytest

from gpudoctor.rulebook.conditions import Evaluator, tensor_device


@pytest.mark.parametrize(
    ("type_name", "device"),
    [
        ("torch.cuda.HalfTensor", "cuda"),
        ("CUDABFloat16Type", "cuda"),
        ("XPUFloatType", "xpu"),
        ("MPSHalfType", "mps"),
        ("torch.FloatTensor", "cpu"),
        ("CPUBFloat16Type", "cpu"),
        (None, None),
    ],
)
def test_a_tensor_type_names_its_device(type_name: str | None, device: str | None) -> None:
    assert tensor_device(type_name) == device


def test_conditions_can_compare_the_devices_of_two_types() -> None:
    evaluator = Evaluator({"input_type": "torch.FloatTensor", "weight_type": "XPUFloatType"})
    assert evaluator.holds("tensor_device(input_type) != tensor_device(weight_type)")
    assert not evaluator.holds("tensor_device(weight_type) == 'cuda'")
