"""f4gemm.torch: an MXFP4 nn.Linear for PyTorch on the GPU.

    lin = f4gemm.torch.Linear(nn.Linear(8192, 28672).cuda())   # or Linear.from_linear(...), Linear(packed_weight)
    y = lin(x)   # x [..., 8192] bf16 or fp32 on the GPU

The weight is quantized (OCP MX, on the GPU) and packed once; each forward quantizes the activations on the GPU
straight into the A operand layout and runs one f4gemm GEMM on torch's current stream, then adds the bias (kept in
bf16). The forward makes no host synchronisation and allocates only through torch's allocator, so it can be
captured in a CUDA graph after one eager call of each shape (the usual warm-up; the first call loads the kernel
and sizes the Session's workspace, which a capture must not do).
"""

from __future__ import annotations

from typing import Optional

import torch
from torch import nn

from . import _core
from ._core import Weight

__all__ = ["Linear"]


def _pack_linear(linear: nn.Linear, device: Optional[torch.device]):
    """(packed Weight, bias or None) of an nn.Linear: its weight quantized on the GPU and packed once."""
    w = linear.weight.detach()
    if device is not None:
        w = w.to(device)
    if w.device.type != "cuda":
        raise ValueError(f"linear: its weight is on {w.device}: move the layer to the GPU (linear.cuda()) or "
                         f"pass device='cuda'")
    if linear.in_features % 32:
        raise ValueError(f"linear: in_features = {linear.in_features} is not a multiple of 32: MXFP4 has one "
                         f"scale per 32 inputs; pad the layer's inputs to {(linear.in_features + 31) // 32 * 32}")
    if w.dtype not in (torch.bfloat16, torch.float32):
        w = w.float()  # float16 and float64 weights: quantized from their fp32 values
    q, s = _core.quantize(w)
    bias = linear.bias.detach().to(w.device) if linear.bias is not None else None
    return _core.pack_weight(q, s), bias


class Linear(nn.Module):
    """y = x W^T + b with W an MXFP4 packed weight (f4gemm.Weight of [out_features, in_features]).

    Buffers: `weight_packed` (uint8, the packed W) and `bias` (bf16 [out_features] or None). The output is bf16
    for bf16 input and float32 for float32 input (the GEMM's bf16 result widened)."""

    def __init__(self, weight, bias: Optional[torch.Tensor] = None, accum: str = "exact",
                 device: Optional[torch.device] = None):
        """weight: an f4gemm.Weight (packed [out_features, in_features]) with an optional bias, or a torch.nn.Linear
        (quantized and packed here, its bias kept; device as in from_linear)."""
        super().__init__()
        _core._check_accum(accum)  # before a weight is quantized and packed
        if isinstance(weight, nn.Linear):
            if bias is not None:
                raise ValueError("bias: an nn.Linear brings its own bias: pass bias=None (or set linear.bias)")
            weight, bias = _pack_linear(weight, device)
        elif device is not None:
            raise ValueError(f"device: {device} applies only when weight is a torch.nn.Linear; a packed Weight stays "
                             f"where it was packed (pass device=None)")
        if not isinstance(weight, Weight):
            raise ValueError(f"weight: got {type(weight).__name__}: pass a torch.nn.Linear or an f4gemm.Weight "
                             f"(f4gemm.pack_weight(q, scales))")
        if not weight.session.gpu or not isinstance(weight.data, torch.Tensor):
            raise ValueError(f"weight: packed from {weight._kind} arrays on {weight.device}: the Linear runs on a CUDA "
                             f"device; pack it from CUDA torch tensors")
        self.accum = accum  # "exact" (default) or "promoted" (docs/VERIFY.md section 7)
        self.in_features = weight.k
        self.out_features = weight.n
        self._session = weight.session
        self.register_buffer("weight_packed", weight.data)
        if bias is not None:
            if tuple(bias.shape) != (weight.n,):
                raise ValueError(f"bias: shape {tuple(bias.shape)} is not [out_features] = ({weight.n},): pass the "
                                 f"layer's bias or None")
            bias = bias.detach().to(device=weight.data.device, dtype=torch.bfloat16).contiguous()
        self.register_buffer("bias", bias)

    @classmethod
    def from_linear(cls, linear: nn.Linear, device: Optional[torch.device] = None, accum: str = "exact") -> "Linear":
        """An MXFP4 Linear from an nn.Linear: its weight quantized on the GPU and packed once (the bias kept in
        bf16). device: where to put it (default: the layer's device, which must then be a CUDA device). accum: the
        accumulation mode of its GEMMs, "exact" or "promoted". The same as Linear(linear, accum=..., device=...)."""
        if not isinstance(linear, nn.Linear):
            raise ValueError(f"linear: got {type(linear).__name__}: pass a torch.nn.Linear")
        return cls(linear, accum=accum, device=device)

    def packed_weight(self) -> Weight:
        """The layer's packed weight as an f4gemm.Weight (for f4gemm.matmul, Weight.unpack)."""
        return Weight(self.weight_packed, self.out_features, self.in_features, self._session_for(self.weight_packed.device),
                      "torch", "torch")

    def dequantized_weight(self) -> torch.Tensor:
        """The weight the layer multiplies by: float32 [out_features, in_features], dequantized from W."""
        return _core.dequantize(*self.packed_weight().unpack())

    def _session_for(self, device: torch.device) -> "_core.Session":
        index = device.index if device.index is not None else torch.cuda.current_device()
        if self._session.gpu and self._session._index == index:
            return self._session
        return _core.default_session(f"cuda:{index}")  # the module was moved to another GPU

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        k, n = self.in_features, self.out_features
        w = self.weight_packed
        if not isinstance(x, torch.Tensor):
            raise ValueError(f"x: got {type(x).__name__}: pass a torch.Tensor")
        if x.dtype not in (torch.bfloat16, torch.float32):
            raise ValueError(f"x: dtype {x.dtype} is not supported: pass bfloat16 or float32 (x.to(torch.bfloat16))")
        if x.dim() < 1 or x.shape[-1] != k:
            raise ValueError(f"x: shape {tuple(x.shape)} does not end in in_features = {k}: pass [..., {k}]")
        if x.device != w.device:
            raise ValueError(f"x: on {x.device} while the layer is on {w.device}: move x (x.to('{w.device}'))")
        lead = x.shape[:-1]
        x2 = x.reshape(-1, k)
        m = x2.shape[0]
        if m == 0:
            return x.new_empty((*lead, n))
        if x2.stride(-1) != 1 or (m > 1 and x2.stride(0) < k):
            x2 = x2.contiguous()
        sess = self._session_for(w.device)
        mp = (m + _core.ROW_PAD - 1) // _core.ROW_PAD * _core.ROW_PAD
        kp = (k + _core.K_PAD - 1) // _core.K_PAD * _core.K_PAD
        with torch.cuda.device(w.device):
            a = torch.empty(mp * kp // 2, dtype=torch.uint8, device=w.device)     # (Mp, Kp/2) e2m1 pairs
            sa = torch.empty(mp * kp // 32, dtype=torch.uint8, device=w.device)   # (Mp, Kp/32) E8M0
            d = torch.empty((m, n), dtype=torch.bfloat16, device=w.device)       # (M, N) bf16
            stream = torch.cuda.current_stream(w.device).cuda_stream
            sess._s.quantize(x2.data_ptr(), x2.dtype == torch.bfloat16, m, k, x2.stride(0) if m > 1 else k,
                             a.data_ptr(), sa.data_ptr(), stream)
            sess._s.gemm(m, n, k, 1.0, 0.0, a.data_ptr(), sa.data_ptr(), w.data_ptr(), 0, d.data_ptr(), stream,
                         self.accum, sess.pdl)
            if self.bias is not None:
                d.add_(self.bias)
        y = d.reshape(*lead, n)
        return y if x.dtype == torch.bfloat16 else y.float()

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}, "
                f"accum={self.accum}, "
                f"weight=MXFP4 packed ({self.weight_packed.numel()} bytes)")
