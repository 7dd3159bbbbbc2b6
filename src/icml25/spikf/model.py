"""SpikF forecaster (spiking patch encoding, spiking frequency-selection blocks, dense head), RevIN and DLinear.

Shapes follow spec §2: batch B, look-back L, variables D, horizon H, SNN steps T, patches N (divides L), patch
length P = L / N, embedding width C, hidden width Hd.

Examples
--------
>>> import torch
>>> m = SpikFForecaster(seq_len=32, pred_len=8, n_vars=3, patch_num=8, patch_dim=4, T=2, hidden_dim=16)
>>> m(torch.randn(5, 32, 3)).shape
torch.Size([2, 5, 8, 3])
>>> m.predict(torch.randn(5, 32, 3)).shape
torch.Size([5, 8, 3])
"""

from __future__ import annotations

from typing import Any

from icml25.core.optional import require
from icml25.core.validation import check_int, check_positive, check_real

from .lif import LIF

torch = require("torch")
nn = torch.nn

__all__ = ["RevIN", "SFSBlock", "SpikFForecaster", "DLinear"]


def _check_input(x: Any, seq_len: int, n_vars: int) -> None:
    if not torch.is_tensor(x):
        raise TypeError(f"x must be a torch.Tensor of shape [B, {seq_len}, {n_vars}], got {type(x).__name__}")
    if x.dim() != 3 or x.shape[0] < 1 or x.shape[1] != seq_len or x.shape[2] != n_vars:
        raise ValueError(f"x must have shape [B >= 1, {seq_len}, {n_vars}] (batch, look-back, variables), "
                         f"got {list(x.shape)}")
    if not torch.isfinite(x).all():
        raise ValueError("x must be finite, found NaN or inf")


class RevIN(nn.Module):
    """Instance normalisation without affine parameters (spec §2 step 1); statistics are detached.

    ``normalise(x [B, L, D]) -> (x - mu) / sigma`` with ``sigma = sqrt(var_t x + eps)`` (biased variance) and
    ``denormalise(y [..., B, H, D]) -> y * sigma + mu`` with the statistics of the last ``normalise`` call.
    """

    def __init__(self, eps: float = 1e-5) -> None:
        super().__init__()
        self.eps = check_positive(eps, "eps")
        self._mu: Any = None
        self._sigma: Any = None

    def normalise(self, x: Any) -> Any:
        """Normalise each series of ``x [B, L, D]`` over its time axis and remember the statistics."""
        mu = x.mean(dim=1, keepdim=True).detach()
        sigma = torch.sqrt(x.var(dim=1, keepdim=True, unbiased=False) + self.eps).detach()
        self._mu, self._sigma = mu, sigma
        return (x - mu) / sigma

    def denormalise(self, y: Any) -> Any:
        """Undo :meth:`normalise` on a prediction ``[..., B, H, D]``."""
        if self._mu is None:
            raise RuntimeError("RevIN.denormalise called before normalise")
        return y * self._sigma + self._mu

    def forward(self, x: Any) -> Any:
        return self.normalise(x)


class SFSBlock(nn.Module):
    """Spiking frequency-selection block (spec §2 step 3): learned binary spectrum mask + two spiking convs.

    Input and output ``[T, B, C, N, D]``. With ``frequency_selection=False`` the mask is fixed to all ones
    (the ablation of spec §6).
    """

    def __init__(self, patch_num: int, patch_dim: int, tau: float = 2.0, selector_threshold: float = 0.1,
                 frequency_selection: bool = True, surrogate_alpha: float = 4.0) -> None:
        super().__init__()
        N = check_int(patch_num, "patch_num", low=2)
        C = check_int(patch_dim, "patch_dim", low=1)
        tau = check_real(tau, "tau", low=1.0)
        selector_threshold = check_positive(selector_threshold, "selector_threshold")
        self.n_bins = N // 2 + 1
        self.frequency_selection = bool(frequency_selection)
        self.selector = nn.Linear(N, self.n_bins)
        self.selector_bn = nn.BatchNorm2d(C)
        self.selector_lif = LIF(tau, selector_threshold, True, surrogate_alpha)
        self.mask_lif = LIF(tau, 1.0, True, surrogate_alpha)
        self.freq_bn = nn.BatchNorm2d(C)
        self.freq_lif = LIF(tau, 1.0, True, surrogate_alpha)
        self.intra_conv = nn.Conv2d(C, C, kernel_size=(5, 1), padding=(2, 0))
        self.intra_bn = nn.BatchNorm2d(C)
        self.intra_lif = LIF(tau, 1.0, True, surrogate_alpha)
        self.inter_conv = nn.Conv2d(C, C, kernel_size=(3, 1), padding=(1, 0))
        self.inter_bn = nn.BatchNorm2d(C)
        self.inter_lif = LIF(tau, 1.0, True, surrogate_alpha)
        self.record = False
        self.last_mask: Any = None
        self.last_input_rate: float | None = None

    def mask(self, xf: Any) -> Any:
        """Binary mask ``[1, B, C, D, N/2+1]`` from the time-domain spikes ``xf [T, B, C, D, N]`` (step 3b)."""
        T, B, C, D, N = xf.shape
        g = self.selector(xf)  # [T, B, C, D, Nf]
        g = self.selector_bn(g.reshape(T * B, C, D, self.n_bins)).reshape(T, B, C, D, self.n_bins)
        counts = self.selector_lif(g).sum(dim=0, keepdim=True)  # [1, B, C, D, Nf], values in 0..T
        return self.mask_lif(counts)  # fires iff counts / tau >= 1

    def forward(self, x: Any) -> Any:
        T, B, C, N, D = x.shape
        if self.record:
            self.last_input_rate = float(x.detach().mean())
        xf = x.permute(0, 1, 2, 4, 3)  # [T, B, C, D, N]
        spec = torch.fft.rfft(xf, dim=-1)
        if self.frequency_selection:
            m = self.mask(xf)
            spec = spec * m
            if self.record:
                self.last_mask = m.detach()
        elif self.record:
            self.last_mask = torch.ones(1, B, C, D, self.n_bins, device=x.device)
        y = torch.fft.irfft(spec, n=N, dim=-1).permute(0, 1, 2, 4, 3)  # [T, B, C, N, D]
        y = self.freq_bn(y.reshape(T * B, C, N, D)).reshape(T, B, C, N, D)
        x = self.freq_lif(y) + x
        y = self.intra_bn(self.intra_conv(x.reshape(T * B, C, N, D))).reshape(T, B, C, N, D)
        x = self.intra_lif(y) + x
        z = x.permute(3, 1, 2, 0, 4).reshape(N * B, C, T, D)  # SNN time is the conv axis
        z = self.inter_bn(self.inter_conv(z)).reshape(N, B, C, T, D).permute(3, 1, 2, 0, 4)
        return self.inter_lif(z) + x


class SpikFForecaster(nn.Module):
    """SpikF (Wu, Huo & Chen, ICML 2025): spiking Fourier network for long-term forecasting (spec §2).

    ``forward(x [B, L, D]) -> [T, B, H, D]`` (one de-normalised prediction per SNN step; train with the mean over
    steps of the L1 loss); ``predict(x) -> [B, H, D]`` averages over the T steps.

    Parameters
    ----------
    seq_len, pred_len, n_vars : int
        Look-back L, horizon H, number of variables D.
    patch_num : int
        Number of patches N (must divide ``seq_len``).
    patch_dim : int
        Embedding width C.
    T : int
        SNN simulation steps.
    blocks : int
        Number of SFS blocks K.
    hidden_dim : int
        Head width Hd.
    tau : float
        LIF time constant.
    selector_threshold : float
        Threshold of the selector LIF (0.1).
    revin : bool
        Instance normalisation of the input (and de-normalisation of the output).
    frequency_selection : bool
        False replaces the learned mask by all ones (ablation).
    """

    def __init__(self, seq_len: int, pred_len: int, n_vars: int, patch_num: int = 48, patch_dim: int = 32,
                 T: int = 16, blocks: int = 1, hidden_dim: int = 720, tau: float = 2.0,
                 selector_threshold: float = 0.1, revin: bool = True, frequency_selection: bool = True,
                 surrogate_alpha: float = 4.0) -> None:
        super().__init__()
        self.seq_len = check_int(seq_len, "seq_len", low=2)
        self.pred_len = check_int(pred_len, "pred_len", low=1)
        self.n_vars = check_int(n_vars, "n_vars", low=1)
        self.patch_num = check_int(patch_num, "patch_num", low=2)
        if self.seq_len % self.patch_num:
            raise ValueError(f"patch_num must divide seq_len={self.seq_len}, got {self.patch_num}")
        self.patch_dim = check_int(patch_dim, "patch_dim", low=1)
        self.T = check_int(T, "T", low=1)
        self.blocks = check_int(blocks, "blocks", low=1)
        self.hidden_dim = check_int(hidden_dim, "hidden_dim", low=1)
        tau = check_real(tau, "tau", low=1.0)
        check_positive(selector_threshold, "selector_threshold")
        self.patch_len = self.seq_len // self.patch_num
        self.revin = RevIN() if revin else None
        C, N = self.patch_dim, self.patch_num
        self.embed = nn.Linear(self.patch_len, C)
        self.embed_bn = nn.BatchNorm2d(C)
        self.embed_lif = LIF(tau, 1.0, False, surrogate_alpha)
        self.sfs = nn.ModuleList(SFSBlock(N, C, tau, selector_threshold, frequency_selection, surrogate_alpha)
                                 for _ in range(self.blocks))
        self.head1 = nn.Linear(N * C, self.hidden_dim)
        self.head_bn = nn.BatchNorm1d(self.n_vars)
        self.head2 = nn.Linear(self.hidden_dim, self.pred_len)
        self.last_head_input_rate: float | None = None

    def encode(self, x: Any) -> Any:
        """Spiking patch encoding: normalised ``x [B, L, D]`` -> spikes ``[T, B, C, N, D]`` (spec §2 step 2)."""
        B, L, D = x.shape
        p = x.reshape(B, self.patch_num, self.patch_len, D).permute(0, 1, 3, 2)  # [B, N, D, P]
        e = self.embed(p).permute(0, 3, 1, 2)  # [B, C, N, D]
        e = e.unsqueeze(0).expand(self.T, -1, -1, -1, -1).reshape(self.T * B, self.patch_dim, self.patch_num, D)
        e = self.embed_bn(e).reshape(self.T, B, self.patch_dim, self.patch_num, D)
        return self.embed_lif(e)

    def head(self, h: Any) -> Any:
        """Dense head ``[T, B, C, N, D] -> [T, B, H, D]`` (spec §2 step 4; BatchNorm1d over the variables)."""
        T, B, C, N, D = h.shape
        if self.embed_lif.record:
            self.last_head_input_rate = float(h.detach().mean())
        z = self.head1(h.permute(0, 1, 4, 2, 3).reshape(T, B, D, C * N))  # [T, B, D, Hd]
        z = nn.functional.gelu(self.head_bn(z.reshape(T * B, D, self.hidden_dim)))
        return self.head2(z).reshape(T, B, D, self.pred_len).permute(0, 1, 3, 2)

    def forward(self, x: Any) -> Any:
        """Per-step predictions ``[T, B, H, D]`` for look-back windows ``x [B, L, D]``."""
        _check_input(x, self.seq_len, self.n_vars)
        if self.revin is not None:
            x = self.revin.normalise(x)
        h = self.encode(x)
        for block in self.sfs:
            h = block(h)
        y = self.head(h)
        return self.revin.denormalise(y) if self.revin is not None else y

    def predict(self, x: Any) -> Any:
        """Prediction ``[B, H, D]``: the mean over the T SNN steps of :meth:`forward`."""
        return self.forward(x).mean(dim=0)

    def lif_layers(self) -> dict[str, LIF]:
        """Every LIF layer by name (module path)."""
        return {name: m for name, m in self.named_modules() if isinstance(m, LIF)}

    def set_recording(self, on: bool = True) -> None:
        """Turn recording of firing rates and masks on or off (read them with :meth:`firing_rates`)."""
        for m in self.modules():
            if isinstance(m, LIF):
                m.record, m.last_rate = bool(on), None
            elif isinstance(m, SFSBlock):
                m.record = bool(on)

    def firing_rates(self) -> dict[str, float]:
        """Mean output spike rate of every LIF layer that ran in the last recorded forward pass.

        (The selector and mask neurons do not run with ``frequency_selection=False``.)
        """
        rates = {name: m.last_rate for name, m in self.lif_layers().items() if m.last_rate is not None}
        if not rates:
            raise RuntimeError("no firing rates recorded: call set_recording(True) and run a forward pass first")
        return rates  # type: ignore[return-value]


class DLinear(nn.Module):
    """DLinear (Zeng et al., AAAI 2023): moving-average trend/seasonal split, one linear map L->H for each part.

    ``forward(x [B, L, D]) -> [B, H, D]``; weights shared across variables (``individual=False``); the moving
    average pads by repeating the first/last value ``(kernel - 1) / 2`` times.
    """

    def __init__(self, seq_len: int, pred_len: int, n_vars: int, kernel_size: int = 25) -> None:
        super().__init__()
        self.seq_len = check_int(seq_len, "seq_len", low=2)
        self.pred_len = check_int(pred_len, "pred_len", low=1)
        self.n_vars = check_int(n_vars, "n_vars", low=1)
        self.kernel_size = check_int(kernel_size, "kernel_size", low=1)
        if self.kernel_size % 2 == 0:
            raise ValueError(f"kernel_size must be odd, got {self.kernel_size}")
        self.seasonal = nn.Linear(self.seq_len, self.pred_len)
        self.trend = nn.Linear(self.seq_len, self.pred_len)
        with torch.no_grad():
            for lin in (self.seasonal, self.trend):
                lin.weight.fill_(1.0 / self.seq_len)

    def forward(self, x: Any) -> Any:
        """Forecast ``[B, H, D]`` for ``x [B, L, D]``."""
        _check_input(x, self.seq_len, self.n_vars)
        k = (self.kernel_size - 1) // 2
        padded = torch.cat([x[:, :1].expand(-1, k, -1), x, x[:, -1:].expand(-1, k, -1)], dim=1)
        trend = padded.unfold(1, self.kernel_size, 1).mean(dim=-1)  # [B, L, D]
        seasonal = x - trend
        out = self.seasonal(seasonal.transpose(1, 2)) + self.trend(trend.transpose(1, 2))
        return out.transpose(1, 2)

    def predict(self, x: Any) -> Any:
        """Same as :meth:`forward` (for a common interface with :class:`SpikFForecaster`)."""
        return self.forward(x)
