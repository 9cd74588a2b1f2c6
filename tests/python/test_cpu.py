"""The f4gemm package on the CPU backend, with numpy (what CI runs): quantize against an independent numpy OCP MX
reference, the packed weight's round trip, matmul against a float64 reference, the planning functions, and bad
input: a ValueError naming the argument, its value and the fix, with nothing written."""

import os
import shutil

import numpy as np
import pytest

import f4gemm
import mxref

RNG_SEED = 20261201


@pytest.fixture
def rng():
    return np.random.default_rng(RNG_SEED)


# ---- quantize -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("m,k", [(1, 32), (6, 256), (37, 2880), (64, 8192)])
def test_quantize_matches_reference(rng, m, k):
    x = mxref.special_matrix(rng, max(m, 6), max(k, 256))[:m, :k] if m >= 6 and k >= 256 else \
        rng.standard_normal((m, k)).astype(np.float32)
    q, s = f4gemm.quantize(x)
    assert isinstance(q, np.ndarray) and isinstance(s, np.ndarray)
    assert q.dtype == np.uint8 and s.dtype == np.uint8
    assert q.shape == (m, k // 2) and s.shape == (m, k // 32)
    rq, rs = mxref.quantize(x)
    np.testing.assert_array_equal(s, rs)
    np.testing.assert_array_equal(q, rq)


def test_quantize_special_blocks(rng):
    x = mxref.special_matrix(rng, 8, 256)
    q, s = f4gemm.quantize(x)
    assert s[0, 0] == 0 and not q[0, :16].any()      # all-zero block: scale 0, zero bytes
    assert s[0, 1] == 0 and not q[0, 16:32].any()    # all -0.0: stored as +0
    assert s[0, 2] == 0xFF and not q[0, 32:48].any()  # NaN
    assert s[0, 3] == 0xFF and s[0, 4] == 0xFF        # +Inf, -Inf
    assert (q[0, 80:96] & 0x88).any()                 # signed zeros kept in a non-zero block
    assert s[1, 0] == 0                               # subnormals: the exponent clamped at -127
    assert s[1, 1] == 125 + 127                       # near FLT_MAX: floor(log2(3e38)) - 2
    nib = np.stack([q[3, 16:32] & 0xF, q[3, 16:32] >> 4], axis=-1).reshape(-1)
    assert (nib & 7).max() == 7                       # 7.9 saturates to 6 (code 7)


def test_quantize_bf16_input(rng):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = rng.standard_normal((9, 512)).astype(ml_dtypes.bfloat16)
    q, s = f4gemm.quantize(x)
    rq, rs = mxref.quantize(x.astype(np.float32))
    np.testing.assert_array_equal(q, rq)
    np.testing.assert_array_equal(s, rs)


def test_quantize_non_contiguous_is_copied(rng):
    x = rng.standard_normal((64, 40)).astype(np.float32).T  # [40, 64], not contiguous
    q, s = f4gemm.quantize(x)
    rq, rs = mxref.quantize(np.ascontiguousarray(x))
    np.testing.assert_array_equal(q, rq)
    np.testing.assert_array_equal(s, rs)


# ---- pack_weight ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("n,k", [(1, 32), (1000, 2880), (256, 512)])
def test_pack_weight_round_trip(rng, n, k):
    q, s = mxref.quantize(rng.standard_normal((n, k)).astype(np.float32))
    w = f4gemm.pack_weight(q, s)
    assert (w.n, w.k, w.shape, w.device) == (n, k, (n, k), "cpu")
    assert w.nbytes == f4gemm.weight_bytes(n, k)
    assert isinstance(w.data, np.ndarray) and w.data.dtype == np.uint8 and w.data.shape == (w.nbytes,)
    assert bytes(w.data[:4]) == b"F4GW"
    uq, us = w.unpack()
    np.testing.assert_array_equal(uq, q)
    np.testing.assert_array_equal(us, s)
    uq2, us2 = f4gemm.unpack_weight(w)
    np.testing.assert_array_equal(uq2, q)
    np.testing.assert_array_equal(us2, s)


def test_weight_and_operand_bytes():
    # W: 256-byte header + round_up(N,256)/16 groups of (64 + Kp/128 * 1088) bytes (docs/LAYOUTS_SM90.md)
    assert f4gemm.weight_bytes(1000, 2880) == 256 + (1024 // 16) * (64 + 3072 // 128 * 1088)
    assert f4gemm.operand_bytes(37, 2880) == (256 * 3072 // 2, 256 * 3072 // 32)
    with pytest.raises(ValueError, match="K must be a positive multiple of 32"):
        f4gemm.operand_bytes(37, 100)


# ---- matmul ---------------------------------------------------------------------------------------------------

def _operands(rng, m, n, k):
    x = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((n, k)).astype(np.float32) * np.exp2(rng.integers(-4, 5, size=(n, 1))).astype(np.float32)
    aq, as_ = f4gemm.quantize(x)
    bq, bs = f4gemm.quantize(b)
    return aq, as_, bq, bs


@pytest.mark.parametrize("m,n,k", [(1, 64, 32), (37, 1000, 2880), (128, 256, 1024)])
def test_matmul_matches_float64_reference(rng, m, n, k):
    aq, as_, bq, bs = _operands(rng, m, n, k)
    w = f4gemm.pack_weight(bq, bs)
    d = f4gemm.matmul(aq, as_, w)
    assert isinstance(d, np.ndarray) and d.dtype == np.float32 and d.shape == (m, n)
    assert not (d.view(np.uint32) & 0xFFFF).any(), "D must hold bf16 values (widened exactly)"
    rel = mxref.check_close(d, mxref.gemm(aq, as_, bq, bs))
    assert rel <= 2.0**-8


def test_matmul_alpha_beta_c_out(rng):
    m, n, k = 33, 300, 640
    aq, as_, bq, bs = _operands(rng, m, n, k)
    w = f4gemm.pack_weight(bq, bs)
    c = rng.standard_normal((m, n)).astype(np.float32) * 8
    out = np.full((m, n), 7.0, dtype=np.float32)
    got = f4gemm.matmul(aq, as_, w, c=c, alpha=0.5, beta=-2.0, out=out)
    assert got is out
    mxref.check_close(out, mxref.gemm(aq, as_, bq, bs, alpha=0.5, beta=-2.0, c=c))
    # beta == 0: C is not read (a NaN there changes nothing)
    d0 = f4gemm.matmul(aq, as_, w, c=np.full((m, n), np.nan, dtype=np.float32), beta=0.0)
    np.testing.assert_array_equal(d0, f4gemm.matmul(aq, as_, w))


def test_matmul_promoted_on_the_cpu(rng):
    """accum='promoted' is accepted and runs the CPU backend's exact-mode arithmetic: the same bits as 'exact'."""
    m, n, k = 19, 130, 1056
    aq, as_, bq, bs = _operands(rng, m, n, k)
    w = f4gemm.pack_weight(bq, bs)
    exact = f4gemm.matmul(aq, as_, w, alpha=-0.75)
    promoted = f4gemm.matmul(aq, as_, w, alpha=-0.75, accum="promoted")
    np.testing.assert_array_equal(promoted, exact)
    assert mxref.check_close(promoted, mxref.gemm(aq, as_, bq, bs, alpha=-0.75)) <= 2.0**-8
    out = np.zeros((m, n), dtype=np.float32)
    assert f4gemm.Session("cpu").matmul(aq, as_, w, alpha=-0.75, accum="promoted", out=out) is out
    np.testing.assert_array_equal(out, exact)


def test_matmul_nan_scale_rows(rng):
    aq, as_, bq, bs = _operands(rng, 4, 64, 256)
    as_ = as_.copy()
    as_[2, 3] = 0xFF
    d = f4gemm.matmul(aq, as_, f4gemm.pack_weight(bq, bs))
    assert np.isnan(d[2]).all() and not np.isnan(np.delete(d, 2, axis=0)).any()


def test_explicit_cpu_session(rng):
    s = f4gemm.Session("cpu")
    assert (s.backend, s.device, s.gpu, s.kernels()) == ("cpu", "cpu", False, [])
    aq, as_, bq, bs = _operands(rng, 5, 70, 96)
    w = s.pack_weight(bq, bs)
    q2, s2 = s.quantize(mxref.dequantize(aq, as_).astype(np.float32))
    np.testing.assert_array_equal(q2, aq)
    d = s.matmul(aq, as_, w)
    np.testing.assert_array_equal(d, f4gemm.matmul(aq, as_, w))
    assert s.select(5, 70, 96)["kernel"] is None


def test_dequantize_matches_reference(rng):
    x = mxref.special_matrix(rng, 8, 512)
    q, s = f4gemm.quantize(x)
    got = f4gemm.dequantize(q, s)
    assert got.dtype == np.float32
    ref = mxref.dequantize(q, s)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    ok = ~np.isnan(ref)
    np.testing.assert_array_equal(got[ok], ref[ok].astype(np.float32))


# ---- planning -------------------------------------------------------------------------------------------------

def _expect_kernels():
    """Whether this build should carry the sm_90a kernels: nvcc was on the machine that built it (CI builds here),
    unless F4GEMM_EXPECT_KERNELS says otherwise."""
    env = os.environ.get("F4GEMM_EXPECT_KERNELS")
    if env is not None:
        return env == "1"
    return bool(shutil.which("nvcc")) or os.path.exists("/usr/local/cuda/bin/nvcc")


def test_kernels_and_select():
    ks = f4gemm.kernels()
    sel = f4gemm.select(16, 8192, 8192)
    assert {"kernel", "index", "log2_k_split", "tuned", "backend"} <= set(sel)
    if _expect_kernels():
        names = {k["name"] for k in ks}
        assert ks and sel["kernel"] in names
        assert all(k["b_layout"] == "frag16s" and k["arch"] == "sm_90a" for k in ks)
        pkg = os.path.join(os.path.dirname(f4gemm.__file__), "sm90a")
        for f in ["f4gemm_bf16_per1x32Fp4.csv", "f4gemm_sm90a_util.cubin", "f4gemm_bf16_per1x32Fp4_tuned.csv"]:
            assert os.path.isfile(os.path.join(pkg, f)), f"{f} missing from the installed package"
        assert sel["tile_m"] >= 16
    else:
        assert sel["kernel"] is None
    with pytest.raises(ValueError, match="K must be a positive multiple of 32"):
        f4gemm.select(16, 8192, 100)
    with pytest.raises(ValueError, match="accum: 'fast' is not a mode"):
        f4gemm.select(16, 8192, 8192, accum="fast")


def test_select_and_kernels_per_accum_mode():
    """kernels() rows carry the mode each kernel implements; select() answers per mode: a promoted request takes a
    promoted kernel where the policy offers one, else an exact kernel (an exact request never a promoted one)."""
    ks = f4gemm.kernels()
    assert all(k["accum"] in ("exact", "promoted") and isinstance(k["min_m"], int) for k in ks)
    for m, n, k in [(1, 16384, 16384), (16, 8192, 8192), (128, 16384, 16384), (4096, 8192, 8192)]:
        ex = f4gemm.select(m, n, k)
        assert ex["accum"] == "exact" and ex["kernel_accum"] == "exact", (m, ex)
        pr = f4gemm.select(m, n, k, accum="promoted")
        assert pr["accum"] == "promoted" and pr["kernel_accum"] in ("exact", "promoted"), (m, pr)
        if pr["kernel"] is not None:
            assert next(x for x in ks if x["name"] == pr["kernel"])["accum"] == pr["kernel_accum"]
        if ex["kernel"] is None:  # no kernels: the CPU backend, exact in both modes
            assert pr["kernel"] is None and pr["kernel_accum"] == "exact"
        if "F4GEMM_PP_SLAB_N" not in os.environ:  # the lab knob slabs any pre-pass kernel
            assert ex["slab_n"] == 0, (m, ex)  # the rule never slabs the exact pre-pass kernel
    if any(x["accum"] == "promoted" for x in ks):
        assert f4gemm.select(8192, 8192, 8192, accum="promoted")["kernel_accum"] == "promoted"
        # N slabs (docs/ABI_SM90.md): the promoted pre-pass kernel at 1024 x 16384^2 on 132 SMs, 8 slabs of 2048
        pr = f4gemm.select(1024, 16384, 16384, accum="promoted")
        if pr["kernel"] == "f4gemm_sm90a_pp_128x128_p.cubin" and pr["num_cu"] == 132 and \
                "F4GEMM_PP_SLAB_N" not in os.environ:
            assert pr["slab_n"] == 2048, pr
        assert f4gemm.select(1, 16384, 16384, accum="promoted")["kernel_accum"] == "exact"  # decode: fallback
    s = f4gemm.Session("cpu")
    assert s.select(5, 70, 96, accum="promoted")["kernel_accum"] == "exact"
    for bad in ("fast", "Exact", "", None, 1):
        _raises(lambda: s.select(5, 70, 96, accum=bad), f"accum: {bad!r} is not a mode", "accum='exact'",
                "accum='promoted'")


# ---- bad input ------------------------------------------------------------------------------------------------

def _raises(fn, *patterns):
    with pytest.raises(ValueError) as e:
        fn()
    msg = str(e.value)
    assert "\n" not in msg, "one line"
    for p in patterns:
        assert p in msg, f"{p!r} not in {msg!r}"
    return msg


def test_bad_quantize_input(rng):
    x = rng.standard_normal((4, 64)).astype(np.float32)
    _raises(lambda: f4gemm.quantize(x.astype(np.float16)), "x: dtype float16", "pass bfloat16 or float32",
            "astype")
    _raises(lambda: f4gemm.quantize(x.astype(np.float64)), "x: dtype float64")
    _raises(lambda: f4gemm.quantize(x[:, :48]), "x: K = 48", "multiple of 32", "pad K")
    _raises(lambda: f4gemm.quantize(x.reshape(-1)), "x: expected a 2-D array", "(256,)")
    _raises(lambda: f4gemm.quantize(x.reshape(2, 2, 64)), "x: expected a 2-D array", "(2, 2, 64)")
    _raises(lambda: f4gemm.quantize(np.zeros((0, 64), np.float32)), "x: empty array")
    _raises(lambda: f4gemm.quantize([[1.0] * 32]), "x: got list", "not an array")


def test_bad_pack_weight_input(rng):
    q, s = mxref.quantize(rng.standard_normal((8, 64)).astype(np.float32))
    _raises(lambda: f4gemm.pack_weight(q.astype(np.int8), s), "q: dtype int8", "uint8")
    _raises(lambda: f4gemm.pack_weight(q, s.astype(np.float32)), "scales: dtype float32", "uint8")
    _raises(lambda: f4gemm.pack_weight(q[:, :5], s), "q: K = 10", "multiple of 32")
    _raises(lambda: f4gemm.pack_weight(q, s[:, :1]), "scales: shape (8, 1)", "(8, 2)")
    _raises(lambda: f4gemm.pack_weight(q, s[:4]), "scales: shape (4, 2)", "[N, K/32]")


def test_bad_matmul_input(rng):
    aq, as_, bq, bs = _operands(rng, 6, 40, 128)
    w = f4gemm.pack_weight(bq, bs)
    out = np.full((6, 40), 7.0, dtype=np.float32)
    before = out.copy()
    _raises(lambda: f4gemm.matmul(aq, as_[:, :3], w, out=out), "a_scales: shape (6, 3)", "(6, 4)")
    _raises(lambda: f4gemm.matmul(aq[:, :32], as_[:, :2], w, out=out), "a_q: K = 64", "w is [40, 128]")
    _raises(lambda: f4gemm.matmul(aq.astype(np.int16), as_, w, out=out), "a_q: dtype int16", "uint8")
    _raises(lambda: f4gemm.matmul(aq, as_, w, accum="fast", out=out), "accum: 'fast'", "accum='exact'",
            "accum='promoted'")
    _raises(lambda: f4gemm.Session("cpu").matmul(aq, as_, w, accum=None, out=out), "accum: None", "accum='exact'")
    _raises(lambda: f4gemm.matmul(aq, as_, (bq, bs), out=out), "w: got tuple", "f4gemm.pack_weight")
    _raises(lambda: f4gemm.matmul(aq, as_, w, c=np.zeros((6, 41), np.float32), beta=1.0, out=out),
            "c: shape (6, 41)", "(6, 40)")
    _raises(lambda: f4gemm.matmul(aq, as_, w, c=np.zeros((6, 40), np.int32), beta=1.0, out=out),
            "c: dtype int32")
    _raises(lambda: f4gemm.matmul(aq, as_, w, alpha=float("nan"), out=out), "alpha, beta", "finite")
    _raises(lambda: f4gemm.matmul(aq, as_, w, out=np.zeros((6, 40), np.float64)), "out: dtype float64", "float32")
    _raises(lambda: f4gemm.matmul(aq, as_, w, out=np.zeros((6, 39), np.float32)), "out: shape (6, 39)")
    _raises(lambda: f4gemm.matmul(aq, as_, w, out=np.zeros((40, 6), np.float32).T), "out: non-contiguous",
            "contiguous")
    np.testing.assert_array_equal(out, before)  # nothing was written by any refused call


def test_bad_session_arguments():
    _raises(lambda: f4gemm.Session("gpu"), "device: 'gpu'", "'cuda:N'")
    _raises(lambda: f4gemm.Session(-1), "device: ordinal -1", ">= 0")
    _raises(lambda: f4gemm.Session(True), "device: True")
    _raises(lambda: f4gemm.Session("cpu", pdl="yes"), "pdl: got 'yes'", "pass True")
    s = f4gemm.Session("cpu", pdl=True)
    assert s.pdl is True  # no kernels to overlap on the CPU: accepted, no effect
    s.pdl = False
    assert s.pdl is False
    _raises(lambda: setattr(s, "pdl", 1), "pdl: got 1", "pass True")
    assert s.pdl is False  # a refused value leaves it as it was


def test_torch_cpu_tensors(rng):
    """CPU tensors run on the CPU backend too and come back as tensors (skipped without torch)."""
    torch = pytest.importorskip("torch")
    x = torch.from_numpy(rng.standard_normal((7, 320)).astype(np.float32))
    q, s = f4gemm.quantize(x.to(torch.bfloat16))
    assert isinstance(q, torch.Tensor) and q.dtype == torch.uint8 and q.shape == (7, 160)
    rq, rs = mxref.quantize(x.to(torch.bfloat16).float().numpy())
    np.testing.assert_array_equal(q.numpy(), rq)
    np.testing.assert_array_equal(s.numpy(), rs)
    bq, bs = f4gemm.quantize(torch.from_numpy(rng.standard_normal((50, 320)).astype(np.float32)))
    w = f4gemm.pack_weight(bq, bs)
    assert isinstance(w.data, torch.Tensor)
    d = f4gemm.matmul(q, s, w)
    assert isinstance(d, torch.Tensor) and d.dtype == torch.bfloat16 and d.shape == (7, 50)
    mxref.check_close(d.float().numpy(), mxref.gemm(rq, rs, bq.numpy(), bs.numpy()))
    _raises(lambda: f4gemm.quantize(x.half()), "x: dtype float16", "x.to(torch.bfloat16)")
