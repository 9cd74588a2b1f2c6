"""The caller's arrays: which framework they come from, what f4gemm reads off them (pointer, dtype, shape,
strides, device), how it makes outputs of the same kind on the same device, and on which stream it runs.

Every input is first *adopted* as a torch tensor, a cupy array or a numpy array, without a copy:
  - torch, cupy, numpy: as they are;
  - jax: through DLPack into torch (or cupy without torch) after ``block_until_ready()``; results go back with
    ``jax.dlpack.from_dlpack`` once the work is finished (jax has no stream f4gemm could join);
  - any other ``__dlpack__`` producer: ``torch.from_dlpack`` (or cupy's); results are torch tensors (cupy arrays);
  - ``__cuda_array_interface__`` objects (numba, ...): ``cupy.asarray`` (or ``torch.as_tensor``); results are cupy
    arrays (torch tensors).
Frameworks are looked up in ``sys.modules`` only: f4gemm never imports torch, cupy or jax itself here.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any, NamedTuple, Optional, Tuple

import numpy as np

# Kinds of adopted arrays, and the kinds results are given back in ("jax" on top of these).
TORCH, CUPY, NUMPY, JAX = "torch", "cupy", "numpy", "jax"


class Arr(NamedTuple):
    """An adopted array as f4gemm sees it. strides in elements; device -1 for host memory, else the CUDA ordinal."""

    obj: Any
    kind: str
    ptr: int
    dtype: str
    shape: Tuple[int, ...]
    strides: Tuple[int, ...]
    device: int
    name: str

    @property
    def where(self) -> str:
        return "cpu" if self.device < 0 else f"cuda:{self.device}"


def _mod(name: str):
    return sys.modules.get(name)


def _type_name(x: Any) -> str:
    t = type(x)
    return f"{t.__module__}.{t.__qualname__}" if t.__module__ != "builtins" else t.__qualname__


def _gpu_from_dlpack(x: Any, name: str) -> Tuple[Any, str]:
    torch, cupy = _mod("torch"), _mod("cupy")
    if torch is not None:
        return torch.from_dlpack(x), TORCH
    if cupy is not None:
        return cupy.from_dlpack(x), CUPY
    raise ValueError(f"{name}: a GPU array of type {_type_name(x)} needs torch or cupy installed (f4gemm makes its "
                     f"outputs with one of them): install torch or cupy, or pass torch/cupy arrays")


def adopt(x: Any, name: str) -> Tuple[Any, str]:
    """(array as torch/cupy/numpy, kind to give results back in)."""
    torch = _mod("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        return x, TORCH
    if isinstance(x, np.ndarray):
        return x, NUMPY
    cupy = _mod("cupy")
    if cupy is not None and isinstance(x, cupy.ndarray):
        return x, CUPY
    jax = _mod("jax")
    if jax is not None and isinstance(x, jax.Array):
        x.block_until_ready()
        platforms = {d.platform for d in x.devices()}
        if platforms == {"cpu"}:
            return np.asarray(x), JAX
        if len(x.devices()) != 1:
            raise ValueError(f"{name}: a jax array sharded over {len(x.devices())} devices: pass an array on one "
                             f"device (jax.device_put(x, jax.devices()[0]))")
        return _gpu_from_dlpack(x, name)[0], JAX
    if hasattr(x, "__cuda_array_interface__"):
        if cupy is not None:
            return cupy.asarray(x), CUPY
        if torch is not None:
            return torch.as_tensor(x, device="cuda"), TORCH
        raise ValueError(f"{name}: a __cuda_array_interface__ object ({_type_name(x)}) needs cupy or torch "
                         f"installed to make outputs: install one of them")
    if hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__"):
        dev_type = int(x.__dlpack_device__()[0])
        if dev_type == 1:  # kDLCPU
            return np.from_dlpack(x), NUMPY
        if dev_type == 2:  # kDLCUDA
            return _gpu_from_dlpack(x, name)
        raise ValueError(f"{name}: DLPack device type {dev_type} is not supported: pass a CUDA or CPU array")
    raise ValueError(f"{name}: got {_type_name(x)}, not an array: pass a torch, cupy, jax or numpy array (or any "
                     f"object with __dlpack__ or __cuda_array_interface__)")


def describe(x: Any, kind: str, name: str) -> Arr:
    """What f4gemm reads off an adopted array (no copy, no device call)."""
    if kind == TORCH:
        dev = x.device
        if dev.type == "cuda":
            index = dev.index if dev.index is not None else _mod("torch").cuda.current_device()
        elif dev.type == "cpu":
            index = -1
        else:
            raise ValueError(f"{name}: device {dev} is not supported: pass a CUDA or CPU tensor (x.cuda())")
        return Arr(x, kind, int(x.data_ptr()), str(x.dtype).replace("torch.", ""), tuple(x.shape),
                   tuple(x.stride()), index, name)
    if kind == CUPY:
        size = x.dtype.itemsize
        return Arr(x, kind, int(x.data.ptr), x.dtype.name, tuple(x.shape), tuple(s // size for s in x.strides),
                   int(x.device.id), name)
    size = x.dtype.itemsize
    return Arr(x, NUMPY, int(x.__array_interface__["data"][0]), x.dtype.name, tuple(x.shape),
               tuple(s // size for s in x.strides), -1, name)


def is_contiguous(a: Arr) -> bool:
    """Row-major and dense (strides of size-1 dimensions do not matter)."""
    expect = 1
    for size, stride in zip(reversed(a.shape), reversed(a.strides)):
        if size != 1 and stride != expect:
            return False
        expect *= size
    return True


def bytes_from(a: Arr) -> Optional[int]:
    """Bytes of the array's storage from its first element on, when the framework tells (torch, cupy)."""
    try:
        if a.kind == TORCH:
            t = a.obj
            return int(t.untyped_storage().nbytes()) - int(t.storage_offset()) * int(t.element_size())
        if a.kind == CUPY:
            mem = a.obj.data.mem
            return int(mem.size) - (int(a.obj.data.ptr) - int(mem.ptr))
    except (AttributeError, RuntimeError, TypeError):
        pass
    return None


def device_guard(kind: str, device: int):
    """Makes `device` the current CUDA device of the framework (so its primary context is current) if it is not."""
    if device < 0:
        return contextlib.nullcontext()
    if kind == TORCH:
        torch = _mod("torch")
        if torch.cuda.current_device() != device:
            return torch.cuda.device(device)
    elif kind == CUPY:
        cupy = _mod("cupy")
        if cupy.cuda.runtime.getDevice() != device:
            return cupy.cuda.Device(device)
    return contextlib.nullcontext()


def stream_of(kind: str, device: int) -> int:
    """The framework's current stream on `device` (a CUstream as an integer; 0 is the legacy default stream, on
    which the library runs its own stream, a blocking one that orders with it)."""
    if kind == TORCH:
        return int(_mod("torch").cuda.current_stream(device).cuda_stream)
    if kind == CUPY:
        return int(_mod("cupy").cuda.get_current_stream().ptr)
    return 0


def empty(kind: str, shape: Tuple[int, ...], dtype: str, device: int) -> Any:
    """An uninitialised array of the adopted kind on `device` (-1: host)."""
    if kind == TORCH:
        torch = _mod("torch")
        return torch.empty(shape, dtype=getattr(torch, dtype),
                           device=torch.device("cuda", device) if device >= 0 else "cpu")
    if kind == CUPY:
        return _mod("cupy").empty(shape, dtype=dtype)
    return np.empty(shape, dtype=dtype)


def contiguous(a: Arr) -> Any:
    if a.kind == TORCH:
        return a.obj.contiguous()
    if a.kind == CUPY:
        return _mod("cupy").ascontiguousarray(a.obj)
    return np.ascontiguousarray(a.obj)


def ptr(x: Any, kind: str) -> int:
    if kind == TORCH:
        return int(x.data_ptr())
    if kind == CUPY:
        return int(x.data.ptr)
    return int(x.__array_interface__["data"][0])


def to_host(x: Any, kind: str) -> np.ndarray:
    """A numpy copy (or view, for host arrays) of an adopted array; torch bfloat16 comes as float32 (exact)."""
    if kind == TORCH:
        torch = _mod("torch")
        t = x.detach()
        if t.dtype == torch.bfloat16:
            t = t.float()
        return t.cpu().numpy()
    if kind == CUPY:
        return x.get()
    return np.asarray(x)


def from_host(a: np.ndarray, kind: str, device: int, like_kind: str) -> Any:
    """The host array `a` as an array of `kind` on `device` (like_kind: the adopted kind that made it)."""
    if kind == NUMPY:
        return a
    if kind == TORCH or (kind == JAX and like_kind == TORCH):
        torch = _mod("torch")
        t = torch.from_numpy(np.ascontiguousarray(a))
        t = t.to(torch.device("cuda", device)) if device >= 0 else t
        return give_back(t, kind, TORCH)
    if kind == CUPY or kind == JAX:
        if device < 0:
            return give_back(a, kind, NUMPY)
        cupy = _mod("cupy")
        with cupy.cuda.Device(device):
            return give_back(cupy.asarray(a), kind, CUPY)
    return a


def give_back(x: Any, kind: str, adopted_kind: str) -> Any:
    """A result made as `adopted_kind` in the caller's `kind` (jax: after the device work is finished)."""
    if kind != JAX:
        return x
    import jax  # the caller passed a jax array, so jax is there

    if adopted_kind == NUMPY:
        return jax.numpy.asarray(x)
    if adopted_kind == TORCH:
        torch = _mod("torch")
        torch.cuda.current_stream(x.device).synchronize()
        x = x.contiguous()
    else:
        cupy = _mod("cupy")
        cupy.cuda.get_current_stream().synchronize()
        x = cupy.ascontiguousarray(x)
    return jax.dlpack.from_dlpack(x)


# ---- bf16 as bits, for numpy and cupy (no bfloat16 dtype there) ------------------------------------------------

def f32_to_bf16_bits(a: Any, xp: Any = np) -> Any:
    """float32 -> bf16 bit patterns (uint16), rounding to nearest even; NaN -> quiet NaN 0x7FC0."""
    a = xp.ascontiguousarray(a, dtype=xp.float32)
    u = a.view(xp.uint32)
    r = ((u + xp.uint32(0x7FFF) + ((u >> xp.uint32(16)) & xp.uint32(1))) >> xp.uint32(16)).astype(xp.uint16)
    return xp.where(xp.isnan(a), xp.uint16(0x7FC0), r)


def bf16_bits_to_f32(b: Any, xp: Any = np) -> Any:
    """bf16 bit patterns (uint16) -> float32, exact."""
    return (b.astype(xp.uint32) << xp.uint32(16)).view(xp.float32)
