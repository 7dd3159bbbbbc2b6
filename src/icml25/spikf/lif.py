"""Multi-step leaky integrate-and-fire neuron with a sigmoid surrogate gradient (spec §2, spikingjelly semantics).

Examples
--------
>>> import torch
>>> lif = LIF(tau=2.0, v_threshold=1.0)
>>> lif(torch.full((4, 1), 1.5)).flatten().tolist()   # H = 0.75, 1.125 -> spike, reset, 0.75, 1.125 -> spike
[0.0, 1.0, 0.0, 1.0]
"""

from __future__ import annotations

from typing import Any

from icml25.core.optional import require
from icml25.core.validation import check_positive, check_real

torch = require("torch")
nn = torch.nn

__all__ = ["LIF", "spike"]


class _SigmoidSpike(torch.autograd.Function):
    """Heaviside forward, derivative of sigmoid(alpha * x) backward (spikingjelly ``surrogate.Sigmoid``)."""

    @staticmethod
    def forward(ctx: Any, x: Any, alpha: float) -> Any:
        ctx.save_for_backward(x)
        ctx.alpha = alpha
        return (x >= 0).to(x.dtype)

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        (x,) = ctx.saved_tensors
        sg = torch.sigmoid(ctx.alpha * x)
        return grad * ctx.alpha * sg * (1.0 - sg), None


def spike(x: Any, alpha: float = 4.0) -> Any:
    """Heaviside step ``1[x >= 0]`` whose backward pass is ``alpha * s * (1 - s)``, ``s = sigmoid(alpha x)``.

    Parameters
    ----------
    x : torch.Tensor
        Membrane potential minus threshold, any shape.
    alpha : float
        Surrogate sharpness (spec §2: 4).
    """
    if not torch.is_tensor(x):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    alpha = check_positive(alpha, "alpha")
    return _SigmoidSpike.apply(x, alpha)


class LIF(nn.Module):
    """Multi-step LIF neuron on a leading time axis ``[T, ...]`` (spec §2, ``MultiStepLIFNode`` semantics).

    ``H[t] = V[t-1] + (X[t] - V[t-1]) / tau``; ``S[t] = 1[H[t] >= v_threshold]``; ``V[t] = H[t] (1 - S[t])``
    (hard reset to 0; the reset spike is detached from the graph when ``detach_reset``). The state starts at 0 in
    every call. With ``record=True`` the mean of the output spikes of the last call is kept in ``last_rate``.

    Parameters
    ----------
    tau : float
        Membrane time constant (> 1 for a leaky neuron; 2.0 in the paper's runner).
    v_threshold : float
        Firing threshold (1.0; 0.1 for the frequency selector).
    detach_reset : bool
        Detach the reset term from the autograd graph.
    surrogate_alpha : float
        Sharpness of the sigmoid surrogate gradient.
    """

    def __init__(self, tau: float = 2.0, v_threshold: float = 1.0, detach_reset: bool = True,
                 surrogate_alpha: float = 4.0) -> None:
        super().__init__()
        self.tau = check_real(tau, "tau", low=1.0)
        self.v_threshold = check_positive(v_threshold, "v_threshold")
        self.detach_reset = bool(detach_reset)
        self.surrogate_alpha = check_positive(surrogate_alpha, "surrogate_alpha")
        self.record = False
        self.last_rate: float | None = None

    def forward(self, x: Any) -> Any:
        """Spikes ``[T, ...]`` (0/1, same dtype) for input currents ``x`` of shape ``[T, ...]``."""
        if not torch.is_tensor(x) or x.dim() < 1:
            raise TypeError(f"x must be a torch.Tensor with a leading time axis, got {type(x).__name__}")
        if x.shape[0] < 1:
            raise ValueError(f"x must have at least one time step on its leading axis, got shape {list(x.shape)}")
        v = torch.zeros_like(x[0])
        out = []
        for t in range(x.shape[0]):
            h = v + (x[t] - v) / self.tau
            s = _SigmoidSpike.apply(h - self.v_threshold, self.surrogate_alpha)
            v = h * (1.0 - (s.detach() if self.detach_reset else s))
            out.append(s)
        spikes = torch.stack(out)
        if self.record:
            self.last_rate = float(spikes.detach().mean())
        return spikes

    def extra_repr(self) -> str:
        return f"tau={self.tau}, v_threshold={self.v_threshold}, detach_reset={self.detach_reset}"
