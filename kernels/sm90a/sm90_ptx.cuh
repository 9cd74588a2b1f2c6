// PTX wrappers and MXFP4 -> e5m2 helpers shared by the wgmma kernels (sm90_mxfp4_gemm_ws.cu,
// sm90_mxfp4_gemm_pp.cu): mbarriers, copies, wgmma fences, setmaxnreg, the folded-scale e2m1 -> e5m2
// conversion, the per-row scale scan and the SW128 K-major matrix descriptor.
#pragma once

#include <stdint.h>

namespace f4gemm {
namespace sm90 {

// ---------------------------------------------------------------------------------------------
// PTX wrappers
// ---------------------------------------------------------------------------------------------
__device__ __forceinline__ uint32_t smem_u32(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(bar)), "r"(count));
}
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_u32(bar)) : "memory");
}
// Programmatic dependent launch (PTX griddepcontrol; docs/KERNELS_SM90.md "Launch overlap"). Every kernel
// waits for the kernels before it on the stream to complete (their memory visible) before it reads or writes
// anything in global memory (pdl_wait, its first statement), and a GEMM kernel lets the next kernel be
// scheduled once each of its CTAs has left its main loop (pdl_trigger before the epilogue): triggered at the
// start instead, chains of dec kernels ran 9% slower (docs/PERF.md entry 38). Both are no-ops for a kernel
// launched without the programmatic-serialisation attribute.
__device__ __forceinline__ void pdl_wait() {
    asm volatile("griddepcontrol.wait;" ::: "memory");
}
__device__ __forceinline__ void pdl_trigger() {
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}
// Counters in global memory between the CTAs of two kernels that run at once (sm90pp2: B's converter and
// the GEMM): the writer's stores, the proxy fence and __threadfence, then a relaxed add (the release
// pattern); the reader's relaxed loads, then __threadfence (the acquire pattern) and, before a bulk copy
// reads what the counters cover, the proxy fence, since the copy reads through the async proxy.
__device__ __forceinline__ uint2 ld_relaxed_gpu_v2(const uint32_t* p) {
    uint2 v;
    asm volatile("ld.relaxed.gpu.global.v2.u32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void fence_proxy_async_global() {
    asm volatile("fence.proxy.async.global;" ::: "memory");
}
__device__ __forceinline__ uint32_t sm_count() {
    uint32_t n;
    asm("mov.u32 %0, %%nsmid;" : "=r"(n));
    return n;
}
// The SM this thread runs on, and the GPU's nanosecond timer (the decode kernel's DEC_PROBE_TS timestamps).
__device__ __forceinline__ uint32_t sm_id() {
    uint32_t s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    return s;
}
__device__ __forceinline__ uint64_t global_timer_ns() {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
// Before an mbarrier's shared memory is reused for anything else (no operation may be pending on it).
__device__ __forceinline__ void mbar_inval(uint64_t* bar) {
    asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(smem_u32(bar)) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
    asm volatile(
        "{\n"
        ".reg .pred P1;\n"
        "WAIT_%=:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n"
        "@!P1 bra WAIT_%=;\n"
        "}\n" ::"r"(smem_u32(bar)),
        "r"(parity)
        : "memory");
}
// Arrives once on the mbarrier and adds `bytes` to the transaction count the phase waits for.
__device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(bar)), "r"(bytes)
                 : "memory");
}
// 1D bulk copy global -> shared (TMA engine, no tensor map): `bytes` a multiple of 16, both addresses
// 16-byte aligned; completion is counted on the mbarrier's transaction count.
__device__ __forceinline__ void bulk_copy_g2s(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
            smem_u32(dst)),
        "l"(src), "r"(bytes), "r"(smem_u32(bar))
        : "memory");
}
__device__ __forceinline__ void cp_async_16(void* dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_u32(dst)), "l"(src) : "memory");
}
// 4-byte cp.async (.ca: the 16-byte form is the only one .cg allows); the dec kernels' scale words.
__device__ __forceinline__ void cp_async_4(void* dst, const void* src) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(smem_u32(dst)), "l"(src) : "memory");
}
// Arrives on the mbarrier once all prior cp.async of this thread have completed (counts as an arrival).
__device__ __forceinline__ void cp_async_mbar_arrive(uint64_t* bar) {
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(smem_u32(bar)) : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
    asm volatile("cp.async.commit_group;" ::: "memory");
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}
__device__ __forceinline__ void fence_proxy_async() {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
__device__ __forceinline__ void fence_barrier_init() {
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
__device__ __forceinline__ void named_barrier(int id, int count) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}
__device__ __forceinline__ void wgmma_fence() {
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
template <int N>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
__device__ __forceinline__ void fence_reg(float& r) {
    asm volatile("" : "+f"(r)::"memory");
}
__device__ __forceinline__ void fence_reg(uint32_t& r) {
    asm volatile("" : "+r"(r)::"memory");
}
template <int N>
__device__ __forceinline__ void setmaxnreg_inc() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(N));
}
template <int N>
__device__ __forceinline__ void setmaxnreg_dec() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(N));
}
__device__ __forceinline__ uint32_t prmt(uint32_t a, uint32_t b, uint32_t sel) {
    uint32_t d;
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(sel));
    return d;
}

// ---------------------------------------------------------------------------------------------
// e2m1 x 8 -> e5m2 x 8 with the block scale folded in.
// The LUT holds the 8 magnitudes e2m1 * 2^d as e5m2 bytes: at d = 0 {0, .5, 1, 1.5, 2, 3, 4, 6} =
// {00 38 3C 3E | 40 42 44 46}; adding d to the exponent adds 4d to every non-zero byte, exact and
// carry-free for d in [-13, 13] (exponent field 1..30). One LUT = two IMADs per (row, scale block).
// x holds elements e0..e7 (e0 in the low nibble). Output: lo = e0..e3, hi = e4..e7 as bytes. The
// wgmma k position of element e of a k32 block is perm(e) = 4*(e/8) + (e%8 < 4 ? e%8 : 12 + e%8):
// lo of fp4 word t feeds k 4t..4t+3, hi feeds k 16+4t..16+4t+3 (same order on both operands, and the
// order of a dot product inside one scale block is free).
// ---------------------------------------------------------------------------------------------
constexpr uint32_t kLutLo0 = 0x3E3C3800u;
constexpr uint32_t kLutHi0 = 0x46444240u;
constexpr int kWindow = 13;  // |d| <= 13 around the per-row reference; 27 binades per row

__device__ __forceinline__ void make_lut(int d, uint32_t& lut_lo, uint32_t& lut_hi) {
    lut_lo = (uint32_t)d * 0x04040400u + kLutLo0;
    lut_hi = (uint32_t)d * 0x04040404u + kLutHi0;
}

__device__ __forceinline__ void cvt8(uint32_t x, uint32_t lut_lo, uint32_t lut_hi, uint32_t& lo,
                                     uint32_t& hi) {
    const uint32_t mag = x & 0x77777777u;
    const uint32_t ml = prmt(lut_lo, lut_hi, mag);
    const uint32_t mh = prmt(lut_lo, lut_hi, mag >> 16);
    const uint32_t y = x << 4;
    const uint32_t sl = prmt(y, x, 0xD9C8u);  // sign-replicate mode: 0xFF where the nibble is negative
    const uint32_t sh = prmt(y, x, 0xFBEAu);
    lo = ml | (sl & 0x80808080u);
    hi = mh | (sh & 0x80808080u);
}

// cvt8 for a bit-plane word (include/f4gemm/bitplane.h: byte q holds sign(e_q) in bit 7, mag(e_{q+4}) in bits
// 6..4, mag(e_q) in bits 3..1, sign(e_{q+4}) in bit 0): the same bytes as cvt8 of the plain word, lo =
// e0..e3, hi = e4..e7, with the same LUT. The magnitudes already sit as selector nibbles 2q (e_q) and 2q + 1
// (e_{q+4}) after one shift and mask, so the LUT permutes come out interleaved ([e0 e4 e1 e5], [e2 e6 e3 e7])
// and two more permutes sort them: 10 instructions, against cvt8's 9 plus the inverse bit permutation.
// Checked on the host (a throwaway emulation, not in the tree) against cvt8 of bitplane_word_inverse for all
// 2^32 words at one LUT and 2^20 random words at every d; in the tree, every pp_128x128 gpu test and sweep
// case checks it end to end (each converted element is in some output against the float64 reference).
__device__ __forceinline__ void cvt8_bitplane(uint32_t x, uint32_t lut_lo, uint32_t lut_hi, uint32_t& lo,
                                              uint32_t& hi) {
    const uint32_t sel = ((x >> 1) & 0x07070707u) | (x & 0x70707070u);
    const uint32_t m0 = prmt(lut_lo, lut_hi, sel);        // e0 e4 e1 e5
    const uint32_t m1 = prmt(lut_lo, lut_hi, sel >> 16);  // e2 e6 e3 e7
    lo = prmt(m0, m1, 0x6420u) | (x & 0x80808080u);
    hi = prmt(m0, m1, 0x7531u) | ((x << 7) & 0x80808080u);
}

// One scale block (32 elements, 16 bytes of fp4x2) through cvt8: lo = the e5m2 bytes of the four words'
// elements e0..e3, hi = e4..e7 (the two 16-byte chunks of the block in the S side's k order).
__device__ __forceinline__ void cvt32(const uint4& x, uint32_t lut_lo, uint32_t lut_hi, uint4& lo,
                                      uint4& hi) {
    cvt8(x.x, lut_lo, lut_hi, lo.x, hi.x);
    cvt8(x.y, lut_lo, lut_hi, lo.y, hi.y);
    cvt8(x.z, lut_lo, lut_hi, lo.z, hi.z);
    cvt8(x.w, lut_lo, lut_hi, lo.w, hi.w);
}

// cvt32 for a block of bit-plane words (16 bytes of W: words t = 0..3 of one row and block): lo = the e5m2
// bytes of the words' elements 8t..8t+3, hi = 8t+4..8t+7, the chunks cvt32 gives, so both feed the S side's k
// order.
__device__ __forceinline__ void cvt32_bitplane(const uint4& x, uint32_t lut_lo, uint32_t lut_hi, uint4& lo,
                                               uint4& hi) {
    cvt8_bitplane(x.x, lut_lo, lut_hi, lo.x, hi.x);
    cvt8_bitplane(x.y, lut_lo, lut_hi, lo.y, hi.y);
    cvt8_bitplane(x.z, lut_lo, lut_hi, lo.z, hi.z);
    cvt8_bitplane(x.w, lut_lo, lut_hi, lo.w, hi.w);
}

// Block j (of a 128-K atom) of a 128-byte SW128 K-major row: its lo / hi chunks are 16-byte chunks 2 (j % 4)
// and 2 (j % 4) + 1, stored at chunk index c ^ (row % 8) (`sw`).
__device__ __forceinline__ void store_block_sw128(uint8_t* dst_row, int j, int sw, const uint4& lo,
                                                  const uint4& hi) {
    const int c_lo = 2 * (j % 4);
    *reinterpret_cast<uint4*>(dst_row + ((c_lo ^ sw) << 4)) = lo;
    *reinterpret_cast<uint4*>(dst_row + (((c_lo + 1) ^ sw) << 4)) = hi;
}

// ---------------------------------------------------------------------------------------------
// Per-row scale scan: max and min exponent (NaN bytes excluded) and NaN presence over the split's K
// range, read as u64 words by `nparts` cooperating lanes (consecutive lanes, nparts a power of two).
// ---------------------------------------------------------------------------------------------
struct RowRef {
    int ref;    // reference exponent: d = e - ref lies in [-13, 13] when the row is foldable
    bool nan;   // some block scale of the row is 0xFF
    bool wide;  // exponents span more than 2*kWindow binades: not foldable, take the exact path
};

// One u64 word of scales into a lane's running byte-wise max / min (NaN bytes excluded) and NaN mask.
__device__ __forceinline__ void scan_word(uint2 v, uint32_t& mx, uint32_t& mn, uint32_t& nan) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const uint32_t x = h ? v.y : v.x;
        const uint32_t ff = __vcmpeq4(x, 0xFFFFFFFFu);
        nan |= ff;
        mx = __vmaxu4(mx, x & ~ff);
        mn = __vminu4(mn, x | ff);
    }
}

// The cooperating lanes' partial results -> the row's RowRef (every lane gets it).
__device__ __forceinline__ RowRef finish_row(uint32_t mx, uint32_t mn, uint32_t nan, int nparts, bool valid);

__device__ __forceinline__ RowRef scan_row(const uint8_t* row_scales, int nwords, int part, int nparts,
                                           bool valid) {
    uint32_t mx = 0u, mn = 0xFFFFFFFFu, nan = 0u;
    if (valid) {
        for (int w = part; w < nwords; w += nparts)
            scan_word(__ldg(reinterpret_cast<const uint2*>(row_scales) + w), mx, mn, nan);
    }
    return finish_row(mx, mn, nan, nparts, valid);
}

__device__ __forceinline__ RowRef finish_row(uint32_t mx, uint32_t mn, uint32_t nan, int nparts, bool valid) {
    for (int o = 1; o < nparts; o <<= 1) {
        mx = __vmaxu4(mx, __shfl_xor_sync(0xFFFFFFFFu, mx, o));
        mn = __vminu4(mn, __shfl_xor_sync(0xFFFFFFFFu, mn, o));
        nan |= __shfl_xor_sync(0xFFFFFFFFu, nan, o);
    }
    mx = __vmaxu4(mx, mx >> 16);
    mx = __vmaxu4(mx, mx >> 8);
    mn = __vminu4(mn, mn >> 16);
    mn = __vminu4(mn, mn >> 8);
    const int emax = (int)(mx & 0xFF), emin = (int)(mn & 0xFF);
    RowRef r;
    r.nan = valid && nan != 0u;
    const bool any = valid && emin != 0xFF;  // at least one non-NaN block
    r.ref = any ? emax - kWindow : 127;
    r.wide = any && !r.nan && (emax - emin > 2 * kWindow);
    return r;
}

// Per-row word of the pre-pass kernels (sm90pp1, sm90pa1; docs/ABI_SM90.md): bits 0..15 the reference
// exponent + 64, bit 16 NaN, bit 17 wide.
constexpr uint32_t kRowNan = 1u << 16;
constexpr uint32_t kRowWide = 1u << 17;
__device__ __forceinline__ uint32_t row_word(const RowRef& r) {
    return (uint32_t)(r.ref + 64) | (r.nan ? kRowNan : 0u) | (r.wide ? kRowWide : 0u);
}
__device__ __forceinline__ int row_ref(uint32_t w) {
    return (int)(w & 0xFFFFu) - 64;
}

// SW128 K-major shared-memory matrix descriptor (sm_90 GMMA): start address, LBO (unused for swizzled
// K-major, 1 as CUTLASS writes it), SBO = 1024 bytes between 8-row groups, layout type 1 = 128B swizzle.
__device__ __forceinline__ uint64_t make_desc_sw128(uint32_t smem_addr) {
    uint64_t d = 0;
    d |= (uint64_t)((smem_addr >> 4) & 0x3FFF);
    d |= (uint64_t)1 << 16;
    d |= (uint64_t)(1024 >> 4) << 32;
    d |= (uint64_t)1 << 62;
    return d;
}

// Promotion of a fresh accumulator: acc += f element-wise. f is fenced first: its registers were written by
// an asynchronous wgmma that the caller has waited for.
template <int R>
__device__ __forceinline__ void promote_add(float (&acc)[R], float (&f)[R]) {
#pragma unroll
    for (int i = 0; i < R; ++i) {
        fence_reg(f[i]);
        acc[i] += f[i];
    }
}

// One wgmma with both operands in shared memory (SW128 K-major at these addresses) into the fresh
// accumulator f, fenced and committed as its own group. Mma is a WgmmaE5m2SS<N>.
template <class Mma, int R>
__device__ __forceinline__ void wgmma_ss(float (&f)[R], uint32_t a_addr, uint32_t b_addr) {
    wgmma_fence();
    Mma::mma(f, make_desc_sw128(a_addr), make_desc_sw128(b_addr));
    wgmma_commit();
}

}  // namespace sm90
}  // namespace f4gemm
