"""The f4gemm package on a CUDA device (marker gpu; skipped without one): the GPU quantizer bit-identical to the
host's on the same values, matmul on torch, cupy and jax arrays against the float64 reference, the Linear against
F.linear on the dequantized weight, CUDA graph capture and replay, and bad GPU input refused before any launch."""

import os

import numpy as np
import pytest

# jax takes 75% of the GPU's memory at its first use unless told not to; torch and cupy share the device here.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import f4gemm
import mxref

pytestmark = pytest.mark.gpu

M, N, K = 37, 1000, 2880  # K % 256 != 0: quantize's outputs are views of padded storage


@pytest.fixture(scope="module")
def torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    return torch


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def _specials(rng, m, k):
    return mxref.special_matrix(rng, m, k)


def _finite_operands(rng, m, n, k):
    x = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((n, k)).astype(np.float32) * np.exp2(rng.integers(-4, 5, size=(n, 1))).astype(np.float32)
    return x, b


# ---- torch ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("m,k", [(1, 32), (M, K), (300, 4096), (8, 8192)])
@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_quantize_torch_bit_identical(torch, rng, m, k, dtype):
    x = torch.from_numpy(_specials(rng, max(m, 6), max(k, 256))[:m, :k]).to(getattr(torch, dtype))
    q, s = f4gemm.quantize(x.cuda())
    assert q.is_cuda and q.dtype == torch.uint8 and tuple(q.shape) == (m, k // 2) and tuple(s.shape) == (m, k // 32)
    hq, hs = f4gemm.quantize(x.float().numpy())  # the host quantizer on the same values
    np.testing.assert_array_equal(s.cpu().numpy(), hs)
    np.testing.assert_array_equal(q.cpu().numpy(), hq)
    rq, rs = mxref.quantize(x.float().numpy())
    np.testing.assert_array_equal(q.cpu().numpy(), rq)
    np.testing.assert_array_equal(s.cpu().numpy(), rs)


def test_quantize_torch_row_stride(torch, rng):
    big = torch.from_numpy(rng.standard_normal((M, K + 96)).astype(np.float32)).cuda().to(torch.bfloat16)
    x = big[:, 64:64 + K]  # row stride K + 96, unit column stride: read in place
    q, s = f4gemm.quantize(x)
    hq, hs = f4gemm.quantize(x.float().cpu().numpy())
    np.testing.assert_array_equal(q.cpu().numpy(), hq)
    np.testing.assert_array_equal(s.cpu().numpy(), hs)


@pytest.mark.parametrize("m,n,k", [(1, 8192, 1024), (M, N, K), (16, 512, 8192), (300, 700, 2048)])
def test_matmul_torch(torch, rng, m, n, k):
    x, b = _finite_operands(rng, m, n, k)
    q, s = f4gemm.quantize(torch.from_numpy(x).cuda().to(torch.bfloat16))
    bq, bs = f4gemm.quantize(torch.from_numpy(b).cuda())
    w = f4gemm.pack_weight(bq, bs)
    assert w.device == "cuda:0" and w.data.is_cuda and w.nbytes == f4gemm.weight_bytes(n, k)
    hw = f4gemm.pack_weight(bq.cpu(), bs.cpu())  # the host packer: the same bytes
    assert torch.equal(w.data.cpu(), hw.data)
    d = f4gemm.matmul(q, s, w)
    assert d.is_cuda and d.dtype == torch.bfloat16 and tuple(d.shape) == (m, n)
    ref = mxref.gemm(q.cpu().numpy(), s.cpu().numpy(), bq.cpu().numpy(), bs.cpu().numpy())
    assert mxref.check_close(d.float().cpu().numpy(), ref) <= 2.0**-8
    # plain contiguous operands (not quantize's views): padded by the library, the same result
    d2 = f4gemm.matmul(q.contiguous(), s.contiguous(), w)
    assert torch.equal(d, d2)
    uq, us = w.unpack()
    assert torch.equal(uq.cpu(), bq.cpu()) and torch.equal(us.cpu(), bs.cpu())


def test_matmul_torch_c_out_alpha_beta(torch, rng):
    x, b = _finite_operands(rng, M, N, K)
    q, s = f4gemm.quantize(torch.from_numpy(x).cuda())
    bq, bs = f4gemm.quantize(torch.from_numpy(b).cuda())
    w = f4gemm.pack_weight(bq, bs)
    c = (torch.randn(M, N, device="cuda") * 4).to(torch.bfloat16)
    out = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    got = f4gemm.matmul(q, s, w, c=c, alpha=0.25, beta=1.5, out=out)
    assert got is out
    ref = mxref.gemm(q.cpu().numpy(), s.cpu().numpy(), bq.cpu().numpy(), bs.cpu().numpy(), alpha=0.25, beta=1.5,
                     c=c.float().cpu().numpy())
    mxref.check_close(out.float().cpu().numpy(), ref)


def test_matmul_on_side_stream(torch, rng):
    x, b = _finite_operands(rng, 64, 512, 1024)
    w = f4gemm.pack_weight(*f4gemm.quantize(torch.from_numpy(b).cuda()))
    xs = torch.from_numpy(x).cuda().to(torch.bfloat16)
    eager = f4gemm.matmul(*f4gemm.quantize(xs), w)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        d = f4gemm.matmul(*f4gemm.quantize(xs), w)
    torch.cuda.current_stream().wait_stream(side)
    assert torch.equal(d, eager)


# ---- cupy -----------------------------------------------------------------------------------------------------

def test_cupy(torch, rng):
    cupy = pytest.importorskip("cupy")
    x = _specials(rng, M, K)
    q, s = f4gemm.quantize(cupy.asarray(x))
    assert isinstance(q, cupy.ndarray) and q.shape == (M, K // 2)
    hq, hs = f4gemm.quantize(x)
    np.testing.assert_array_equal(cupy.asnumpy(q), hq)
    np.testing.assert_array_equal(cupy.asnumpy(s), hs)
    xf, b = _finite_operands(rng, M, N, K)
    q, s = f4gemm.quantize(cupy.asarray(xf))
    bq, bs = f4gemm.quantize(cupy.asarray(b))
    w = f4gemm.pack_weight(bq, bs)
    assert isinstance(w.data, cupy.ndarray)
    d = f4gemm.matmul(q, s, w)
    assert isinstance(d, cupy.ndarray) and d.dtype == np.float32 and d.shape == (M, N)
    ref = mxref.gemm(cupy.asnumpy(q), cupy.asnumpy(s), cupy.asnumpy(bq), cupy.asnumpy(bs))
    mxref.check_close(cupy.asnumpy(d), ref)
    # the same bits as through torch
    tq, ts = torch.from_numpy(cupy.asnumpy(q)).cuda(), torch.from_numpy(cupy.asnumpy(s)).cuda()
    tw = f4gemm.pack_weight(torch.from_numpy(cupy.asnumpy(bq)).cuda(), torch.from_numpy(cupy.asnumpy(bs)).cuda())
    np.testing.assert_array_equal(cupy.asnumpy(d), f4gemm.matmul(tq, ts, tw).float().cpu().numpy())
    c = cupy.asarray(rng.standard_normal((M, N)).astype(np.float32))
    out = cupy.empty((M, N), dtype=cupy.float32)
    assert f4gemm.matmul(q, s, w, c=c, beta=-1.0, out=out) is out
    mxref.check_close(cupy.asnumpy(out), mxref.gemm(cupy.asnumpy(q), cupy.asnumpy(s), cupy.asnumpy(bq),
                                                    cupy.asnumpy(bs), beta=-1.0, c=cupy.asnumpy(c)))


# ---- jax ------------------------------------------------------------------------------------------------------

def test_jax(torch, rng):
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    gpus = [d for d in jax.devices() if d.platform == "gpu"]
    if not gpus:
        pytest.skip("jax sees no GPU")
    x = _specials(rng, M, K)
    xj = jax.device_put(jnp.asarray(x, dtype=jnp.bfloat16), gpus[0])
    q, s = f4gemm.quantize(xj)
    assert isinstance(q, jax.Array) and q.shape == (M, K // 2) and q.dtype == jnp.uint8
    hq, hs = f4gemm.quantize(np.asarray(xj.astype(jnp.float32)))
    np.testing.assert_array_equal(np.asarray(q), hq)
    np.testing.assert_array_equal(np.asarray(s), hs)
    xf, b = _finite_operands(rng, M, N, K)
    q, s = f4gemm.quantize(jax.device_put(jnp.asarray(xf), gpus[0]))
    bq, bs = f4gemm.quantize(jax.device_put(jnp.asarray(b), gpus[0]))
    w = f4gemm.pack_weight(bq, bs)
    d = f4gemm.matmul(q, s, w)
    assert isinstance(d, jax.Array) and d.dtype == jnp.bfloat16 and d.shape == (M, N)
    ref = mxref.gemm(np.asarray(q), np.asarray(s), np.asarray(bq), np.asarray(bs))
    mxref.check_close(np.asarray(d.astype(jnp.float32)), ref)
    with pytest.raises(ValueError, match="out: jax arrays are immutable"):
        f4gemm.matmul(q, s, w, out=d)


# ---- the Linear -----------------------------------------------------------------------------------------------

def _linear(torch, k, n, bias=True):
    torch.manual_seed(0)
    lin = torch.nn.Linear(k, n, bias=bias).cuda().to(torch.bfloat16)
    return lin, f4gemm.torch.Linear.from_linear(lin)


@pytest.mark.parametrize("shape", [(1, 1024), (5, 7, 1024), (300, 1024)])
def test_linear_against_f_linear(torch, shape):
    with torch.no_grad():
        _check_linear(torch, shape)


def _check_linear(torch, shape):
    import torch.nn.functional as F

    lin, f4 = _linear(torch, 1024, 3000)
    assert (f4.in_features, f4.out_features) == (1024, 3000)
    x = torch.randn(*shape, device="cuda", dtype=torch.bfloat16)
    y = f4(x)
    assert y.dtype == torch.bfloat16 and tuple(y.shape) == (*shape[:-1], 3000)
    # against F.linear on the dequantized weight and activations, in float64: the bf16 GEMM rounding plus the
    # bias add in bf16
    w_deq = f4.dequantized_weight().double()
    wq, ws = f4.packed_weight().unpack()
    assert torch.equal(f4gemm.dequantize(wq, ws).double(), w_deq)
    xq, xs = f4gemm.quantize(x.reshape(-1, 1024))
    x_deq = f4gemm.dequantize(xq, xs).double()
    ref = F.linear(x_deq, w_deq, lin.bias.double()).reshape(*shape[:-1], 3000)
    mxref.check_close(y.double().cpu().numpy(), ref.cpu().numpy(), rel=2.0**-7)
    # and the quantization error against plain bf16, for the record (MXFP4: ~10%)
    rel = (y.double() - F.linear(x, lin.weight, lin.bias).double()).norm() / F.linear(x, lin.weight, lin.bias).double().norm()
    assert rel < 0.25
    assert torch.equal(f4(x.float()), y.float())  # float32 input: the same values, widened


def test_linear_from_an_nn_linear_directly(torch):
    """Linear(nn_linear) is Linear.from_linear(nn_linear): the same packed weight, bias and outputs; a second bias
    or a device for a packed Weight is refused with the fix."""
    lin, f4 = _linear(torch, 1024, 512)
    direct = f4gemm.torch.Linear(lin)
    assert torch.equal(direct.weight_packed, f4.weight_packed) and torch.equal(direct.bias, f4.bias)
    x = torch.randn(3, 1024, device="cuda", dtype=torch.bfloat16)
    with torch.no_grad():
        assert torch.equal(direct(x), f4(x))
    assert f4gemm.torch.Linear(lin, accum="promoted").accum == "promoted"
    with pytest.raises(ValueError, match="brings its own bias"):
        f4gemm.torch.Linear(lin, bias=lin.bias)
    with pytest.raises(ValueError, match="applies only when weight is a torch.nn.Linear"):
        f4gemm.torch.Linear(f4.packed_weight(), device="cuda")
    with pytest.raises(ValueError, match="pass a torch.nn.Linear or an f4gemm.Weight"):
        f4gemm.torch.Linear(lin.weight)


def test_linear_promoted_obeys_the_bound(torch):
    """Linear(accum="promoted") at M = 256 (a promoted kernel): within the promoted bound of the same GEMM on the
    dequantized operands (|y - ref| <= 2^-8 |ref| + c_w sum |x||w|, c_w = 133 * 2^-13 + K/128 * 2^-24 at K = 2048),
    and far closer than that in practice; the exact Linear on the same input stays within 2^-8 of ref."""
    import torch.nn.functional as F

    torch.manual_seed(0)
    lin = torch.nn.Linear(2048, 1024, bias=False).cuda().to(torch.bfloat16)
    exact = f4gemm.torch.Linear.from_linear(lin)
    prom = f4gemm.torch.Linear.from_linear(lin, accum="promoted")
    assert prom.accum == "promoted" and "accum=promoted" in repr(prom)
    assert f4gemm.select(256, 1024, 2048, accum="promoted")["kernel_accum"] == "promoted"
    x = torch.randn(256, 2048, device="cuda", dtype=torch.bfloat16)
    with torch.no_grad():
        yp, ye = prom(x).double(), exact(x).double()
    xq, xs = f4gemm.quantize(x)
    x_deq = f4gemm.dequantize(xq, xs).double()
    w_deq = prom.dequantized_weight().double()
    ref = F.linear(x_deq, w_deq)
    mag = F.linear(x_deq.abs(), w_deq.abs())
    cw = 133 * 2.0**-13 + (2048 // 128) * 2.0**-24
    excess = ((yp - ref).abs() - ref.abs() * 2.0**-8).clamp_min(0)
    assert bool((excess <= cw * mag).all())
    assert float((excess / mag).max()) <= 2.0**-11
    assert bool(((ye - ref).abs() <= ref.abs() * 2.0**-8 + 1e-30).all())
    with pytest.raises(ValueError, match="promoted"):
        f4gemm.torch.Linear.from_linear(lin, accum="fast")
    with pytest.raises(ValueError, match="promoted"):  # refused before the device check and the packing
        f4gemm.torch.Linear.from_linear(torch.nn.Linear(64, 8), accum="fast")


def test_linear_cuda_graph(torch):
    _, f4 = _linear(torch, 2048, 4096)
    # M = 200: a kernel with a pre-pass (pab_128x128), so the graph holds the Session's workspace
    static_x = torch.randn(200, 2048, device="cuda", dtype=torch.bfloat16)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up: loads the kernel, sizes the workspace
        for _ in range(2):
            f4(static_x)
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        static_y = f4(static_x)
    for _ in range(3):
        new_x = torch.randn(200, 2048, device="cuda", dtype=torch.bfloat16)
        static_x.copy_(new_x)
        g.replay()
        torch.cuda.synchronize()
        assert torch.equal(static_y, f4(new_x))
    # a shape never run before capture is refused inside the capture, with the fix
    x2 = torch.randn(3000, 2048, device="cuda", dtype=torch.bfloat16)
    g2 = torch.cuda.CUDAGraph()
    with pytest.raises(ValueError, match="before capturing"):
        with torch.cuda.graph(g2):
            f4(x2)
    torch.cuda.synchronize()
    # an eager GEMM that needs a larger workspace after capture leaves the graph's workspace alone: it runs on
    # another tier of the Session (its own workspace)
    big = torch.randn(4096, 2048, device="cuda", dtype=torch.bfloat16)
    f4(big)
    if f4gemm.select(200, 4096, 2048)["workspace_bytes"] > 0:  # the graph holds a workspace
        assert f4gemm.default_session("cuda:0")._s.tiers >= 2
    static_x.copy_(new_x)
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(static_y, f4(new_x))


# ---- bad GPU input --------------------------------------------------------------------------------------------

def test_non_contiguous_inputs_are_copied(torch, rng):
    x, b = _finite_operands(rng, 64, 96, 512)
    xt = torch.from_numpy(np.ascontiguousarray(x.T)).cuda().t()  # [64, 512], column-major
    q, s = f4gemm.quantize(xt)
    q2, s2 = f4gemm.quantize(xt.contiguous())
    assert torch.equal(q, q2) and torch.equal(s, s2)
    w = f4gemm.pack_weight(*f4gemm.quantize(torch.from_numpy(b).cuda()))
    qt = q.contiguous().t().contiguous().t()  # the same values, column-major
    st = s.contiguous().t().contiguous().t()
    assert torch.equal(f4gemm.matmul(qt, st, w), f4gemm.matmul(q, s, w))
    c = torch.randn(96, 64, device="cuda").to(torch.bfloat16).t()
    assert torch.equal(f4gemm.matmul(q, s, w, c=c, beta=1.0), f4gemm.matmul(q, s, w, c=c.contiguous(), beta=1.0))


def test_pdl_chain_matches_plain_launches(torch, rng):
    """A layer-like chain (quantize -> GEMM -> quantize -> GEMM, through the Linear too) with pdl on gives the plain
    launches' bits: each early-launched GEMM waits for the quantizer ahead of it before reading its A."""
    x, b1 = _finite_operands(rng, 16, 1024, 2048)
    _, b2 = _finite_operands(rng, 16, 512, 1024)
    outs = {}
    for pdl in (False, True):
        s = f4gemm.Session(0, pdl=pdl)
        w1 = s.pack_weight(*s.quantize(torch.from_numpy(b1).cuda()))
        w2 = s.pack_weight(*s.quantize(torch.from_numpy(b2).cuda()))
        ds = []
        for i in range(6):  # back to back, each chain on its own input, no synchronisation between
            xi = torch.from_numpy(x * (i + 1)).cuda().to(torch.bfloat16)
            d1 = s.matmul(*s.quantize(xi), w1, accum="promoted")
            ds.append(s.matmul(*s.quantize(d1), w2))
        outs[pdl] = torch.stack(ds)
    assert torch.equal(outs[False], outs[True])
    assert outs[True].abs().sum().item() > 0


def test_bad_gpu_input(torch, rng):
    x, b = _finite_operands(rng, 8, 64, 256)
    q, s = f4gemm.quantize(torch.from_numpy(x).cuda())
    w = f4gemm.pack_weight(*f4gemm.quantize(torch.from_numpy(b).cuda()))
    out = torch.full((8, 64), 3.0, device="cuda", dtype=torch.bfloat16)
    sess = f4gemm.default_session("cuda:0")

    def refused(fn, *patterns):
        with pytest.raises(ValueError) as e:
            fn()
        for p in patterns:
            assert p in str(e.value), f"{p!r} not in {str(e.value)!r}"

    refused(lambda: sess.quantize(torch.from_numpy(x)), "x: on the CPU while this Session is on cuda:0", ".cuda()")
    refused(lambda: f4gemm.quantize(torch.from_numpy(x).cuda().half()), "x: dtype float16", "x.to(torch.bfloat16)")
    refused(lambda: f4gemm.quantize(torch.from_numpy(x).cuda()[:, :100]), "x: K = 100")
    refused(lambda: f4gemm.matmul(q, s.cpu(), w, out=out), "a_scales: on cpu", "one device")
    refused(lambda: f4gemm.matmul(q.cpu(), s.cpu(), w, out=out), "a_q: on the CPU while this Session is on cuda:0")
    refused(lambda: f4gemm.matmul(q, s[:, :2], w, out=out), "a_scales: shape (8, 2)")
    refused(lambda: f4gemm.matmul(q, s, w, out=out.float()), "out: dtype float32", "bfloat16")
    refused(lambda: f4gemm.matmul(q, s, w, out=out.t().contiguous().t()), "out: non-contiguous")
    refused(lambda: f4gemm.matmul(q, s, w, c=out[:, :10], beta=1.0, out=out), "c: shape (8, 10)")
    refused(lambda: f4gemm.pack_weight(q, s[:4]), "scales: shape (4, 8)")
    refused(lambda: f4gemm.torch.Linear.from_linear(torch.nn.Linear(100, 8).cuda()), "in_features = 100")
    refused(lambda: f4gemm.torch.Linear.from_linear(torch.nn.Linear(64, 8)), "linear: its weight is on cpu")
    torch.cuda.synchronize()
    assert (out == 3.0).all()  # nothing was launched into it
