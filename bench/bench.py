#!/usr/bin/env python3
"""f4gemm beside its peers on one NVIDIA GPU, in one process (docs/BENCH.md).

f4gemm is called through its C API (build/lib/libf4gemm.so, ctypes) on PyTorch's current stream;
the peers are cuBLASLt FP8 e4m3 (torch._scaled_mm, per-tensor scale, normal and fast
accumulation), cuBLAS bf16 (torch.matmul on the dequantized operands) and Triton
tl.dot_scaled e2m1 x e2m1. Method: for every shape, every system is timed with CUDA graphs of
`calls` launches that rotate over input sets totalling more than 2x the L2, warm-up first;
the systems alternate inside each of `reps` repetitions; the median is reported with the
spread (max-min)/median. f4gemm's output is checked against a float64 reference on the GPU with
the project's metric before any timing.

f4gemm runs in each accumulation mode asked for (--accum exact,promoted, the default both: docs/VERIFY.md), as
two systems beside the peers; the promoted mode's output is judged by its bound |d - ref| <= 2^-8 |ref| +
c_w sum_k |a_k b_k| and the observed constant c reported.

--clocks samples the GPU's SM clock, power and throttle reasons with nvidia-smi every 50 ms beside the run
(clocks.csv in --out) and gives each shape's repetitions their median SM clock and power (`clocks` in bench.json,
a `clk` range on the shape's line): what a spread between repetitions or runs owes to the power cap.

Usage: python3 bench/bench.py [--quick] [--grid serving|decode|decode-other] [--untuned] [--accum exact,promoted] [--out DIR]
       [--lib build/lib/libf4gemm.so] [--clocks]
"""
import argparse
import ctypes
import datetime
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time

torch = None  # imported by main() (bench_torch()), so that --help and the pure helpers below need no torch

L2_BYTES = 60 * 1024 * 1024
E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]

LARGE = [(4096, 4096, 4096), (8192, 8192, 8192), (16384, 16384, 16384), (2048, 8192, 8192),
         (4096, 28672, 4096), (4096, 8192, 28672)]
DECODE = [(m, n, k) for m in (1, 16) for (n, k) in ((16384, 16384), (8192, 8192), (28672, 8192), (8192, 28672))]
MID = [(128, 16384, 16384), (256, 16384, 16384)]
# The serving grid (../shared/reference/serving-grid.md): 70B-class N x K, M from decode to prefill.
SERVING_NK = ((16384, 16384), (10240, 8192), (28672, 8192), (8192, 28672))
GRIDS = {"serving": [(m, n, k) for (n, k) in SERVING_NK for m in (1, 16, 32, 64, 128, 256, 512, 1024, 4096)],
         # the serving grid's decode cells (the decode issue's targets are set on these)
         "decode": [(m, n, k) for (n, k) in SERVING_NK for m in (1, 16, 32, 64)],
         # decode cells off the grid: 8B- and 14B-class projections (N x K = 4096^2, 14336 x 4096, 4096 x 14336,
         # 13824 x 5120, 5120^2, 1024 x 4096) at the same M, where tiles quantise differently on 132 SMs
         "decode-other": [(m, n, k) for (n, k) in ((4096, 4096), (14336, 4096), (4096, 14336), (13824, 5120),
                                                  (5120, 5120), (1024, 4096)) for m in (1, 16, 32, 64)]}


# A 70B-class layer's four projections (N x K): QKV, O, gate+up, down, run in this order by --chain.
LAYER_NK = ((10240, 8192), (8192, 8192), (28672, 8192), (8192, 28672))
CHAIN_M = (1, 16, 32, 64, 128)

ACCUMS = ("exact", "promoted")
ACCUM_CODE = {"exact": 0, "promoted": 1}  # F4GEMM_ACCUM_EXACT, F4GEMM_ACCUM_PROMOTED (include/f4gemm/f4gemm.h)
PEERS = ["cublaslt_fp8", "cublaslt_fp8_fast", "cublas_bf16", "triton_dot_scaled"]


# --clocks: nvidia-smi's samples, one CSV line each (timestamp, SM clock MHz, power W, throttle reasons bit mask;
# drivers from R535 also name the last field clocks_event_reasons.active, and some only that).
SMI_QUERIES = ("timestamp,clocks.sm,power.draw,clocks_throttle_reasons.active",
               "timestamp,clocks.sm,power.draw,clocks_event_reasons.active")


def parse_smi(lines):
    """[(epoch seconds, sm_mhz, power_w, throttle mask)] from nvidia-smi --format=csv,noheader,nounits lines of
    SMI_QUERIES; lines it cannot read (a header, a cut last line, [N/A]) are skipped. Its timestamp is local time."""
    out = []
    for line in lines:
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 4:
            continue
        try:
            t = datetime.datetime.strptime(parts[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
            out.append((t, float(parts[1]), float(parts[2]), int(parts[3], 16)))
        except ValueError:
            continue
    return out


def clocks_per_rep(samples, rep_t):
    """Per repetition i (wall-clock [rep_t[i], rep_t[i + 1])): the median SM clock and power of the samples inside,
    their count, and the throttle reasons any of them had (OR of the masks; None where no sample fell inside)."""
    reps = []
    for t0, t1 in zip(rep_t, rep_t[1:]):
        inside = [x for x in samples if t0 <= x[0] < t1]
        if not inside:
            reps.append({"samples": 0, "sm_mhz": None, "power_w": None, "throttle": None})
            continue
        mask = 0
        for x in inside:
            mask |= x[3]
        reps.append({"samples": len(inside), "sm_mhz": statistics.median(x[1] for x in inside),
                     "power_w": statistics.median(x[2] for x in inside), "throttle": f"0x{mask:x}"})
    return reps


def clock_range(reps):
    """'clk 1755-1980 MHz 612-699 W' over the repetitions that have samples, '' when none has."""
    mhz = [r["sm_mhz"] for r in reps if r["sm_mhz"] is not None]
    w = [r["power_w"] for r in reps if r["power_w"] is not None]
    if not mhz:
        return ""
    return f"clk {min(mhz):.0f}-{max(mhz):.0f} MHz {min(w):.0f}-{max(w):.0f} W"


def start_clock_log(path):
    """nvidia-smi sampling every 50 ms into path, or None (with a one-line note) where there is no nvidia-smi."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        print("--clocks: no nvidia-smi on PATH: no clock log", flush=True)
        return None
    for query in SMI_QUERIES:  # a query this driver does not know ends nvidia-smi at once
        proc = subprocess.Popen([smi, f"--query-gpu={query}", "--format=csv,noheader,nounits", "-lms", "50",
                                 "-i", "0", "-f", path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        if proc.poll() is None:
            return proc
    print("--clocks: nvidia-smi refused both clock queries: no clock log", flush=True)
    return None


def read_clock_log(path):
    try:
        with open(path) as f:
            return parse_smi(f.readlines())
    except OSError:
        return []


def bench_torch():
    """Imports torch into this module (the GPU part of the bench needs it; --help and the helpers do not)."""
    global torch
    if torch is None:
        import torch as t
        torch = t
    return torch


def parse_accums(text):
    """The --accum list: 'exact', 'promoted' or both, comma-separated, in the order given, no repeats."""
    modes = [m.strip() for m in text.split(",") if m.strip()]
    bad = [m for m in modes if m not in ACCUMS]
    if not modes or bad:
        raise ValueError(f"--accum {text!r}: pass exact, promoted or exact,promoted")
    if len(set(modes)) != len(modes):
        raise ValueError(f"--accum {text!r}: a mode is listed twice; pass each once")
    return modes


def f4_system(mode):
    """The system name of f4gemm in accumulation mode `mode` (the exact mode keeps the name 'f4gemm')."""
    return "f4gemm" if mode == "exact" else f"f4gemm_{mode}"


def f4_untuned(mode):
    """The system name of f4gemm's untuned pick in mode `mode` (--untuned), timed when it differs from the tuned one."""
    return f4_system(mode) + "_untuned"


def kernel_cw(f4, kern, k):
    """c_w of the promoted bound for kernel `kern` at reduction K = k (the K it sees, the K of its FP8 chains),
    from the library (include/f4gemm/accum.hpp)."""
    cw = float(f4.lib.f4gemm_kernel_cw(f4.h, kern, k))
    f4._err(cw < 0, "f4gemm_kernel_cw")
    return cw




def wins(rows, mode, peer):
    """(cells where f4gemm in `mode` is faster than `peer`, cells where both ran)."""
    me = f4_system(mode)
    both = [r for r in rows if me in r["systems"] and peer in r["systems"]]
    return sum(r["systems"][me]["us"] < r["systems"][peer]["us"] for r in both), len(both)


def summary_lines(rows, modes):
    """One line per mode: in how many cells f4gemm beats each peer."""
    lines = []
    for mode in modes:
        parts = []
        for peer in PEERS:
            w, n = wins(rows, mode, peer)
            if n:
                parts.append(f"{peer} {w}/{n}")
        lines.append(f"f4gemm accum {mode}: faster than " + (", ".join(parts) if parts else "no peer measured") +
                     " cells")
    return lines


def panels(rows):
    """The plot's panels: {(N, K): rows sorted by M}, in the order the N x K first appear."""
    out = {}
    for r in rows:
        out.setdefault((r["N"], r["K"]), []).append(r)
    return {nk: sorted(rs, key=lambda r: r["M"]) for nk, rs in out.items()}


def kind_of(shape):
    m = shape[0]
    return "decode" if m <= 16 else ("mid" if m <= 256 else "large")


# ---- f4gemm through its C API ------------------------------------------------------------------
class F4gemm:
    def __init__(self, lib_path, co_dir=None):
        self.lib = ctypes.CDLL(lib_path)
        L = self.lib
        L.f4gemm_last_error.restype = ctypes.c_char_p
        L.f4gemm_open.restype = ctypes.c_void_p
        L.f4gemm_open.argtypes = [ctypes.c_char_p, ctypes.c_int]
        L.f4gemm_kernel_name.restype = ctypes.c_char_p
        L.f4gemm_kernel_name.argtypes = [ctypes.c_void_p, ctypes.c_int]
        L.f4gemm_num_kernels.argtypes = [ctypes.c_void_p]
        L.f4gemm_kernel_info.argtypes = [ctypes.c_void_p, ctypes.c_int] + [ctypes.POINTER(ctypes.c_int)] * 3
        L.f4gemm_kernel_b_layout.restype = ctypes.c_char_p
        L.f4gemm_kernel_b_layout.argtypes = [ctypes.c_void_p, ctypes.c_int]
        L.f4gemm_kernel_accum.argtypes = [ctypes.c_void_p, ctypes.c_int]
        L.f4gemm_kernel_cw.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
        L.f4gemm_kernel_cw.restype = ctypes.c_double
        # h, m, n, k, splitk, accum, *kernel, *log2_k_split
        L.f4gemm_select.argtypes = [ctypes.c_void_p] + [ctypes.c_int] * 5 + [ctypes.POINTER(ctypes.c_int)] * 2
        # h, kernel, log2_k_split, accum, m, n, k, alpha, beta, a, a_scale, w, c, d, stream
        L.f4gemm_gemm.argtypes = ([ctypes.c_void_p] + [ctypes.c_int] * 6 + [ctypes.c_float] * 2 +
                                  [ctypes.c_uint64] * 6)
        L.f4gemm_weight_bytes.restype = ctypes.c_size_t
        L.f4gemm_weight_bytes.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
        L.f4gemm_operand_bytes.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int,
                                           ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_size_t)]
        L.f4gemm_pack_weight.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_int,
                                         ctypes.c_int, ctypes.c_uint64, ctypes.c_uint64]
        L.f4gemm_pad_a.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_int, ctypes.c_int,
                                   ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64]
        L.f4gemm_quantize.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                      ctypes.c_int, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64]
        L.f4gemm_set_pdl.argtypes = [ctypes.c_void_p, ctypes.c_int]
        self.h = L.f4gemm_open(co_dir.encode() if co_dir else None, 0)
        if not self.h:
            raise RuntimeError("f4gemm_open: " + L.f4gemm_last_error().decode())
        self.kernels = [L.f4gemm_kernel_name(self.h, i).decode() for i in range(L.f4gemm_num_kernels(self.h))]

    def set_pdl(self, on):
        """Programmatic dependent launch for this handle's GEMMs (f4gemm_set_pdl)."""
        self._err(self.lib.f4gemm_set_pdl(self.h, 1 if on else 0), "f4gemm_set_pdl")

    def info(self, i):
        tm, tn, sk = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
        self.lib.f4gemm_kernel_info(self.h, i, ctypes.byref(tm), ctypes.byref(tn), ctypes.byref(sk))
        return tm.value, tn.value, sk.value

    def b_layout(self, i):
        return self.lib.f4gemm_kernel_b_layout(self.h, i).decode()

    def kernel_accum(self, i):
        """The accumulation mode kernel i implements: 'exact' or 'promoted'."""
        mode = self.lib.f4gemm_kernel_accum(self.h, i)
        self._err(mode < 0, "f4gemm_kernel_accum")
        return ACCUMS[mode]

    def select(self, m, n, k, accum="exact"):
        kern, l2 = ctypes.c_int(), ctypes.c_int()
        if self.lib.f4gemm_select(self.h, m, n, k, 0, ACCUM_CODE[accum], ctypes.byref(kern), ctypes.byref(l2)):
            raise RuntimeError(self.lib.f4gemm_last_error().decode())
        return kern.value, l2.value

    def _err(self, rc, what):
        if rc:
            raise RuntimeError(f"{what}: " + self.lib.f4gemm_last_error().decode())

    def pack_weight(self, b, sb, n, k):
        """The packed weight W of plain B [n, k/2] and its scales [n, k/32] (rows beyond n ignored), packed on
        the GPU by the library (f4gemm_pack_weight: the one definition of the layout, include/f4gemm/weight.h)."""
        nbytes = self.lib.f4gemm_weight_bytes(self.h, n, k)
        self._err(nbytes == 0, "f4gemm_weight_bytes")
        w = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
        self._err(self.lib.f4gemm_pack_weight(self.h, b.data_ptr(), sb.data_ptr(), n, k, w.data_ptr(),
                                              torch.cuda.current_stream().cuda_stream), "f4gemm_pack_weight")
        return w

    def operand(self, a, sa, m, k):
        """A in the operand layout the kernels read (rows to 256, K to round_up(K, 256)), padded on the GPU by the
        library (f4gemm_pad_a); a/sa: plain [m, k/2] and [m, k/32] (rows beyond m ignored)."""
        db, sbb = ctypes.c_size_t(), ctypes.c_size_t()
        self._err(self.lib.f4gemm_operand_bytes(self.h, m, k, ctypes.byref(db), ctypes.byref(sbb)),
                  "f4gemm_operand_bytes")
        ao = torch.empty(db.value, dtype=torch.uint8, device="cuda")
        so = torch.empty(sbb.value, dtype=torch.uint8, device="cuda")
        self._err(self.lib.f4gemm_pad_a(self.h, a.data_ptr(), sa.data_ptr(), m, k, ao.data_ptr(), so.data_ptr(),
                                        torch.cuda.current_stream().cuda_stream), "f4gemm_pad_a")
        return ao, so

    def quantize_into(self, x, m, k, ao, so):
        """bf16/fp32 x [m, k] -> MXFP4 in the operand layout (ao, so), on the GPU (f4gemm_quantize)."""
        self._err(self.lib.f4gemm_quantize(self.h, x.data_ptr(), 1 if x.dtype == torch.bfloat16 else 0, m, k, k,
                                           ao.data_ptr(), so.data_ptr(), torch.cuda.current_stream().cuda_stream),
                  "f4gemm_quantize")

    def gemm(self, kernel, l2, m, n, k, ops, d, accum="exact"):
        rc = self.lib.f4gemm_gemm(self.h, kernel, l2, ACCUM_CODE[accum], m, n, k, 1.0, 0.0, ops["a_op"].data_ptr(),
                                  ops["sa_op"].data_ptr(), ops["w"].data_ptr(), 0, d.data_ptr(),
                                  torch.cuda.current_stream().cuda_stream)
        self._err(rc, "f4gemm_gemm")


# ---- the read floor: a kernel that only reads the bytes (bench/read_floor_kernel.cu, docs/BENCH.md) ----------
class ReadFloor:
    """Launches build/bench/read_floor.cubin through libcuda (ctypes) on PyTorch's current stream, so that it
    can be captured in the same CUDA graphs as the GEMMs. 512 threads per CTA, 4 CTAs per SM."""

    def __init__(self, cubin, sms):
        self.cu = ctypes.CDLL("libcuda.so.1")
        self.mod, self.fn = ctypes.c_void_p(), ctypes.c_void_p()
        self._check(self.cu.cuModuleLoad(ctypes.byref(self.mod), cubin.encode()), f"cuModuleLoad({cubin})")
        self._check(self.cu.cuModuleGetFunction(ctypes.byref(self.fn), self.mod, b"f4gemm_read_floor"),
                    "cuModuleGetFunction(f4gemm_read_floor)")
        self.cu.cuLaunchKernel.argtypes = ([ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3)
        self.grid = 4 * sms
        self.sink = torch.zeros(1, dtype=torch.int32, device="cuda")

    def _check(self, rc, what):
        if rc:
            raise RuntimeError(f"{what} failed: CUresult {rc}")

    def read(self, buf):
        """Reads all of buf (a CUDA tensor whose size in bytes is a multiple of 16)."""
        ptr = ctypes.c_uint64(buf.data_ptr())
        n16 = ctypes.c_uint64(buf.numel() * buf.element_size() // 16)
        sink = ctypes.c_uint64(self.sink.data_ptr())
        args = (ctypes.c_void_p * 3)(*[ctypes.cast(ctypes.byref(v), ctypes.c_void_p) for v in (ptr, n16, sink)])
        self._check(self.cu.cuLaunchKernel(self.fn, self.grid, 1, 1, 512, 1, 1, 0,
                                           torch.cuda.current_stream().cuda_stream, args, None),
                    "cuLaunchKernel(f4gemm_read_floor)")


def open_floor(cubin, sms):
    """The read-floor kernel, or None (saying why) when it is not built or does not load."""
    if not os.path.exists(cubin):
        print(f"read floor unavailable: {cubin} not built (cmake --build build)")
        return None
    try:
        return ReadFloor(cubin, sms)
    except Exception as e:  # noqa: BLE001
        print(f"read floor unavailable: {e}")
        return None


def in_bytes(m, n, k):
    """The bytes an MXFP4 GEMM must read: A, B and both scale arrays (mx_bytes without D)."""
    return m * k // 2 + n * k // 2 + (m + n) * k // 32


def fp8_in_bytes(m, n, k):
    """The bytes cuBLASLt FP8 must read: A and B in e4m3."""
    return m * k + n * k


# ---- operands ----------------------------------------------------------------------------------
def pad_rows(x, rows):
    out = torch.zeros((rows,) + tuple(x.shape[1:]), dtype=x.dtype, device=x.device)
    out[: x.shape[0]] = x
    return out


def make_mx(rows, k, gen):
    """Seed-like MXFP4 operand on the GPU: nibbles uniform, exponents 124..130; rows padded to 256
    (data zero, scales 0x7F), as the driver pads them (docs/ABI.md)."""
    prow = (rows + 255) // 256 * 256
    packed = torch.zeros((prow, k // 2), dtype=torch.uint8, device="cuda")
    packed[:rows] = torch.randint(0, 256, (rows, k // 2), dtype=torch.uint8, device="cuda", generator=gen)
    scales = torch.full((prow, k // 32), 127, dtype=torch.uint8, device="cuda")
    scales[:rows] = torch.randint(124, 131, (rows, k // 32), dtype=torch.uint8, device="cuda", generator=gen)
    return packed, scales


def dequant(packed, scales, rows, k, dtype=None):
    dtype = dtype or torch.float64
    lut = torch.tensor(E2M1, dtype=dtype, device="cuda")
    p = packed[:rows].to(torch.int64)
    vals = torch.stack([lut[p & 0xF], lut[p >> 4]], dim=-1).reshape(rows, k)
    s = torch.exp2(scales[:rows].to(dtype) - 127).repeat_interleave(32, dim=1)
    return vals * s


def mx_bytes(m, n, k):
    return m * k // 2 + n * k // 2 + (m + n) * k // 32 + 2 * m * n


# ---- Triton dot_scaled peer ----------------------------------------------------------------------
def make_triton():
    try:
        import triton
        import triton.language as tl
    except Exception as e:  # noqa: BLE001
        return None, f"triton unavailable: {e}"

    configs = [triton.Config({"BM": bm, "BN": bn, "BK": bk}, num_warps=w, num_stages=s)
               for (bm, bn, bk, w, s) in ((128, 256, 128, 8, 3), (128, 128, 128, 4, 3), (64, 128, 256, 4, 3),
                                          (16, 128, 256, 4, 4), (16, 64, 512, 4, 3), (128, 64, 256, 4, 3))]

    @triton.autotune(configs=configs, key=["M", "N", "K"])
    @triton.jit
    def mxfp4_dot_scaled(a_ptr, sa_ptr, b_ptr, sb_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
                         BK: tl.constexpr):
        pid_m = tl.program_id(0)
        pid_n = tl.program_id(1)
        offs_m = pid_m * BM + tl.arange(0, BM)
        offs_n = pid_n * BN + tl.arange(0, BN)
        offs_kb = tl.arange(0, BK // 2)
        offs_ks = tl.arange(0, BK // 32)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, K, BK):
            a = tl.load(a_ptr + offs_m[:, None] * (K // 2) + (k0 // 2 + offs_kb)[None, :])
            b = tl.load(b_ptr + offs_n[None, :] * (K // 2) + (k0 // 2 + offs_kb)[:, None])
            sa = tl.load(sa_ptr + offs_m[:, None] * (K // 32) + (k0 // 32 + offs_ks)[None, :])
            sb = tl.load(sb_ptr + offs_n[:, None] * (K // 32) + (k0 // 32 + offs_ks)[None, :])
            acc = tl.dot_scaled(a, sa, "e2m1", b, sb, "e2m1", acc)
        mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
        tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc.to(tl.bfloat16), mask=mask)

    def run(m, n, k, ops, d):
        grid = lambda meta: (triton.cdiv(m, meta["BM"]), triton.cdiv(n, meta["BN"]))  # noqa: E731
        mxfp4_dot_scaled[grid](ops["a"], ops["sa"], ops["b"], ops["sb"], d, m, n, k)

    return run, None


# ---- timing --------------------------------------------------------------------------------------
SPIN_CYCLES = 100_000  # ~50 us at the H200's 1.98 GHz: longer than submitting an event and a graph replay


def spin():
    """Busy the current stream for SPIN_CYCLES (torch's own test helper; a no-op where a build lacks it)."""
    sleep = getattr(torch.cuda, "_sleep", None)
    if sleep is not None:
        sleep(SPIN_CYCLES)


def time_graph(fn, nsets, calls):
    """Median-free single measurement: one CUDA graph of `calls` launches rotating over sets."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for i in range(max(3, nsets)):  # warm-up, allocations, autotuning outside the graph
            fn(i % nsets)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(g):
            for i in range(calls):
                fn(i % nsets)
        replay = g.replay
    except Exception:  # noqa: BLE001  (a peer that cannot be captured is timed eagerly)
        g = None

        def replay():
            for i in range(calls):
                fn(i % nsets)
    replay()
    torch.cuda.synchronize()

    def once():
        b, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        # A spin ahead of the start event keeps the GPU busy while the host submits the event and the graph, so
        # the graph's launch latency (10-20 us from Python, jittering) is not timed: over a 0.5 ms graph it was
        # 2-4% of a 12 us kernel's time and most of the spread between repetitions (PERF.md entry 30).
        spin()
        b.record()
        replay()
        e.record()
        e.synchronize()
        return b.elapsed_time(e) * 1000.0 / calls
    return once


def bench_quantizer(f4, copy_gbs, reps, out_dir):
    """The GPU quantizer (f4gemm_quantize) on M x K activations: bytes read (the input) plus written (packed
    e2m1 and scales, padded layout) over its time, in CUDA graphs rotating past 2x L2, against the measured copy
    bandwidth (read + write). The issue's bar: 80% of the copy for M x K >= 16M elements."""
    rows = []
    for (m, k) in ((4096, 4096), (4096, 8192), (8192, 8192), (16384, 8192), (4096, 28672)):
        for dtype in (torch.bfloat16, torch.float32):
            esz = 2 if dtype == torch.bfloat16 else 4
            db, sbb = ctypes.c_size_t(), ctypes.c_size_t()
            f4._err(f4.lib.f4gemm_operand_bytes(f4.h, m, k, ctypes.byref(db), ctypes.byref(sbb)), "operand_bytes")
            moved = m * k * esz + m * k // 2 + m * k // 32  # input read, packed data and scales written
            nsets = max(1, min(8, math.ceil(2 * L2_BYTES / moved)))
            xs = [torch.randn(m, k, device="cuda").to(dtype) for _ in range(nsets)]
            outs = [(torch.empty(db.value, dtype=torch.uint8, device="cuda"),
                     torch.empty(sbb.value, dtype=torch.uint8, device="cuda")) for _ in range(nsets)]
            # graphs of >= ~2 ms, as the GEMM grid's (an estimate at 3.5 TB/s), at least 40 calls
            calls = int(min(200, max(nsets, 40, math.ceil(2000 / (moved / 3.5e6)))))
            once = time_graph(lambda i: f4.quantize_into(xs[i], m, k, *outs[i]), nsets, calls)
            ts = [once() for _ in range(reps)]
            med = statistics.median(ts)
            gbs = moved / med / 1e3
            # The same harness on a plain device copy of the same bytes moved (half read, half written): what a
            # launch of this size reaches at all, beside the 2 GiB copy the bar is set against.
            cin = [torch.empty(moved // 2 // 16 * 16, dtype=torch.uint8, device="cuda") for _ in range(nsets)]
            cout = [torch.empty_like(t) for t in cin]
            conce = time_graph(lambda i: cout[i].copy_(cin[i]), nsets, calls)
            cts = [conce() for _ in range(reps)]
            cgbs = 2 * cin[0].numel() / statistics.median(cts) / 1e3
            rows.append({"M": m, "K": k, "dtype": str(dtype).split(".")[-1], "us": med,
                         "spread": (max(ts) - min(ts)) / med, "gbs": gbs, "copy_frac": gbs / copy_gbs,
                         "same_size_copy_gbs": cgbs})
            print(f"quantize {str(dtype).split('.')[-1]:>8} {m:>6}x{k:<6} {med:8.1f} us {gbs:7.0f} GB/s "
                  f"{100 * gbs / copy_gbs:5.1f}% of copy (spread {100 * rows[-1]['spread']:.1f}%); a copy of the "
                  f"same bytes in the same graphs: {cgbs:.0f} GB/s ({100 * cgbs / copy_gbs:.1f}%)", flush=True)
            del xs, outs, cin, cout
    with open(os.path.join(out_dir, "quantizer.json"), "w") as f:
        json.dump({"copy_gbs": copy_gbs, "rows": rows}, f, indent=1)


def bench_chain(lib, co_dir, floor, reps, modes, ms, out_dir):
    """A layer's four GEMMs (LAYER_NK) in one graph, chained on one stream, with plain launches and with programmatic
    dependent launch (f4gemm_set_pdl), beside the same four of cuBLASLt FP8 and the four read floors. Issue 17's
    optional item: reported apart from the single-GEMM numbers."""
    plain, early = F4gemm(lib, co_dir), F4gemm(lib, co_dir)
    early.set_pdl(True)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(99)
    one = torch.ones((), device="cuda")
    out = []
    print(f"\nchain: the layer's four GEMMs {' -> '.join(f'{n}x{k}' for n, k in LAYER_NK)} "
          f"us per chain, median of {reps}", flush=True)
    print(f"{'M':>5} {'accum':<8} {'plain':>8} {'pdl':>8} {'pdl/plain':>9} {'fp8':>8} {'floor':>8}"
          f" {'pdl/floor':>9} {'fp8/pdl':>8} spread(plain,pdl)  kernels", flush=True)
    for m in ms:
        ops, ds = [], []
        for (n, k) in LAYER_NK:
            a, sa = make_mx(m, k, gen)
            b, sb = make_mx(n, k, gen)
            o = {"w": plain.pack_weight(b, sb, n, k)}
            o["a_op"], o["sa_op"] = plain.operand(a, sa, m, k)
            ops.append(o)
            ds.append(torch.empty(((m + 31) // 32 * 32, n), dtype=torch.bfloat16, device="cuda"))
        fp8 = [(torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn),
                torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)) for (n, k) in LAYER_NK]
        rd = [torch.full((in_bytes(m, n, k) // 16 * 16,), 0x5A, dtype=torch.uint8, device="cuda")
              for (n, k) in LAYER_NK] if floor else []
        for mode in modes:
            picks = [plain.select(m, n, k, mode) for (n, k) in LAYER_NK]

            def chain(f4, picks=picks, mode=mode):
                for (n, k), (kern, l2), o, d in zip(LAYER_NK, picks, ops, ds):
                    f4.gemm(kern, l2, m, n, k, o, d, mode)
            # The same bits both ways (each GEMM's operands are its own, so only the launches differ).
            chain(plain)
            torch.cuda.synchronize()
            want = [d[:m].clone() for d in ds]
            for d in ds:
                d.fill_(float("nan"))
            chain(early)
            torch.cuda.synchronize()
            same = all(torch.equal(w, d[:m]) for w, d in zip(want, ds))
            systems = {"plain": lambda i: chain(plain), "pdl": lambda i: chain(early),
                       "fp8": lambda i: [torch._scaled_mm(x, y.t(), one, one, out_dtype=torch.bfloat16) for x, y in fp8]}
            if floor:
                systems["floor"] = lambda i: [floor.read(r) for r in rd]
            # 8 chains per graph: the layer's weights (~310 MB in MXFP4) are 5x the L2, so no chain finds the one
            # before it in the cache.
            timers = {name: time_graph(fn, 1, 8) for name, fn in systems.items()}
            times = {name: [] for name in timers}
            for _ in range(reps):
                for name, once in timers.items():
                    times[name].append(once())
            med = {name: statistics.median(ts) for name, ts in times.items()}
            spread = {name: (max(ts) - min(ts)) / med[name] for name, ts in times.items()}
            row = {"M": m, "accum": mode, "same_bits": same, "us": med, "spread": spread,
                   "kernels": [plain.kernels[kern] for kern, _ in picks], "all_us": times}
            out.append(row)
            fl = med.get("floor", float("nan"))
            print(f"{m:>5} {mode:<8} {med['plain']:8.1f} {med['pdl']:8.1f} {med['pdl'] / med['plain']:9.3f} "
                  f"{med['fp8']:8.1f} {fl:8.1f} {med['pdl'] / fl:9.2f} {med['fp8'] / med['pdl']:8.2f}"
                  f" {100 * spread['plain']:.1f}%,{100 * spread['pdl']:.1f}%  "
                  f"{'same bits' if same else 'BITS DIFFER'}  {' '.join(k.replace('f4gemm_sm90a_', '').replace('.cubin', '') for k in row['kernels'])}",
                  flush=True)
        del ops, ds, fp8, rd
        torch.cuda.empty_cache()
    with open(os.path.join(out_dir, "chain.json"), "w") as f:
        json.dump({"layer_nk": LAYER_NK, "reps": reps, "rows": out, "when": time.strftime("%Y-%m-%d %H:%M:%S")}, f,
                  indent=1)
    bad = [r for r in out if not r["same_bits"]]
    if bad:
        raise SystemExit(f"chain: pdl changed the result at {[(r['M'], r['accum']) for r in bad]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="3 shapes, 3 repetitions (smoke test)")
    ap.add_argument("--out", default=os.environ.get("OUT", "bench-out"))
    ap.add_argument("--lib", default="build/lib/libf4gemm.so")
    ap.add_argument("--co-dir", default=None)
    ap.add_argument("--floor-cubin", default="build/bench/read_floor.cubin",
                    help="the read-floor kernel (bench/read_floor_kernel.cu), timed on decode and mid-M shapes")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--shapes", default=None, help="comma list of MxNxK (default: the issue's shapes)")
    ap.add_argument("--grid", choices=sorted(GRIDS), default=None,
                    help="a named shape set (serving: 36 cells; decode: its 16 cells M = 1, 16, 32, 64; decode-other: 24 "
                         "decode cells of other model shapes)")
    ap.add_argument("--untuned", action="store_true",
                    help="also time, in the same process, the kernel the policy picks with no tuned table (where it "
                         "differs from the tuned pick), beside the tuned pick and the peers")
    ap.add_argument("--quantizer", action="store_true",
                    help="only the activation quantizer's bandwidth (bf16/fp32 [M, K] -> MXFP4), against the copy")
    ap.add_argument("--chain", action="store_true",
                    help="only a layer's four GEMMs chained in one graph, plain and with programmatic dependent launch "
                         "(f4gemm_set_pdl), beside cuBLASLt FP8's four and the read floors (docs/BENCH.md)")
    ap.add_argument("--chain-m", default=",".join(str(m) for m in CHAIN_M), help="the M of --chain")
    ap.add_argument("--clocks", action="store_true",
                    help="sample SM clock, power and throttle reasons with nvidia-smi beside the run (clocks.csv; "
                         "per repetition in bench.json)")
    ap.add_argument("--accum", default="exact,promoted",
                    help="f4gemm's accumulation modes, each timed as its own system beside the peers (default "
                         "exact,promoted; docs/VERIFY.md)")
    args = ap.parse_args()
    try:
        modes = parse_accums(args.accum)
    except ValueError as e:
        ap.error(str(e))
    bench_torch()
    os.makedirs(args.out, exist_ok=True)
    clock_path = os.path.join(args.out, "clocks.csv")
    clock_log = start_clock_log(clock_path) if args.clocks else None
    if clock_log is not None:
        import atexit

        atexit.register(clock_log.terminate)
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.cuda.get_device_properties(0)
    print(f"device {dev.name}, {dev.multi_processor_count} SMs, torch {torch.__version__}", flush=True)

    # Ceilings measured here, after a warm-up that brings the clocks up (an idle H200 sits at
    # 345 MHz SM clock; a copy timed first measured 2.7 TB/s instead of ~4.2).
    w = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    t_end = time.time() + 1.0
    while time.time() < t_end:
        w @ w
    torch.cuda.synchronize()
    del w
    x = torch.empty(2 * 1024**3, dtype=torch.uint8, device="cuda")
    y = torch.empty_like(x)
    copies = []
    for _ in range(10):
        b, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        b.record()
        y.copy_(x)
        e.record()
        e.synchronize()
        copies.append(b.elapsed_time(e) * 1000.0)
    copy_gbs = 2 * x.numel() / statistics.median(copies) / 1e3
    del x, y
    print(f"copy bandwidth {copy_gbs:.0f} GB/s (read + write, median of 10 after warm-up)", flush=True)

    if args.quantizer:
        bench_quantizer(F4gemm(args.lib, args.co_dir), copy_gbs, args.reps, args.out)
        return
    if args.chain:
        bench_chain(args.lib, args.co_dir, open_floor(args.floor_cubin, dev.multi_processor_count), args.reps, modes,
                    [int(v) for v in args.chain_m.split(",")], args.out)
        return
    if args.grid:
        shapes = GRIDS[args.grid]
    elif args.shapes:
        shapes = [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")]
    elif args.quick:
        shapes = [(4096, 4096, 4096), (16, 16384, 16384), (128, 16384, 16384)]
    else:
        shapes = LARGE + DECODE + MID
    reps = 3 if args.quick else args.reps

    f4 = F4gemm(args.lib, args.co_dir)
    f4u = None  # a second session opened with an empty tuned table: the policy's own picks (--untuned)
    if args.untuned:
        empty = os.path.join(args.out, "untuned_empty_table.csv")
        with open(empty, "w") as f:
            f.write("cu_num,M,N,K,accum,kernelName,splitK,us,tflops\n")
        saved = os.environ.get("F4GEMM_TUNED")
        os.environ["F4GEMM_TUNED"] = empty
        try:
            f4u = F4gemm(args.lib, args.co_dir)
        finally:
            if saved is None:
                del os.environ["F4GEMM_TUNED"]
            else:
                os.environ["F4GEMM_TUNED"] = saved
        assert f4u.kernels == f4.kernels, "both sessions read the same manifest"
    floor = open_floor(args.floor_cubin, dev.multi_processor_count)
    triton_run, triton_err = make_triton()
    if triton_err:
        print(triton_err)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(1234)
    rows = []
    for (m, n, k) in shapes:
        per_set = mx_bytes(m, n, k)
        bf16_set = 2 * (m * k + n * k + m * n)
        nsets = max(1, min(8, math.ceil(2 * L2_BYTES / per_set)))
        nsets_bf16 = max(1, min(8, math.ceil(2 * L2_BYTES / bf16_set)))
        ops = []
        for _ in range(nsets):
            a, sa = make_mx(m, k, gen)
            b, sb = make_mx(n, k, gen)
            ops.append({"a": a, "sa": sa, "b": b, "sb": sb})
        d = torch.empty(((m + 31) // 32 * 32, n), dtype=torch.bfloat16, device="cuda")
        picks = {mode: f4.select(m, n, k, mode) for mode in modes}  # (kernel, log2 split) per mode
        upicks = {mode: f4u.select(m, n, k, mode) for mode in modes} if f4u else {}  # the same without the table
        for o in ops:  # one packed weight for every kernel, and A in the kernels' operand layout
            o["w"] = f4.pack_weight(o["b"], o["sb"], n, k)
            o["a_op"], o["sa_op"] = f4.operand(o["a"], o["sa"], m, k)
        # Correctness first: f4gemm in each mode vs the float64 reference on the GPU. Exact: the project's metric
        # (max_rel_err over |ref| > 2e-4 max|ref|, mismatches at atol + 2e-2 |ref|). Promoted: its bound,
        # |d - ref| <= 2^-8 |ref| + c_w S with S = sum_k |a_k b_k|, and the observed c = max (|d - ref| - 2^-8
        # |ref|)+ / S; NaN on exactly one side counts as bad in both.
        da = dequant(ops[0]["a"], ops[0]["sa"], m, k)
        db = dequant(ops[0]["b"], ops[0]["sb"], n, k)
        ref = da @ db.T
        mag = da.abs() @ db.abs().T if "promoted" in modes else None
        del da, db
        max_ref = ref.abs().max().item()
        atol = 2e-4 * max_ref
        big = ref.abs() > atol
        checks, uchecks = {}, {}
        for mode, kern, l2 in [(mo, *picks[mo]) for mo in modes] + \
                [(mo, *upicks[mo]) for mo in upicks if upicks[mo] != picks[mo]]:
            d.fill_(float("nan"))
            f4.gemm(kern, l2, m, n, k, ops[0], d, mode)
            torch.cuda.synchronize()
            got = d[:m].to(torch.float64)
            diff = (got - ref).abs()
            nan_bad = int((got.isnan() != ref.isnan()).sum().item())
            c = {"kernel": f4.kernels[kern], "kernel_accum": f4.kernel_accum(kern), "log2_k_split": l2,
                 "max_rel_err": (diff[big] / ref.abs()[big]).max().item() if big.any() else 0.0,
                 "mismatches": int((diff > atol + 2e-2 * ref.abs()).sum().item()) + nan_bad}
            if mode == "promoted":
                cw = kernel_cw(f4, kern, k)
                excess = torch.nan_to_num((diff - ref.abs() * 2.0**-8).clamp_min(0), nan=0.0)
                pos = mag > 0
                c["c_w"] = cw
                c["observed_c"] = (excess[pos] / mag[pos]).max().item() if pos.any() else 0.0
                c["observed_c_log2"] = math.log2(c["observed_c"]) if c["observed_c"] > 0 else None
                c["mismatches"] = int((excess > cw * mag).sum().item()) + nan_bad
            (uchecks if (kern, l2) != picks[mode] else checks)[mode] = c
            del got, diff
        del ref, mag, big

        # Peer operands (same values where it matters for timing: random data of each type).
        fp8 = [(torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn),
                torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)) for _ in range(nsets)]
        bf = [(torch.randn(m, k, device="cuda", dtype=torch.bfloat16),
               torch.randn(n, k, device="cuda", dtype=torch.bfloat16)) for _ in range(nsets_bf16)]
        one = torch.ones((), device="cuda")
        systems = {f4_system(mode): ((lambda i, kl=picks[mode], md=mode: f4.gemm(kl[0], kl[1], m, n, k, ops[i], d, md)),
                                     nsets) for mode in modes}
        for mode in uchecks:  # untuned picks that differ from the tuned ones, on the same operands
            systems[f4_untuned(mode)] = ((lambda i, kl=upicks[mode], md=mode: f4.gemm(kl[0], kl[1], m, n, k, ops[i],
                                                                                        d, md)), nsets)
        systems.update({
            "cublaslt_fp8": (lambda i: torch._scaled_mm(fp8[i][0], fp8[i][1].t(), one, one,
                                                        out_dtype=torch.bfloat16, use_fast_accum=False), nsets),
            "cublaslt_fp8_fast": (lambda i: torch._scaled_mm(fp8[i][0], fp8[i][1].t(), one, one,
                                                             out_dtype=torch.bfloat16, use_fast_accum=True), nsets),
            "cublas_bf16": (lambda i: torch.matmul(bf[i][0], bf[i][1].t()), nsets_bf16),
        })
        if floor and m <= 256:  # memory-bound shapes: the time only reading takes
            rd = [torch.empty(in_bytes(m, n, k) // 16 * 16, dtype=torch.uint8, device="cuda") for _ in range(nsets)]
            nsets_fp8 = max(1, min(8, math.ceil(2 * L2_BYTES / fp8_in_bytes(m, n, k))))
            rd8 = [torch.empty(fp8_in_bytes(m, n, k) // 16 * 16, dtype=torch.uint8, device="cuda")
                   for _ in range(nsets_fp8)]
            for t in rd + rd8:
                t.fill_(0x5A)
            systems["read_floor"] = (lambda i: floor.read(rd[i]), nsets)
            systems["read_floor_fp8"] = (lambda i: floor.read(rd8[i]), nsets_fp8)
        if triton_run:
            dt = torch.empty((m, n), dtype=torch.bfloat16, device="cuda")
            systems["triton_dot_scaled"] = (lambda i: triton_run(m, n, k, ops[i], dt), nsets)
        # Enough launches per graph that one replay runs >= ~2 ms on the fastest system.
        est_us = max(2 * m * n * k / 1300e6, mx_bytes(m, n, k) / 4.2e6, 5.0)
        calls = int(min(200, max(nsets, math.ceil(2000 / est_us))))
        timers = {}
        for name, (fn, ns) in systems.items():
            try:
                timers[name] = time_graph(fn, ns, calls if name != "triton_dot_scaled" else max(ns, calls // 4))
            except Exception as e:  # noqa: BLE001
                print(f"  {name} failed at {m}x{n}x{k}: {e}")
        times = {name: [] for name in timers}
        rep_t = []  # wall-clock start of each repetition, to line up with an external clock log
        for _ in range(reps):  # alternate systems inside each repetition
            rep_t.append(time.time())
            for name, once in timers.items():
                times[name].append(once())
        rep_t.append(time.time())
        flops = 2.0 * m * n * k
        row = {"M": m, "N": n, "K": k, "kind": kind_of((m, n, k)), "sets": nsets, "calls": calls, "rep_t": rep_t,
               "f4gemm": checks, "systems": {}}
        if f4u:  # per mode: the untuned pick, its check, and its time (the tuned pick's when they are the same)
            row["f4gemm_untuned"] = {mode: dict(uchecks.get(mode, {"kernel": checks[mode]["kernel"],
                                                                   "log2_k_split": checks[mode]["log2_k_split"]}),
                                                same_as_tuned=mode not in uchecks) for mode in modes}
        for name, ts in times.items():
            med = statistics.median(ts)
            row["systems"][name] = {"us": med, "tflops": flops / med / 1e6, "spread": (max(ts) - min(ts)) / med,
                                    "all_us": ts}
        row["ratio"] = {}  # per mode: peer time / f4gemm time (above 1: f4gemm faster)
        for mode in modes:
            me = f4_system(mode)
            if me not in row["systems"]:
                continue
            f4us = row["systems"][me]["us"]
            checks[mode]["us"] = f4us
            checks[mode]["gbs"] = mx_bytes(m, n, k) / f4us / 1e3
            checks[mode]["bw_frac"] = checks[mode]["gbs"] / copy_gbs
            row["ratio"][mode] = {name: s_["us"] / f4us for name, s_ in row["systems"].items()
                                  if not name.startswith("f4gemm")}
        for mode, u in row.get("f4gemm_untuned", {}).items():
            src = f4_untuned(mode) if not u["same_as_tuned"] else f4_system(mode)
            if src in row["systems"]:
                u["us"] = row["systems"][src]["us"]
        if clock_log is not None:
            row["clocks"] = clocks_per_rep(read_clock_log(clock_path), rep_t)
        if "read_floor" in row["systems"]:
            fl = row["systems"]["read_floor"]["us"]
            row["read_floor_gbs"] = in_bytes(m, n, k) / fl / 1e3
            # The fastest any kernel reading the MXFP4 bytes could be against cuBLASLt FP8: its time over the floor.
            if "cublaslt_fp8" in row["systems"]:
                row["fp8_over_floor"] = row["systems"]["cublaslt_fp8"]["us"] / fl
        rows.append(row)
        for mode in modes:
            ck = checks[mode]
            if "us" not in ck:
                continue
            err = f"c=2^{ck['observed_c_log2']:.1f}" if ck.get("observed_c_log2") is not None else \
                ("c=0" if mode == "promoted" else f"err={ck['max_rel_err']:.5f}")
            print(f"{m:>6}x{n:>6}x{k:>6} {mode:<8} {ck['kernel']:<34} L={ck['log2_k_split']} {err} "
                  f"bad={ck['mismatches']} {ck['us']:9.1f} us {flops / ck['us'] / 1e6:7.1f} TF/s {ck['gbs']:6.0f} GB/s | "
                  + " ".join(f"{nm}={r:.2f}x" for nm, r in row["ratio"][mode].items())
                  + (f" | {clock_range(row['clocks'])}" if row.get("clocks") else ""), flush=True)
            u = row.get("f4gemm_untuned", {}).get(mode)
            if u and "us" in u:
                what = "same pick" if u["same_as_tuned"] else f"bad={u['mismatches']}"
                print(f"{'':>20} {mode:<8} untuned: {u['kernel']:<25} L={u['log2_k_split']} {what} {u['us']:9.1f} us "
                      f"({u['us'] / ck['us']:.3f}x the tuned pick)", flush=True)
        del ops, fp8, bf, d
        rd = rd8 = None
        torch.cuda.empty_cache()

    if clock_log is not None:
        clock_log.terminate()
    result = {"device": dev.name, "sms": dev.multi_processor_count, "copy_gbs": copy_gbs, "torch": torch.__version__,
              "reps": reps, "accum": modes, "rows": rows, "when": time.strftime("%Y-%m-%d %H:%M:%S"),
              "clock_log": clock_path if clock_log is not None else None}
    with open(os.path.join(args.out, "bench.json"), "w") as f:
        json.dump(result, f, indent=1)
    print_table(result)
    print()
    for line in summary_lines(rows, modes):
        print(line)
    try:
        import matplotlib  # noqa: F401  (optional: no plot without it)
    except ImportError:
        print("matplotlib not installed: no bench.png")
        return
    try:
        plot(result, os.path.join(args.out, "bench.png"))
    except Exception as e:  # noqa: BLE001
        print(f"plot failed: {e}")


def print_table(r):
    modes = r.get("accum", ["exact"])
    print(f"\n{'shape':>20} {'accum':<8} {'kernel':<36} {'f4 us':>9} {'TF/s':>7} {'GB/s':>6} {'spread':>6} | "
          + " ".join(f"{n[:12]:>12}" for n in PEERS) + "   (peer us / f4gemm us)")
    for row in r["rows"]:
        for mode in modes:
            me = f4_system(mode)
            if me not in row["systems"]:
                continue
            s = row["systems"][me]
            ck = row["f4gemm"][mode]
            print(f"{row['M']:>6}x{row['N']:>6}x{row['K']:>6} {mode:<8} {ck['kernel'][:36]:<36} {s['us']:9.1f} "
                  f"{s['tflops']:7.1f} {ck['gbs']:6.0f} {100 * s['spread']:5.1f}% | "
                  + " ".join(f"{row['ratio'][mode].get(n, float('nan')):12.2f}" for n in PEERS))
    floors = [row for row in r["rows"] if "read_floor" in row["systems"]]
    if floors:
        print(f"\nRead floor (a kernel that only reads the inputs: bench/read_floor_kernel.cu; copy {r['copy_gbs']:.0f} GB/s)")
        untuned = any("f4gemm_untuned" in row for row in floors)
        print(f"{'shape':>20} " + " ".join(f"{f4_system(m_)[:16] + ' us':>19}" for m_ in modes) +
              f" {'floor us':>9} {'spread':>6} {'GB/s':>6} " + " ".join(f"{m_[:5] + '/floor':>11}" for m_ in modes) +
              (" " + " ".join(f"{m_[:5] + ' untuned':>14}" for m_ in modes) if untuned else "") +
              f" {'fp8 floor':>9} {'FP8 us':>8} {'FP8/floor':>9}   (FP8/floor: the most any MXFP4 kernel can gain)")
        for row in floors:
            fl, f8 = row["systems"]["read_floor"], row["systems"].get("read_floor_fp8", {"us": float("nan")})
            c8 = row["systems"].get("cublaslt_fp8", {"us": float("nan")})["us"]
            f4us = [row["systems"].get(f4_system(m_), {"us": float("nan")})["us"] for m_ in modes]
            uus = [row.get("f4gemm_untuned", {}).get(m_, {}).get("us", float("nan")) for m_ in modes]
            print(f"{row['M']:>6}x{row['N']:>6}x{row['K']:>6} " + " ".join(f"{u:19.1f}" for u in f4us) +
                  f" {fl['us']:9.2f} {100 * fl['spread']:5.1f}% {row['read_floor_gbs']:6.0f} " +
                  " ".join(f"{u / fl['us']:11.2f}" for u in f4us) +
                  (" " + " ".join(f"{u / fl['us']:14.2f}" for u in uus) if untuned else "") +
                  f" {f8['us']:9.2f} {c8:8.1f} {c8 / fl['us']:9.2f}")
        if untuned:
            print("(untuned: the policy's pick with an empty tuned table, timed in the same process; /floor)")


def plot(r, path):
    """One panel per N x K: time (us) against M on log-log axes, one line per system (f4gemm once per accumulation
    mode), the measured read floor dashed where it was timed (M <= 256). Needs matplotlib."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    modes = r.get("accum", ["exact"])
    groups = panels(r["rows"])
    cols = min(2, len(groups))
    nrows = (len(groups) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(7 * cols, 4.8 * nrows), squeeze=False)
    systems = [f4_system(m_) for m_ in modes] + PEERS
    styles = {f4_system("exact"): dict(color="C3", lw=2.2, marker="o"),
              f4_system("promoted"): dict(color="C1", lw=2.2, marker="s"),
              "cublaslt_fp8": dict(color="C0", marker="^"), "cublaslt_fp8_fast": dict(color="C0", ls=":", marker="^"),
              "cublas_bf16": dict(color="C2", marker="v"), "triton_dot_scaled": dict(color="C4", marker="d")}
    for ax, ((n, k), rows) in zip(axes.flat, groups.items()):
        for name in systems:
            pts = [(x["M"], x["systems"][name]["us"]) for x in rows if name in x["systems"]]
            if pts:
                label = name if not name.startswith("f4gemm") else \
                    f"f4gemm ({next(m_ for m_ in modes if f4_system(m_) == name)})"
                ax.plot([p_[0] for p_ in pts], [p_[1] for p_ in pts], label=label, **styles.get(name, {}))
        fl = [(x["M"], x["systems"]["read_floor"]["us"]) for x in rows if "read_floor" in x["systems"]]
        if fl:
            ax.plot([p_[0] for p_ in fl], [p_[1] for p_ in fl], "k--", lw=1.2, label="read floor (measured)")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("M")
        ax.set_ylabel("time (us)")
        ax.set_title(f"N x K = {n} x {k}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(groups):]:
        ax.set_visible(False)
    fig.suptitle(f"MXFP4 GEMM on {r['device']}: f4gemm ({', '.join(modes)}) vs peers, median of {r['reps']}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    sys.exit(main())
