// The float64 CPU references that every backend is checked against. reference_gemm is ported
// from asm_f4gemm f4gemm_ref.hpp reference_gemm (a double accumulator per element summing k in
// order, rows split into contiguous chunks over threads); it departs only in the epilogue,
// alpha*acc + beta*C, computed in double and rounded once (the original rounded acc to float
// first and never had a C). reference_gemm_mx is ours: an exact sum for any E8M0 scale.
#include "f4gemm/reference.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <system_error>
#include <thread>

#include "f4gemm/error.hpp"
#include "f4gemm/formats.hpp"

namespace f4gemm {
namespace {

// Columns per pass: four independent double chains hide the add latency while each element still
// sums its k products strictly in order 0..k-1, the same order as the one-element loop.
constexpr size_t kColsPerPass = 4;

inline float epilogue(double acc, double alpha, double beta, const float* c, size_t idx) {
    double v = alpha * acc;
    if (c) v += beta * double(c[idx]);
    return float(v);
}

void reference_rows(const float* a, const float* b, size_t row_begin, size_t row_end, size_t n, size_t k,
                    double alpha, double beta, const float* c, float* out) {
    for (size_t i = row_begin; i < row_end; ++i) {
        const float* a_row = a + i * k;  // (k) float32, dequantized A row i
        size_t j = 0;
        for (; j + kColsPerPass <= n; j += kColsPerPass) {
            const float* b0 = b + (j + 0) * k;
            const float* b1 = b + (j + 1) * k;
            const float* b2 = b + (j + 2) * k;
            const float* b3 = b + (j + 3) * k;
            double acc[kColsPerPass] = {0, 0, 0, 0};
            for (size_t kk = 0; kk < k; ++kk) {
                const double av = a_row[kk];
                acc[0] += av * double(b0[kk]);
                acc[1] += av * double(b1[kk]);
                acc[2] += av * double(b2[kk]);
                acc[3] += av * double(b3[kk]);
            }
            for (size_t t = 0; t < kColsPerPass; ++t)
                out[i * n + j + t] = epilogue(acc[t], alpha, beta, c, i * n + j + t);
        }
        for (; j < n; ++j) {
            const float* b_row = b + j * k;
            double acc = 0;
            for (size_t kk = 0; kk < k; ++kk) acc += double(a_row[kk]) * double(b_row[kk]);
            out[i * n + j] = epilogue(acc, alpha, beta, c, i * n + j);
        }
    }
}

// Runs rows(begin, end) over contiguous chunks of cdiv(m, threads) rows, one thread each;
// threads <= 0 means min(max(1, hardware_concurrency), m), as in the original.
template <class Rows>
void parallel_rows(size_t m, int threads, const Rows& rows) {
    size_t num_threads =
        threads > 0 ? size_t(threads) : std::max<size_t>(1, std::thread::hardware_concurrency());
    num_threads = std::min(num_threads, m);
    const size_t chunk = (m + num_threads - 1) / num_threads;
    if (num_threads == 1) {
        rows(size_t(0), m);
        return;
    }
    std::vector<std::thread> pool;
    pool.reserve(num_threads);
    try {
        for (size_t t = 0; t < num_threads; ++t) {
            const size_t begin = t * chunk, end = std::min(m, begin + chunk);
            if (begin >= end) break;
            pool.emplace_back(rows, begin, end);
        }
    } catch (const std::system_error& e) {
        for (auto& th : pool) th.join();  // never leave a joinable thread behind (std::terminate)
        throw Error(Errc::InvalidArgument, std::string("reference_gemm: could not start a thread (") +
                                               e.what() + "): pass a smaller thread count");
    }
    for (auto& th : pool) th.join();
}

// Exact running sum of finite doubles kept as non-overlapping partials, and its correctly rounded
// value: Shewchuk's grow-expansion with the final rounding of Python's math.fsum (msum).
class ExactSum {
public:
    void clear() { n_ = 0; }
    void add(double x) {
        size_t kept = 0;
        for (size_t p = 0; p < n_; ++p) {
            double y = partials_[p];
            if (std::fabs(x) < std::fabs(y)) std::swap(x, y);
            const double hi = x + y;
            const double lo = y - (hi - x);
            if (lo != 0.0) partials_[kept++] = lo;
            x = hi;
        }
        n_ = kept;
        if (n_ == partials_.size())
            partials_.push_back(x);
        else
            partials_[n_] = x;
        ++n_;
    }
    double value() const {
        size_t p = n_;
        if (p == 0) return 0.0;
        double hi = partials_[--p], lo = 0.0;
        while (p > 0) {
            const double x = hi, y = partials_[--p];
            hi = x + y;
            lo = y - (hi - x);
            if (lo != 0.0) break;
        }
        // A half-way lo is broken by the sign of the partials below it (round half to even would
        // be wrong when those make the exact sum lean one way).
        if (p > 0 && ((lo < 0 && partials_[p - 1] < 0) || (lo > 0 && partials_[p - 1] > 0))) {
            const double y = lo * 2, x = hi + y;
            if (y == x - hi) hi = x;
        }
        return hi;
    }

private:
    std::vector<double> partials_;
    size_t n_ = 0;
};

// [rows, k] float64 values of a plain MXFP4 operand: e2m1 * 2^(e-127) is exact in double for
// every E8M0 e (at most 6 * 2^127), and NaN where e == 0xFF.
std::vector<double> dequantize_f64(const MxOperand& op) {
    std::vector<double> out(op.rows * op.k);
    const size_t row_bytes = op.k / 2, row_scales = op.k / kBlockK;
    for (size_t r = 0; r < op.rows; ++r) {
        const uint8_t* packed_row = op.packed.data() + r * row_bytes;
        for (size_t i = 0; i < op.k; ++i)
            out[r * op.k + i] = double(e2m1_to_float(unpack_nibble(packed_row, i))) *
                                e8m0_to_double(op.scales[r * row_scales + i / kBlockK]);
    }
    return out;
}

void check_mx_operand(const MxOperand& op, const char* name, size_t k) {
    const std::string who = std::string("reference_gemm_mx: operand ") + name;
    if (op.k != k)
        throw Error(Errc::InvalidArgument, who + " k (got " + std::to_string(op.k) +
                                               ") differs from A's k = " + std::to_string(k) +
                                               ": pass operands of one k");
    if (op.k % kBlockK != 0)
        throw Error(Errc::InvalidArgument, who + " k (got " + std::to_string(op.k) +
                                               ") is not a multiple of 32: MXFP4 has one scale per 32");
    if (op.packed.size() != op.rows * (op.k / 2) || op.scales.size() != op.rows * (op.k / kBlockK))
        throw Error(Errc::InvalidArgument, who + " buffers do not match its shape [" +
                                               std::to_string(op.rows) + ", " + std::to_string(op.k) +
                                               "] (got packed " + std::to_string(op.packed.size()) +
                                               " and scales " + std::to_string(op.scales.size()) + " bytes)");
}

}  // namespace

std::vector<float> reference_gemm(const float* a, const float* b, size_t m, size_t n, size_t k, float alpha,
                                  float beta, const float* c, int threads) {
    if (m == 0 || n == 0) return {};
    if (!a || !b)
        throw Error(Errc::InvalidArgument,
                    std::string("reference_gemm: operand ") + (!a ? "A" : "B") +
                        " is null (got nullptr): pass the dequantized [rows, k] float32 data");
    // The original only adds C when beta != 0, so a C holding NaN/Inf with beta == 0 is ignored.
    if (beta == 0.f) c = nullptr;
    std::vector<float> out(m * n);
    parallel_rows(m, threads, [&](size_t begin, size_t end) {
        reference_rows(a, b, begin, end, n, k, alpha, beta, c, out.data());
    });
    return out;
}

namespace {

// The exact sums of reference_gemm_mx over plain MXFP4 operands. Per output: the value alpha * sum + beta * C
// rounded once to float (out_f) and/or kept in double (out_d), and, when out_s is set, S = sum_k |a_k| |b_k|
// summed exactly the same way and rounded once (the promoted mode's magnitude).
void mx_reference(const MxOperand& a, const MxOperand& b, float alpha, float beta, const float* c,
                  int threads, float* out_f, double* out_d, double* out_s) {
    const size_t m = a.rows, n = b.rows, k = a.k;
    if (beta == 0.f) c = nullptr;
    const std::vector<double> a64 = dequantize_f64(a), b64 = dequantize_f64(b);
    parallel_rows(m, threads, [&](size_t begin, size_t end) {
        ExactSum sum[kColsPerPass], abs_sum[kColsPerPass];
        for (size_t i = begin; i < end; ++i) {
            const double* a_row = a64.data() + i * k;  // (k) float64, dequantized A row i
            for (size_t j = 0; j < n; j += kColsPerPass) {
                const size_t cols = std::min(kColsPerPass, n - j);
                const double* b_rows[kColsPerPass];
                for (size_t t = 0; t < kColsPerPass; ++t) {
                    b_rows[t] = b64.data() + (j + std::min(t, cols - 1)) * k;
                    sum[t].clear();
                    abs_sum[t].clear();
                }
                // The 32 products of one block share one scale pair, so their double sum is exact
                // (multiples of 2^(ea+eb-256) below 1152 * 2^(ea+eb-254)), and so is the sum of their
                // magnitudes; blocks then meet in the exact sum. A NaN scale gives a NaN block, which goes
                // around the exact sum.
                double nan[kColsPerPass] = {0, 0, 0, 0};
                for (size_t k0 = 0; k0 < k; k0 += kBlockK) {
                    double block[kColsPerPass] = {0, 0, 0, 0}, mag[kColsPerPass] = {0, 0, 0, 0};
                    for (size_t kk = k0; kk < k0 + kBlockK; ++kk) {
                        const double av = a_row[kk];
                        for (size_t t = 0; t < kColsPerPass; ++t) block[t] += av * b_rows[t][kk];
                        if (out_s)
                            for (size_t t = 0; t < kColsPerPass; ++t) mag[t] += std::fabs(av * b_rows[t][kk]);
                    }
                    for (size_t t = 0; t < kColsPerPass; ++t) {
                        if (std::isnan(block[t])) {
                            nan[t] = block[t];
                        } else {
                            sum[t].add(block[t]);
                            if (out_s) abs_sum[t].add(mag[t]);
                        }
                    }
                }
                for (size_t t = 0; t < cols; ++t) {
                    const size_t idx = i * n + j + t;
                    const double acc = sum[t].value() + nan[t];
                    if (out_f) out_f[idx] = epilogue(acc, alpha, beta, c, idx);
                    if (out_d) out_d[idx] = double(alpha) * acc + (c ? double(beta) * double(c[idx]) : 0.0);
                    if (out_s) out_s[idx] = abs_sum[t].value() + nan[t];
                }
            }
        }
    });
}

}  // namespace

std::vector<float> reference_gemm_mx(const MxOperand& a, const MxOperand& b, float alpha, float beta,
                                     const float* c, int threads) {
    check_mx_operand(a, "A", a.k);
    check_mx_operand(b, "B", a.k);
    if (a.rows == 0 || b.rows == 0) return {};
    std::vector<float> out(a.rows * b.rows);
    mx_reference(a, b, alpha, beta, c, threads, out.data(), nullptr, nullptr);
    return out;
}

MxReferenceAbs reference_gemm_mx_abs(const MxOperand& a, const MxOperand& b, float alpha, float beta,
                                     const float* c, int threads) {
    check_mx_operand(a, "A", a.k);
    check_mx_operand(b, "B", a.k);
    MxReferenceAbs r;
    if (a.rows == 0 || b.rows == 0) return r;
    r.ref.resize(a.rows * b.rows);
    r.abs_sum.resize(a.rows * b.rows);
    mx_reference(a, b, alpha, beta, c, threads, nullptr, r.ref.data(), r.abs_sum.data());
    return r;
}

}  // namespace f4gemm
