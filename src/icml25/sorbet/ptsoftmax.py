"""PTsoftmax: Sorbet's power-of-two softmax, computable with shifts and additions (spec §2)."""

from __future__ import annotations

import torch
from torch import nn

from icml25.core.validation import check_int

from .quantizers import nearest_pow2, ste

__all__ = ["pt_softmax", "PTSoftmax"]


def pt_softmax(scores: torch.Tensor, dim: int = -1, ste_grad: bool = True) -> torch.Tensor:
    r"""PTsoftmax of ``scores`` along ``dim``: :math:`p_j = 2^{\lceil s_j\rceil - m} / \hat Z`.

    Steps (spec §2): :math:`\tilde s_j = \lceil s_j \rceil`, :math:`m = \max_j \tilde s_j`,
    :math:`a_j = 2^{\tilde s_j - m}` (a right shift), :math:`Z = \sum_j a_j`, :math:`\hat Z` = the power of two
    nearest to :math:`Z` (absolute difference, ties up), :math:`p_j = a_j / \hat Z` (a shift). The row sums lie in
    :math:`[0.75, 1.5)`. With ``ste_grad`` the ceil and :math:`\hat Z` pass gradients straight through (the
    backward pass is that of the base-2 softmax); ``ste_grad=False`` is the released code (no gradient to the
    scores).

    Parameters
    ----------
    scores : Tensor
        Attention scores (masked positions at -10000 or lower), any shape.
    dim : int
        Axis to normalise.
    ste_grad : bool
        Straight-through gradients for the roundings.

    Returns
    -------
    Tensor
        Same shape as ``scores``, entries in ``[0, 4/3]`` that are powers of two or 0.

    Examples
    --------
    >>> pt_softmax(torch.tensor([0.0, 0.0, -1.0, -1.0])).tolist()  # a = [1, 1, .5, .5], Z = 3 -> 4
    [0.25, 0.25, 0.125, 0.125]
    """
    if not isinstance(scores, torch.Tensor):
        raise TypeError(f"scores must be a torch.Tensor, got {type(scores).__name__}")
    if not torch.isfinite(scores).all():
        raise ValueError("scores must be finite (use a large negative number such as -10000 for masked positions)")
    s = ste(scores, torch.ceil(scores)) if ste_grad else torch.ceil(scores)   # step 1
    m = s.detach().amax(dim=dim, keepdim=True)
    a = torch.exp2(s - m)                                                      # step 2 (shifts)
    z = a.sum(dim=dim, keepdim=True)
    z_hat = ste(z, nearest_pow2(z.detach())) if ste_grad else nearest_pow2(z.detach())  # step 3
    return a / z_hat                                                           # step 4 (shift)


class PTSoftmax(nn.Module):
    """The PTsoftmax of the 'Sorbet' (ICML 2025) paper as a module; see :func:`pt_softmax`.

    Parameters
    ----------
    dim : int
        Axis to normalise (-1 for attention rows).
    ste : bool
        Straight-through gradients (default); ``False`` reproduces the released code (no gradient).

    Examples
    --------
    >>> PTSoftmax()(torch.tensor([[3.0, -10000.0]])).tolist()  # one unmasked token gets probability 1
    [[1.0, 0.0]]
    """

    def __init__(self, dim: int = -1, ste: bool = True) -> None:
        super().__init__()
        check_int(dim, "dim")
        self.dim, self.ste = dim, bool(ste)

    def forward(self, scores: torch.Tensor) -> torch.Tensor:
        return pt_softmax(scores, self.dim, self.ste)
