"""f4gemm's Python API over the C++ Session (f4gemm._f4gemm): Session, Weight, quantize, pack_weight, matmul,
dequantize, kernels, select. Every argument is checked here, before anything is allocated or launched, and a bad
one raises ValueError naming the argument, its value and the fix (docs/PYTHON.md)."""

from __future__ import annotations

import math
import os
import threading
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from . import _arrays as ar
from . import _f4gemm as _ext

_PACKAGE_CO_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sm90a")
_MANIFEST = "f4gemm_bf16_per1x32Fp4.csv"
ROW_PAD = 256  # rows of the A operand layout are allocated to a multiple of this
K_PAD = 256    # ... and its K (so the packed weight W's) padded to one


def _round_up(x: int, m: int) -> int:
    return (x + m - 1) // m * m


def _co_dir(co_dir: Optional[str]) -> str:
    """The code-object folder: the argument, else $F4GEMM_CO_DIR, else the package's own sm90a/ (when the wheel
    was built with nvcc), else "" (the library's own resolution order)."""
    if co_dir:
        return os.fspath(co_dir)
    env = os.environ.get("F4GEMM_CO_DIR")
    if env:
        return env
    if os.path.isfile(os.path.join(_PACKAGE_CO_DIR, _MANIFEST)):
        return _PACKAGE_CO_DIR
    return ""


ACCUMS = ("exact", "promoted")


def _check_accum(accum: Any) -> str:
    """The accumulation mode, checked: 'exact' (every result the nearest bf16 of the exact sum) or 'promoted' (FP8
    partial sums promoted into fp32 every 128 K: faster, bounded error, docs/VERIFY.md)."""
    if not isinstance(accum, str) or accum not in ACCUMS:
        raise ValueError(f"accum: {accum!r} is not a mode: pass accum='exact' (every result the nearest bf16 of the "
                         f"exact sum) or accum='promoted' (FP8 partial sums promoted into fp32 every 128 K; bounded "
                         f"error, docs/VERIFY.md)")
    return accum


def _parse_device(device: Any) -> Tuple[str, int]:
    """('cpu' | 'cuda', ordinal) of a device argument: None, 'cpu', 'cuda', 'cuda:N', N, or a torch.device."""
    if device is None:
        if _ext.cuda_compiled() and _ext.cuda_device_count() > 0:
            return "cuda", 0
        return "cpu", 0
    if isinstance(device, bool):
        raise ValueError(f"device: {device!r} is not a device: pass 'cpu', 'cuda', 'cuda:N' or an ordinal N")
    if isinstance(device, int):
        if device < 0:
            raise ValueError(f"device: ordinal {device} is negative: pass a CUDA device index >= 0, or 'cpu'")
        return "cuda", device
    text = str(device)
    if text == "cpu":
        return "cpu", 0
    if text == "cuda":
        return "cuda", 0
    if text.startswith("cuda:") and text[5:].isdigit():
        return "cuda", int(text[5:])
    raise ValueError(f"device: {device!r} is not a device: pass 'cpu', 'cuda', 'cuda:N' or an ordinal N")


def _need_dtype(a: ar.Arr, allowed: Tuple[str, ...], fix: str) -> None:
    if a.dtype not in allowed:
        want = " or ".join(allowed)
        raise ValueError(f"{a.name}: dtype {a.dtype} is not supported: pass {want} ({fix})")


def _need_2d(a: ar.Arr, what: str) -> Tuple[int, int]:
    if len(a.shape) != 2:
        raise ValueError(f"{a.name}: expected a 2-D array {what}, got shape {tuple(a.shape)}: reshape it "
                         f"(x.reshape(-1, x.shape[-1]))")
    if a.shape[0] < 1 or a.shape[1] < 1:
        raise ValueError(f"{a.name}: empty array of shape {tuple(a.shape)}: pass at least one row and column")
    return int(a.shape[0]), int(a.shape[1])


def _need_k(k: int, a: ar.Arr, how: str) -> None:
    if k % 32:
        raise ValueError(f"{a.name}: K = {k}{how} is not a multiple of 32: MXFP4 has one scale per 32 elements; "
                         f"pad K with zeros to {_round_up(k, 32)}")


def _mx_pair(qa: Any, sa: Any, q_name: str, s_name: str, rows: str, q_fix: str,
             s_fix: str) -> Tuple[ar.Arr, ar.Arr, int, int]:
    """An adopted MXFP4 pair, checked: q uint8 [rows, K/2] (element 2i in the low nibble), scales uint8
    [rows, K/32], K a multiple of 32. q_fix, s_fix: what each dtype error asks for. Returns (q, scales, rows, K)."""
    a = ar.describe(qa, _adopted_kind(qa), q_name)
    s = ar.describe(sa, _adopted_kind(sa), s_name)
    _need_dtype(a, ("uint8",), q_fix)
    _need_dtype(s, ("uint8",), s_fix)
    r, k2 = _need_2d(a, f"[{rows}, K/2]")
    k = 2 * k2
    _need_k(k, a, f" (2 x {k2} bytes per row)")
    if tuple(s.shape) != (r, k // 32):
        raise ValueError(f"{s_name}: shape {tuple(s.shape)} does not match {q_name} {tuple(a.shape)}: pass the "
                         f"scales [{rows}, K/32] = {(r, k // 32)}")
    return a, s, r, k


def _need_contiguous(a: ar.Arr) -> None:
    if not ar.is_contiguous(a):
        raise ValueError(f"{a.name}: non-contiguous array (shape {tuple(a.shape)}, strides {tuple(a.strides)} "
                         f"elements): pass a contiguous one (x.contiguous() in torch, cupy.ascontiguousarray(x))")


class Weight:
    """A packed MXFP4 weight W of an [n, k] matrix B: the one format every shipped kernel reads, for every M
    (a 256-byte header, then B padded to round_up(n, 256) x round_up(k, 256) with its scales inside;
    docs/LAYOUTS_SM90.md). Made by pack_weight(); `data` is a uint8 array of `nbytes` bytes in the caller's
    framework, on `device`; `session` is the Session that packed it (GEMMs on the GPU use it, so a graph capture
    finds the weight in its records)."""

    def __init__(self, buf: Any, n: int, k: int, session: "Session", kind: str, adopted: str):
        self._buf = buf          # the adopted array (torch, cupy, numpy) whose pointer the GEMMs read
        self._adopted = adopted
        self._kind = kind
        self._plain: Optional[Tuple[np.ndarray, np.ndarray]] = None  # host unpack, for the CPU backend
        self.n = int(n)
        self.k = int(k)
        self.session = session
        self.data = ar.give_back(buf, kind, adopted)

    @property
    def nbytes(self) -> int:
        return _ext.weight_bytes(self.n, self.k)

    @property
    def device(self) -> str:
        return self.session.device

    @property
    def shape(self) -> Tuple[int, int]:
        return (self.n, self.k)

    def _host_bytes(self) -> np.ndarray:
        return np.ascontiguousarray(ar.to_host(self._buf, self._adopted)).reshape(-1)

    def _host_plain(self) -> Tuple[np.ndarray, np.ndarray]:
        if self._plain is None:
            self._plain = _ext.unpack_weight_host(self._host_bytes())
        return self._plain

    def unpack(self) -> Tuple[Any, Any]:
        """The plain (q [n, k/2] uint8, scales [n, k/32] uint8) W was packed from, in the weight's framework and
        on its device (read back through the host: for tests and inspection, not for a hot path)."""
        q, s = _ext.unpack_weight_host(self._host_bytes())
        dev = self.session._index if self.session.gpu else -1
        return (ar.from_host(q, self._kind, dev, self._adopted), ar.from_host(s, self._kind, dev, self._adopted))

    def __repr__(self) -> str:
        return f"f4gemm.Weight(n={self.n}, k={self.k}, nbytes={self.nbytes}, device='{self.device}')"


class Session:
    """One device (a CUDA GPU, or the CPU backend), its kernels, tuned table and workspace, opened once.

    device: None (the first CUDA device if there is one, else the CPU), 'cpu', 'cuda', 'cuda:N', an ordinal N or
    a torch.device. co_dir: the code-object folder (default: $F4GEMM_CO_DIR, else the package's sm90a/).
    GPU work runs on the current stream of the framework the arrays come from (torch, cupy); calls on one
    Session must be ordered (one stream, or synchronised), as its GEMMs share one workspace.
    pdl: launch each GPU GEMM with programmatic dependent launch, so that in a chain (a layer's GEMMs) its start-up
    overlaps the tail of the kernel ahead on the stream; the kernels wait for that kernel before they touch memory,
    so any predecessor is safe (docs/KERNELS_SM90.md "Launch overlap"). Settable later as session.pdl."""

    def __init__(self, device: Any = None, co_dir: Optional[str] = None, pdl: bool = False):
        self.pdl = pdl  # checked by the setter
        backend, index = _parse_device(device)
        self._index = index
        self._s = _ext.Session(backend, index, _co_dir(co_dir) if backend == "cuda" else "", True)
        self.gpu = bool(self._s.gpu)
        self.device = f"cuda:{index}" if self.gpu else "cpu"

    @property
    def pdl(self) -> bool:
        """Whether this Session's GPU GEMMs are launched with programmatic dependent launch."""
        return self._pdl

    @pdl.setter
    def pdl(self, on: bool) -> None:
        if not isinstance(on, bool):
            raise ValueError(f"pdl: got {on!r}: pass True (overlap each GEMM's start with the kernel ahead) or False")
        self._pdl = on

    # ---- what it is ----
    @property
    def backend(self) -> str:
        return self._s.backend

    @property
    def device_name(self) -> str:
        return self._s.device_name

    @property
    def num_sms(self) -> int:
        return self._s.num_sms

    @property
    def co_dir(self) -> str:
        return self._s.co_dir

    def kernels(self) -> List[Dict[str, Any]]:
        """The manifest's kernels (filtered for the device): one dict each (index, name, knl_name, tile_m, tile_n,
        split_k, arch, abi, b_layout, threads, smem_bytes, max_m, min_m, priority, accum: the mode the kernel
        implements). Empty on the CPU backend."""
        return self._s.kernels()

    def select(self, m: int, n: int, k: int, accum: str = "exact") -> Dict[str, Any]:
        """The kernel the policy picks for an m x n x k GEMM in accumulation mode `accum` (the tuned table, else the
        heuristic): a dict with kernel (its file name; None on the CPU backend), index, log2_k_split, tuned,
        launch_k, workspace_bytes, num_cu (the SM count the policy answered for), slab_n (the N-slab width the launch
        runs, 0 for one launch: docs/ABI_SM90.md "N slabs"), accum (the request's mode) and kernel_accum (the chosen
        kernel's: exact where a promoted request found no promoted kernel for the shape, and on the CPU backend)."""
        return self._s.select(int(m), int(n), int(k), _check_accum(accum))

    def synchronize(self) -> None:
        """Waits for the work issued on the library's own stream (used for jax and other stream-less callers)."""
        self._s.synchronize()

    def __repr__(self) -> str:
        return f"f4gemm.Session(device='{self.device}', backend='{self.backend}', name='{self.device_name}')"

    # ---- device placement ----
    def _place(self, arrs: List[ar.Arr]) -> int:
        """The device every array is on, checked against this Session; -1 for the host."""
        first = arrs[0]
        for a in arrs[1:]:
            if a.device != first.device:
                raise ValueError(f"{a.name}: on {a.where} but {first.name} is on {first.where}: pass every operand "
                                 f"on one device")
        if first.device < 0 and self.gpu:
            raise ValueError(f"{first.name}: on the CPU while this Session is on {self.device}: move it to the GPU "
                             f"(x.cuda(), cupy.asarray(x)), or use a CPU Session (f4gemm.Session('cpu')) or numpy")
        if first.device >= 0 and not self.gpu:
            raise ValueError(f"{first.name}: on {first.where} while this Session runs on the CPU: use a GPU Session "
                             f"(f4gemm.Session('{first.where}')) or the module functions, or pass host arrays")
        if first.device >= 0 and first.device != self._index:
            raise ValueError(f"{first.name}: on {first.where} while this Session is on {self.device}: use the "
                             f"Session of that device (f4gemm.Session('{first.where}')) or move the array")
        return first.device

    # ---- quantize ----
    def quantize(self, x: Any) -> Tuple[Any, Any]:
        """bf16 or fp32 x [M, K] (K % 32 == 0) -> MXFP4 (q, scales), OCP MX v1.0, bit-identical between the GPU
        and the host. On the GPU: q uint8 [M, K/2] and scales uint8 [M, K/32] are views into the A operand layout
        the kernels read (rows allocated to round_up(M, 256), row length round_up(K, 256)/2 and /32: not
        contiguous when K % 256 != 0), so matmul reads them in place. On the host (numpy, CPU tensors): plain
        contiguous arrays. x may have a row stride (its last dimension must be contiguous)."""
        xa, kind = ar.adopt(x, "x")
        return self._quantize(xa, kind)

    def _quantize(self, xa: Any, kind: str) -> Tuple[Any, Any]:
        a = ar.describe(xa, _adopted_kind(xa), "x")
        if a.kind == ar.CUPY:  # cupy has no bfloat16 dtype
            _need_dtype(a, ("float32",), "x.astype(cupy.float32)")
        else:
            _need_dtype(a, ("bfloat16", "float32"),
                        "x.to(torch.bfloat16)" if a.kind == ar.TORCH else "x.astype(numpy.float32)")
        m, k = _need_2d(a, "[M, K]")
        _need_k(k, a, "")
        dev = self._place([a])
        if dev < 0:
            host = np.ascontiguousarray(ar.to_host(a.obj, a.kind), dtype=np.float32)
            q, s = _ext.quantize_host(host)
            return (ar.from_host(q, kind, -1, a.kind), ar.from_host(s, kind, -1, a.kind))
        if a.strides[1] != 1 or (m > 1 and a.strides[0] < k):  # rows with a pitch are read in place, else a copy
            with ar.device_guard(a.kind, dev):
                a = ar.describe(ar.contiguous(a), a.kind, "x")
        ldx = a.strides[0] if m > 1 else k
        mp, kp = _round_up(m, ROW_PAD), _round_up(k, K_PAD)
        with ar.device_guard(a.kind, dev):
            q_store = ar.empty(a.kind, (mp, kp // 2), "uint8", dev)
            s_store = ar.empty(a.kind, (mp, kp // 32), "uint8", dev)
            stream = ar.stream_of(a.kind, dev)
            self._s.quantize(a.ptr, a.dtype == "bfloat16", m, k, ldx, ar.ptr(q_store, a.kind),
                             ar.ptr(s_store, a.kind), stream)
        return (ar.give_back(q_store[:m, : k // 2], kind, a.kind), ar.give_back(s_store[:m, : k // 32], kind, a.kind))

    # ---- pack_weight ----
    def pack_weight(self, q: Any, scales: Any) -> Weight:
        """Plain MXFP4 B: q uint8 [N, K/2] (element 2i in the low nibble) and scales uint8 [N, K/32] (E8M0) ->
        the packed weight W, once per weight (on the GPU by the CUDA packer, on the host by the host packer: the
        same bytes). Non-contiguous inputs are copied first (quantize's views when K % 256 != 0 among them)."""
        qa, kind = ar.adopt(q, "q")
        sa, _ = ar.adopt(scales, "scales")
        return self._pack_weight(qa, sa, kind)

    def _pack_weight(self, qa: Any, sa: Any, kind: str) -> Weight:
        a, s, n, k = _mx_pair(qa, sa, "q", "scales", "N", "packed e2m1 pairs, two elements per byte",
                              "E8M0 exponents")
        dev = self._place([a, s])
        if dev < 0:
            w = _ext.pack_weight_host(np.ascontiguousarray(ar.to_host(a.obj, a.kind)),
                                      np.ascontiguousarray(ar.to_host(s.obj, s.kind)))
            buf = ar.from_host(w, a.kind, -1, a.kind)
            return Weight(buf, n, k, self, kind, a.kind)
        with ar.device_guard(a.kind, dev):
            qc = a if ar.is_contiguous(a) else ar.describe(ar.contiguous(a), a.kind, "q")
            sc = s if ar.is_contiguous(s) else ar.describe(ar.contiguous(s), s.kind, "scales")
            w = ar.empty(a.kind, (_ext.weight_bytes(n, k),), "uint8", dev)
            self._s.pack_weight(qc.ptr, sc.ptr, n, k, ar.ptr(w, a.kind), ar.stream_of(a.kind, dev))
        return Weight(w, n, k, self, kind, a.kind)

    # ---- matmul ----
    def matmul(self, a_q: Any, a_scales: Any, w: Weight, *, c: Any = None, alpha: float = 1.0, beta: float = 0.0,
               accum: str = "exact", out: Any = None) -> Any:
        """D [M, N] = alpha * A W^T + beta * C with A = (a_q uint8 [M, K/2], a_scales uint8 [M, K/32]) and the
        packed weight w of [N, K]. D is bf16 (torch, jax) or float32 holding the bf16 values exactly (numpy,
        cupy: no bfloat16 dtype there). c: [M, N], bf16 (torch, jax) or float32 (numpy, cupy; rounded to bf16),
        used only when beta != 0. accum: 'exact' or 'promoted' (docs/VERIFY.md). out: where D goes, of D's dtype and
        shape, contiguous (not for jax)."""
        mode = _check_accum(accum)
        if not isinstance(w, Weight):
            raise ValueError(f"w: got {ar._type_name(w)}: pass a Weight from f4gemm.pack_weight(q, scales)")
        qa, kind = ar.adopt(a_q, "a_q")
        sa, _ = ar.adopt(a_scales, "a_scales")
        return self._matmul(qa, sa, kind, w, c, alpha, beta, out, mode)

    def _matmul(self, qa: Any, sa: Any, kind: str, w: Weight, c: Any, alpha: Any, beta: Any, out: Any,
                accum: str = "exact") -> Any:
        a, s, m, k = _mx_pair(qa, sa, "a_q", "a_scales", "M", "packed e2m1 pairs from f4gemm.quantize",
                              "E8M0 exponents from f4gemm.quantize")
        if k != w.k:
            raise ValueError(f"a_q: K = {k} but w is [{w.n}, {w.k}]: quantize activations with K = {w.k}")
        try:
            alpha_f, beta_f = float(alpha), float(beta)
        except (TypeError, ValueError):
            raise ValueError(f"alpha, beta: ({alpha!r}, {beta!r}) are not numbers: pass floats") from None
        if not (math.isfinite(alpha_f) and math.isfinite(beta_f)):
            raise ValueError(f"alpha, beta: ({alpha_f}, {beta_f}) must be finite: pass finite floats")
        n = w.n
        dev = self._place([a, s])
        w_dev = w.session._index if w.session.gpu else -1
        if w_dev != dev:
            raise ValueError(f"w: the weight is on {w.device} but a_q is on {a.where}: pass operands on one device")
        if dev < 0:
            return self._matmul_host(a, s, kind, w, c, alpha_f, beta_f, out, m, n, accum)
        if w._adopted != a.kind:
            raise ValueError(f"w: packed from {w._adopted} arrays, a_q is a {a.kind} array: pack the weight from "
                             f"arrays of the activations' framework")
        return self._matmul_gpu(a, s, kind, w, c, alpha_f, beta_f, out, m, n, k, dev, accum)

    def _matmul_host(self, a, s, kind, w, c, alpha, beta, out, m, n, accum="exact"):
        out_dtype = "bfloat16" if a.kind == ar.TORCH else "float32"
        c_bits = None
        if c is not None and beta != 0.0:
            ca, _ = ar.adopt(c, "c")
            cd = ar.describe(ca, _adopted_kind(ca), "c")
            _need_dtype(cd, ("bfloat16", "float32"), "C [M, N]")
            if tuple(cd.shape) != (m, n):
                raise ValueError(f"c: shape {tuple(cd.shape)} is not [M, N] = {(m, n)}: pass C of the output's shape")
            if cd.device >= 0:
                raise ValueError(f"c: on {cd.where} while a_q is on the CPU: pass every operand on one device")
            c_bits = ar.f32_to_bf16_bits(ar.to_host(cd.obj, cd.kind))
        if out is not None:
            o = self._check_out(out, kind, a.kind, out_dtype, m, n, -1)
        wq, ws = w._host_plain()
        bits = self._s.gemm_host(np.ascontiguousarray(ar.to_host(a.obj, a.kind)),
                                 np.ascontiguousarray(ar.to_host(s.obj, s.kind)), wq, ws, c_bits, alpha, beta,
                                 accum)
        if a.kind == ar.TORCH:
            torch = ar._mod("torch")
            d = torch.from_numpy(bits.view(np.int16)).view(torch.bfloat16)
        else:
            d = ar.bf16_bits_to_f32(bits)
        if out is not None:
            if a.kind == ar.TORCH:
                o.obj.copy_(d)
            else:
                np.copyto(o.obj, d)
            return out
        return ar.from_host(d, kind, -1, a.kind) if a.kind != ar.TORCH else d

    def _check_out(self, out: Any, kind: str, adopted: str, dtype: str, m: int, n: int, dev: int) -> ar.Arr:
        if kind == ar.JAX:
            raise ValueError("out: jax arrays are immutable: leave out=None and use the returned array")
        oa, okind = ar.adopt(out, "out")
        o = ar.describe(oa, okind, "out")
        if okind != adopted:
            raise ValueError(f"out: a {okind} array, the operands are {adopted} arrays: pass out of their framework")
        _need_dtype(o, (dtype,), f"D [M, N] is {dtype} for {adopted} arrays")
        if tuple(o.shape) != (m, n):
            raise ValueError(f"out: shape {tuple(o.shape)} is not [M, N] = {(m, n)}: pass out of the output's shape")
        if o.device != dev:
            where = "cpu" if dev < 0 else f"cuda:{dev}"
            raise ValueError(f"out: on {o.where} while the operands are on {where}: pass out on their device")
        _need_contiguous(o)
        return o

    def _matmul_gpu(self, a, s, kind, w, c, alpha, beta, out, m, n, k, dev, accum="exact"):
        mp, kp = _round_up(m, ROW_PAD), _round_up(k, K_PAD)
        bits_only = a.kind == ar.CUPY  # no bfloat16 dtype: D and C travel as bf16 bits (uint16)
        out_dtype = "float32" if bits_only else "bfloat16"
        c_arr = None
        if c is not None and beta != 0.0:
            ca, ckind = ar.adopt(c, "c")
            c_arr = ar.describe(ca, _adopted_kind(ca), "c")
            _need_dtype(c_arr, (out_dtype,), f"C [M, N] is {out_dtype} for {a.kind} arrays")
            if tuple(c_arr.shape) != (m, n):
                raise ValueError(f"c: shape {tuple(c_arr.shape)} is not [M, N] = {(m, n)}: pass C of the output's "
                                 f"shape")
            if c_arr.device != dev:
                raise ValueError(f"c: on {c_arr.where} while a_q is on cuda:{dev}: pass every operand on one device")
            if c_arr.kind != a.kind:
                raise ValueError(f"c: a {c_arr.kind} array, the operands are {a.kind} arrays: pass C of their "
                                 f"framework")
        o = self._check_out(out, kind, a.kind, out_dtype, m, n, dev) if out is not None else None
        # A in place when it is the operand layout (quantize's views: row pitch round_up(K,256)/2 and /32, storage
        # for round_up(M,256) rows), else padded into it by the library (pad_a: one pass over A).
        in_place = all(_operand_view(x, m, width) for x, width in ((a, kp // 2), (s, kp // 32)))
        with ar.device_guard(a.kind, dev):
            stream = ar.stream_of(a.kind, dev)
            keep = []  # temporaries that must outlive the launches (the framework's allocator orders their reuse)
            if not in_place:  # other layouts: made contiguous (a copy) if they are not, then padded
                a = a if ar.is_contiguous(a) else ar.describe(ar.contiguous(a), a.kind, "a_q")
                s = s if ar.is_contiguous(s) else ar.describe(ar.contiguous(s), s.kind, "a_scales")
                keep += [a.obj, s.obj]
            a_ptr, s_ptr = a.ptr, s.ptr
            if not in_place:
                qp = ar.empty(a.kind, (mp * kp // 2,), "uint8", dev)
                sp = ar.empty(a.kind, (mp * kp // 32,), "uint8", dev)
                keep += [qp, sp]
                a_ptr, s_ptr = ar.ptr(qp, a.kind), ar.ptr(sp, a.kind)
                self._s.pad_a(a.ptr, s.ptr, m, k, a_ptr, s_ptr, stream)
            c_ptr = 0
            if c_arr is not None:
                if not ar.is_contiguous(c_arr):
                    c_arr = ar.describe(ar.contiguous(c_arr), c_arr.kind, "c")
                    keep.append(c_arr.obj)
                if bits_only:
                    cb = ar.f32_to_bf16_bits(c_arr.obj, ar._mod("cupy"))
                    keep.append(cb)
                    c_ptr = ar.ptr(cb, a.kind)
                else:
                    c_ptr = c_arr.ptr
            if bits_only:
                d = ar.empty(a.kind, (m, n), "uint16", dev)
            else:
                d = o.obj if o is not None else ar.empty(a.kind, (m, n), "bfloat16", dev)
            self._s.gemm(m, n, k, alpha, beta, a_ptr, s_ptr, ar.ptr(w._buf, w._adopted), c_ptr, ar.ptr(d, a.kind),
                         stream, accum, self._pdl)
            if bits_only:
                wide = ar.bf16_bits_to_f32(d, ar._mod("cupy"))
                if o is not None:
                    o.obj[...] = wide
                    return out
                d = wide
        if o is not None:
            return out
        return ar.give_back(d, kind, a.kind)


def _adopted_kind(x: Any) -> str:
    torch = ar._mod("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        return ar.TORCH
    if isinstance(x, np.ndarray):
        return ar.NUMPY
    return ar.CUPY


def _operand_view(a: ar.Arr, m: int, width: int) -> bool:
    """True when `a` (rows [M, width-or-less]) is a view of the A operand layout: unit column stride, row pitch
    `width` bytes, and storage for round_up(M, 256) rows of it (torch and cupy tell their storage)."""
    if a.strides[1] != 1 or (m > 1 and a.strides[0] != width):
        return False
    have = ar.bytes_from(a)
    return have is not None and have >= _round_up(m, ROW_PAD) * width


# ---- module-level functions: one default Session per device ------------------------------------------------------

_sessions: Dict[str, Session] = {}
_lock = threading.Lock()


def default_session(device: Any = None) -> Session:
    """The Session the module functions use for `device` ('cpu', 'cuda:N', ...; None: the first CUDA device if
    there is one, else the CPU), opened at its first use and kept."""
    backend, index = _parse_device(device)
    key = "cpu" if backend == "cpu" else f"cuda:{index}"
    with _lock:
        s = _sessions.get(key)
        if s is None:
            s = _sessions[key] = Session(key)
        return s


def _session_of(a: ar.Arr) -> Session:
    return default_session("cpu" if a.device < 0 else f"cuda:{a.device}")


def quantize(x: Any) -> Tuple[Any, Any]:
    """Session.quantize on the default Session of x's device (numpy and CPU tensors: the CPU backend)."""
    xa, kind = ar.adopt(x, "x")
    return _session_of(ar.describe(xa, _adopted_kind(xa), "x"))._quantize(xa, kind)


def pack_weight(q: Any, scales: Any) -> Weight:
    """Session.pack_weight on the default Session of q's device."""
    qa, kind = ar.adopt(q, "q")
    sa, _ = ar.adopt(scales, "scales")
    return _session_of(ar.describe(qa, _adopted_kind(qa), "q"))._pack_weight(qa, sa, kind)


def matmul(a_q: Any, a_scales: Any, w: Weight, *, c: Any = None, alpha: float = 1.0, beta: float = 0.0,
           accum: str = "exact", out: Any = None) -> Any:
    """Session.matmul on the Session that packed w (its default Session, unless you packed it with your own)."""
    mode = _check_accum(accum)
    if not isinstance(w, Weight):
        raise ValueError(f"w: got {ar._type_name(w)}: pass a Weight from f4gemm.pack_weight(q, scales)")
    qa, kind = ar.adopt(a_q, "a_q")
    sa, _ = ar.adopt(a_scales, "a_scales")
    return w.session._matmul(qa, sa, kind, w, c, alpha, beta, out, mode)


def unpack_weight(w: Weight) -> Tuple[Any, Any]:
    """w.unpack(): the plain (q, scales) the weight was packed from."""
    if not isinstance(w, Weight):
        raise ValueError(f"w: got {ar._type_name(w)}: pass a Weight from f4gemm.pack_weight(q, scales)")
    return w.unpack()


_E2M1 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0],
                 dtype=np.float32)


def dequantize(q: Any, scales: Any) -> Any:
    """MXFP4 (q uint8 [M, K/2], scales uint8 [M, K/32]) -> float32 [M, K] (NaN where a scale is 0xFF; values
    >= 2^128, which only scales 0xFD and 0xFE reach, become +-Inf), in the caller's framework and on its device."""
    qa, kind = ar.adopt(q, "q")
    sa, _ = ar.adopt(scales, "scales")
    a, s, m, k = _mx_pair(qa, sa, "q", "scales", "M", "packed e2m1 pairs", "E8M0 exponents")
    if a.device != s.device:
        raise ValueError(f"scales: on {s.where} but q is on {a.where}: pass both on one device")
    if a.kind == ar.TORCH:  # on the tensors' device, with torch ops
        torch = ar._mod("torch")
        lut = torch.from_numpy(_E2M1).to(a.obj.device)
        qb = a.obj.long()
        vals = torch.stack((lut[qb & 0xF], lut[qb >> 4]), dim=-1).reshape(m, k)
        sc = torch.exp2(s.obj.float() - 127.0)
        sc = torch.where(s.obj == 0xFF, torch.full_like(sc, float("nan")), sc)
        return ar.give_back(vals * sc.repeat_interleave(32, dim=1), kind, a.kind)
    if a.kind == ar.CUPY:
        cupy = ar._mod("cupy")
        lut = cupy.asarray(_E2M1)
        qb = a.obj.astype(cupy.int64)
        vals = cupy.stack((lut[qb & 0xF], lut[qb >> 4]), axis=-1).reshape(m, k)
        sc = cupy.exp2(s.obj.astype(cupy.float32) - 127.0)
        sc = cupy.where(s.obj == 0xFF, cupy.float32(float("nan")), sc)
        return ar.give_back(vals * cupy.repeat(sc, 32, axis=1), kind, a.kind)
    x = _ext.dequantize_host(np.ascontiguousarray(a.obj), np.ascontiguousarray(s.obj))
    return ar.from_host(x, kind, -1, ar.NUMPY)


def _planning_session(device: Any) -> Any:
    """The C++ session kernels() and select() ask: the device's (a GPU is present, or one is named), else the
    package's manifest read without a device (the SM count of the H200 assumed), else the CPU backend's."""
    if device is not None or (_ext.cuda_compiled() and _ext.cuda_device_count() > 0):
        return default_session(device)._s
    co = _co_dir(None)
    if co and os.path.isfile(os.path.join(co, _MANIFEST)):
        with _lock:
            s = _sessions.get("manifest")
            if s is None:
                s = _sessions["manifest"] = _ext.Session("manifest", 0, co, False)
            return s
    return default_session("cpu")._s


def kernels(device: Any = None) -> List[Dict[str, Any]]:
    """The kernels of the default Session of `device` (without a GPU: the package's manifest, unfiltered)."""
    return _planning_session(device).kernels()


def select(m: int, n: int, k: int, accum: str = "exact", device: Any = None) -> Dict[str, Any]:
    """The kernel choice for m x n x k in accumulation mode `accum` (Session.select) on the default Session of
    `device` (without a GPU: the package's manifest with the H200's 132 SMs; without kernels: the CPU backend,
    kernel None)."""
    mode = _check_accum(accum)
    return _planning_session(device).select(int(m), int(n), int(k), mode)
