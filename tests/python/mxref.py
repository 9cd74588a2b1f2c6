"""A pure-numpy OCP MX v1.0 MXFP4 reference, written from the spec (section 6.3), independent of the library:
quantization, dequantization and the float64 GEMM of dequantized operands. Float64 holds every quantity here
exactly (|x| * 2^-e for float32 x and |e| <= 127), so ties are seen as ties."""

import numpy as np

# e2m1 magnitudes by code 0..7; code 8..15 are the negatives (sign in bit 3).
E2M1 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])
E2M1_SIGNED = np.concatenate([E2M1, -E2M1])


def quantize(x):
    """float32 [M, K] -> (q uint8 [M, K/2], scales uint8 [M, K/32]) by the OCP rule: per 32-block the shared
    exponent floor(log2(amax)) - 2 (emax of e2m1) clamped to [-127, 127] and stored + 127; elements x / 2^e to the
    nearest e2m1 value, ties to the even code, saturating at 6, sign kept (so -0.0 and small negatives give code
    8); an all-zero block gets scale 0 and zero bytes, a block holding NaN or Inf scale 0xFF and zero bytes."""
    x = np.asarray(x, dtype=np.float32)
    m, k = x.shape
    assert k % 32 == 0
    xb = x.reshape(m, k // 32, 32).astype(np.float64)
    finite = np.isfinite(xb).all(axis=-1)
    amax = np.where(finite, np.abs(np.where(np.isfinite(xb), xb, 0.0)).max(axis=-1), 0.0)
    _, exp = np.frexp(amax)  # amax = f * 2^exp, f in [0.5, 1): floor(log2(amax)) = exp - 1
    e = np.clip(exp - 1 - 2, -127, 127)
    zero = amax == 0.0
    scales = np.where(~finite, 255, np.where(zero, 0, e + 127)).astype(np.uint8)
    v = np.abs(np.where(np.isfinite(xb), xb, 0.0)) * np.exp2(-e.astype(np.float64))[..., None]
    dist = np.abs(v[..., None] - E2M1)
    cand = dist == dist.min(axis=-1, keepdims=True)
    code = (cand * (2 - np.arange(8) % 2)).argmax(axis=-1)  # nearest; of two, the even code
    nib = (code | (np.signbit(xb).astype(np.int64) << 3)).astype(np.uint8)
    nib[~finite | zero] = 0
    nib = nib.reshape(m, k)
    q = (nib[:, 0::2] | (nib[:, 1::2] << 4)).astype(np.uint8)
    return q, scales.reshape(m, k // 32)


def dequantize(q, scales):
    """(q [M, K/2], scales [M, K/32]) -> float64 [M, K]; NaN where the scale is 0xFF."""
    q = np.asarray(q, dtype=np.uint8)
    scales = np.asarray(scales, dtype=np.uint8)
    m = q.shape[0]
    nib = np.empty((m, q.shape[1] * 2), dtype=np.uint8)
    nib[:, 0::2] = q & 0xF
    nib[:, 1::2] = q >> 4
    s = np.exp2(scales.astype(np.float64) - 127.0)
    s[scales == 255] = np.nan
    return E2M1_SIGNED[nib] * np.repeat(s, 32, axis=1)


def bf16_round(x):
    """float32 -> the float32 value of its nearest bf16 (ties to even)."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint32) << 16
    out = r.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), np.float32(np.nan), out)


def gemm(a_q, a_s, b_q, b_s, alpha=1.0, beta=0.0, c=None):
    """float64 alpha * A B^T + beta * bf16(C) of the dequantized operands."""
    d = alpha * (dequantize(a_q, a_s) @ dequantize(b_q, b_s).T)
    if c is not None and beta != 0.0:
        d = d + beta * bf16_round(np.asarray(c, dtype=np.float32)).astype(np.float64)
    return d


def check_close(got, ref, rel=2.0**-8, atol_frac=2e-4):
    """The library's tolerance (docs/VERIFY.md): |got - ref| <= rel * |ref| + atol_frac * max|ref|, NaN where the
    reference is NaN and nowhere else. Returns the largest relative error over |ref| > atol."""
    got = np.asarray(got, dtype=np.float64)
    nan_ref = np.isnan(ref)
    assert np.array_equal(np.isnan(got), nan_ref), "NaN outputs differ from the reference's"
    g, r = got[~nan_ref], ref[~nan_ref]
    if r.size == 0:
        return 0.0
    atol = atol_frac * np.abs(r).max()
    err = np.abs(g - r)
    bad = err > rel * np.abs(r) + atol
    assert not bad.any(), f"{bad.sum()} of {r.size} outputs off: max err {err.max()} (atol {atol})"
    big = np.abs(r) > atol
    return float((err[big] / np.abs(r[big])).max()) if big.any() else 0.0


def special_matrix(rng, m, k):
    """float32 [m, k] (m >= 6, k >= 256): Gaussian rows at exponents spread over 2^-20..2^20, with blocks that hit
    every rule: all-zero, all -0.0, NaN, +Inf, -Inf, subnormals, values near FLT_MAX, exact e2m1 midpoints (ties)
    of both signs, saturation, amax in the clamped binades."""
    x = rng.standard_normal((m, k)).astype(np.float32)
    x *= np.exp2(rng.integers(-20, 21, size=(m, 1))).astype(np.float32)
    x[0, 0:32] = 0.0
    x[0, 32:64] = -0.0
    x[0, 64 + 5] = np.nan
    x[0, 96 + 7] = np.inf
    x[0, 128 + 1] = -np.inf
    x[0, 160:192] = -0.0
    x[0, 170] = 1.0  # a non-zero block with signed zeros in it
    x[1, 0:32] = np.arange(32, dtype=np.float32) * np.float32(1e-45)  # subnormals (scale clamped to 2^-127)
    x[1, 32:64] = np.float32(3.0e38) * np.where(np.arange(32) % 2, 1, -1).astype(np.float32) * \
        np.linspace(0.5, 1.0, 32, dtype=np.float32)
    ties = np.array([6, 0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5, 0.125, 4.5, 5.5, 3.25], dtype=np.float32)
    x[2, 0:32] = np.resize(np.concatenate([ties, -ties]), 32)  # amax 6: shared exponent 0, elements as they are
    x[2, 32:64] = np.resize(np.concatenate([ties, -ties]), 32) * np.float32(2.0**-100)
    x[3, 0:32] = np.float32(2.0**-126) * np.linspace(1, 1.9, 32, dtype=np.float32)  # biased exponent 1: clamped
    x[3, 32:64] = np.float32(7.9) * np.linspace(-1, 1, 32, dtype=np.float32)  # saturates at +-6
    x[4, :] = 0.0  # a whole zero row
    x[5, 0:32] = np.float32(1.0) + np.float32(2.0**-20)  # just above a power of two
    return x
