"""f4gemm: MXFP4 x MXFP4 GEMM (OCP MX v1.0: e2m1 elements, one E8M0 scale per 32) for Hopper GPUs, with a CPU
backend, from Python.

    q, s = f4gemm.quantize(x)                  # bf16/fp32 [M, K] -> MXFP4, on the GPU for GPU arrays
    w = f4gemm.pack_weight(wq, ws)             # plain MXFP4 [N, K] -> the packed weight, once
    d = f4gemm.matmul(q, s, w)                 # bf16 [M, N] = A W^T
    lin = f4gemm.torch.Linear.from_linear(nn_linear)   # an MXFP4 nn.Linear (needs torch)

Arrays: torch, cupy, jax, numpy, or anything with __dlpack__ / __cuda_array_interface__; GPU work runs on the
framework's current stream, host arrays on the CPU backend. docs/PYTHON.md is the reference.
"""

from ._core import (
    Session,
    Weight,
    default_session,
    dequantize,
    kernels,
    matmul,
    pack_weight,
    quantize,
    select,
    unpack_weight,
)
from ._f4gemm import operand_bytes, weight_bytes

__version__ = "0.1.0"

__all__ = [
    "Session",
    "Weight",
    "default_session",
    "dequantize",
    "kernels",
    "matmul",
    "operand_bytes",
    "pack_weight",
    "quantize",
    "select",
    "unpack_weight",
    "weight_bytes",
]


def __getattr__(name):
    # f4gemm.torch (the MXFP4 Linear) is imported on first use, so `import f4gemm` never imports torch.
    if name == "torch":
        import importlib

        return importlib.import_module(".torch", __name__)
    raise AttributeError(f"module 'f4gemm' has no attribute {name!r}")
