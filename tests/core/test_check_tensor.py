"""``core.validation.check_tensor``: every check names the argument, says what was expected and what was given."""

from __future__ import annotations

import numpy as np
import pytest

from icml25.core.validation import check_tensor

torch = pytest.importorskip("torch")


def test_valid_tensor_is_returned_unchanged() -> None:
    x = torch.randn(3, 4, requires_grad=True)
    assert check_tensor(x, "x", ndim=2, shape=(3, None), dtype="float", device="cpu") is x


def test_torch_dtype_converts_array_likes_and_keeps_gradients() -> None:
    assert check_tensor([1, 2], "w", dtype=torch.float64).dtype == torch.float64
    assert check_tensor(np.ones((2, 2), dtype=np.float32), "w", dtype=torch.float64).shape == (2, 2)
    assert check_tensor(3, "w", dtype=torch.float32).ndim == 0
    x = torch.ones(2, requires_grad=True)
    y = check_tensor(x, "x", dtype=torch.float64)
    y.sum().backward()
    assert x.grad is not None and torch.equal(x.grad, torch.ones(2))


@pytest.mark.parametrize("bad, kwargs, error, message", [
    ([1.0, 2.0], {}, TypeError, "x must be a torch.Tensor, got a list"),
    (np.zeros(2), {}, TypeError, r"x must be a torch.Tensor, got an array of shape \(2,\)"),
    ("abc", {"dtype": torch.float64}, TypeError, "x must be a tensor of numbers, got 'abc'"),
    (["a", 1], {"dtype": torch.float64}, TypeError, "x must be a tensor of numbers"),
    ([[1.0], [2.0, 3.0]], {"dtype": torch.float64}, TypeError, "x must be a tensor of numbers, could not convert"),
    (torch.zeros(2, 3), {"ndim": 3}, ValueError, r"x must have 3 dimension\(s\), got shape \(2, 3\)"),
    (torch.zeros(2, 3), {"ndim": (0, 1)}, ValueError, r"x must have 0 or 1 dimension\(s\)"),
    (torch.zeros(2, 3), {"shape": (2, 4)}, ValueError, r"x must have shape \(2, 4\), got \(2, 3\)"),
    (torch.zeros(2, 3), {"shape": (None,)}, ValueError, r"x must have shape \(any,\), got \(2, 3\)"),
    (torch.zeros(2, 3), {"shape": (..., 4)}, ValueError, r"x must have shape \(\.\.\., 4\), got \(2, 3\)"),
    (torch.zeros(()), {"shape": (...,)}, ValueError, r"x must have shape \(\.\.\.,\), got \(\)"),
    (torch.zeros(0, 3), {}, ValueError, r"x must not be empty, got shape \(0, 3\)"),
    (torch.zeros(2), {"min_size": 3}, ValueError, r"x must have at least 3 element\(s\)"),
    (torch.tensor([1.0, float("inf"), float("nan")]), {}, ValueError, r"x must be finite, found 2 NaN/inf"),
    (torch.arange(3), {"dtype": "float"}, TypeError, "x must be a float tensor, got dtype torch.int64"),
    (torch.zeros(3), {"dtype": "int"}, TypeError, "x must be an int tensor, got dtype torch.float32"),
    (torch.zeros(3), {"dtype": "bool"}, TypeError, "x must be a bool tensor"),
    (torch.tensor([0.0, -1.0]), {"low": 0.0}, ValueError, "x must be >= 0.0, got min -1.0"),
    (torch.tensor([0.0, 1.0]), {"low": 0, "low_open": True}, ValueError, "x must be > 0, got min 0.0"),
    (torch.tensor([0.0, 2.0]), {"high": 1.0}, ValueError, "x must be <= 1.0, got max 2.0"),
    (torch.zeros(2), {"device": "meta"}, ValueError, "x must be on device meta, got cpu"),
])
def test_bad_inputs_raise_naming_the_argument(bad, kwargs, error, message) -> None:
    with pytest.raises(error, match=message):
        check_tensor(bad, "x", **kwargs)


def test_shape_patterns_that_match() -> None:
    x = torch.zeros(5, 2, 4)
    for shape in [(5, 2, 4), (None, 2, None), (..., 4), (..., 2, 4), (...,)]:
        check_tensor(x, "x", shape=shape)


def test_finite_off_allows_nan_and_integer_tensors_skip_the_finite_check() -> None:
    check_tensor(torch.tensor([float("nan")]), "x", finite=False)
    check_tensor(torch.arange(3), "x", dtype="int")
    check_tensor(torch.tensor([True]), "mask", dtype="bool")


def test_meta_tensors_skip_value_checks_and_empty_allowed_with_min_size_zero() -> None:
    check_tensor(torch.empty(2, 3, device="meta"), "x", low=0.0, ndim=2)
    assert check_tensor(torch.zeros(0), "x", min_size=0).numel() == 0


def test_a_bad_dtype_spec_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="check_tensor: dtype must be"):
        check_tensor(torch.zeros(2), "x", dtype="floating")


def test_core_validation_does_not_import_torch() -> None:
    import subprocess
    import sys

    code = "import sys, icml25.core.validation; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_check_device_accepts_torch_device_strings_and_refuses_an_absent_gpu() -> None:
    import torch

    from icml25.core.errors import UsageError
    from icml25.core.validation import check_device

    for ok in ("cpu", "cuda", "cuda:1", "mps"):
        assert check_device(ok) == ok
    for bad in ("gpu", "cuda:x", "CUDA", 0, None):
        with pytest.raises(ValueError, match="'cpu', 'cuda', 'cuda:<i>' or 'mps'"):
            check_device(bad)
    assert check_device("cpu", available=True) == "cpu"
    if not torch.cuda.is_available():
        with pytest.raises(UsageError, match="--set gpu=cpu"):
            check_device("cuda", "gpu", available=True)


def test_trusted_tensors_skips_checks_converts_and_restores():
    from icml25.core.validation import trusted_tensors

    bad = torch.tensor([1.0, float("nan")])
    with trusted_tensors():
        assert check_tensor(bad, "x", ndim=3) is bad  # nothing checked inside the block
        out = check_tensor([1, 2], "w", dtype=torch.float64)  # conversions still happen
        assert out.dtype == torch.float64 and out.tolist() == [1.0, 2.0]
        with trusted_tensors():
            pass
        assert check_tensor(bad, "x") is bad  # a nested block does not end the outer one
    with pytest.raises(ValueError, match="x must be finite"):
        check_tensor(bad, "x")
    with pytest.raises(ValueError, match="x must be finite"), trusted_tensors():
        raise ValueError("x must be finite")  # the flag is reset on an exception too
    with pytest.raises(ValueError, match="x must be finite"):
        check_tensor(bad, "x")
