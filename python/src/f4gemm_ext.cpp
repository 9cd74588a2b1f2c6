// f4gemm._f4gemm: the nanobind face of the Session (include/f4gemm/session.hpp) that the Python package
// (python/f4gemm/) calls. Device work takes integer device pointers and a stream, which the package reads off
// the caller's framework (torch, cupy) and checks before any launch; host work (the CPU backend, numpy) takes
// nb::ndarray and returns numpy arrays. Library errors arrive as ValueError (a bad argument or input) or
// RuntimeError (device, manifest, missing file), with the library's one-line message.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "f4gemm/error.hpp"
#include "f4gemm/formats.hpp"
#include "f4gemm/layout.hpp"
#include "f4gemm/session.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

using f4gemm::Errc;
using f4gemm::Error;

// Host arrays as the package hands them over (it makes them contiguous first).
using HostU8 = nb::ndarray<const uint8_t, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using HostU8Flat = nb::ndarray<const uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using HostU16 = nb::ndarray<const uint16_t, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using HostF32 = nb::ndarray<const float, nb::ndim<2>, nb::c_contig, nb::device::cpu>;

// A numpy array that owns `v` (moved to the heap, freed with the array).
template <typename T>
nb::ndarray<nb::numpy, T> to_numpy(std::vector<T>&& v, std::vector<size_t> shape) {
    auto* heap = new std::vector<T>(std::move(v));
    nb::capsule owner(heap, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
    return nb::ndarray<nb::numpy, T>(heap->data(), shape.size(), shape.data(), owner);
}

void need(bool ok, const std::string& message) {
    if (!ok) throw Error(Errc::InvalidArgument, message);
}

std::string shape_str(size_t a, size_t b) {
    return "(" + std::to_string(a) + ", " + std::to_string(b) + ")";
}

// The plain [rows, k/2] + [rows, k/32] operand of two host arrays, checked against each other.
f4gemm::MxOperand host_operand(const HostU8& q, const HostU8& s, const char* qn, const char* sn) {
    const size_t rows = q.shape(0), k = q.shape(1) * 2;
    need(rows > 0 && k > 0, std::string(qn) + ": empty array " + shape_str(q.shape(0), q.shape(1)) +
                                ": pass at least one row of K/2 bytes");
    need(k % 32 == 0, std::string(qn) + ": K = 2 * " + std::to_string(q.shape(1)) + " = " +
                          std::to_string(k) + " is not a multiple of 32: pad K with zero blocks");
    need(s.shape(0) == rows && s.shape(1) == k / 32,
         std::string(sn) + ": shape " + shape_str(s.shape(0), s.shape(1)) + " does not match " + qn + " " +
             shape_str(q.shape(0), q.shape(1)) +
             ": pass the scales [rows, K/32] = " + shape_str(rows, k / 32));
    f4gemm::MxOperand op;
    op.rows = rows;
    op.k = k;
    op.packed.assign(q.data(), q.data() + rows * k / 2);
    op.scales.assign(s.data(), s.data() + rows * k / 32);
    return op;
}

f4gemm::BackendKind backend_of(const std::string& name) {
    if (name == "manifest")
        return f4gemm::BackendKind::Cuda;  // the manifest only, no device (open_device false)
    return f4gemm::parse_backend(name);
}

// A Session as the package holds it. GEMMs go through gemm() below, which keeps CUDA graph capture safe. A
// Session's GEMMs share one workspace (split-K partials, the pre-pass image), grown by a free and a new
// allocation when a larger plan comes, so a graph that recorded the old pointer would then write freed
// memory; and a kernel's code object is loaded at its first launch, a module load a capture must not see. So
// GEMMs run on tiers: tiers_[0] is the Session (which also quantizes and packs); a GEMM captured into a graph
// runs on a tier where its kernel, its weight and a workspace at least as large have been used before (else
// it is refused: run it once before capture, the warm-up torch.cuda.graph asks for), and that tier then holds
// graphs; an eager GEMM runs on the first tier that holds no graph or has the workspace it needs, else on a
// new tier (a second Session of the device, with its own workspace). So the memory a graph recorded is never
// freed while the package runs.
class PySession {
public:
    PySession(const std::string& backend, int device, const std::string& co_dir, bool open_device) {
        need(device >= 0,
             "device: ordinal " + std::to_string(device) + " is negative: pass a CUDA device index >= 0");
        o_.backend = backend_of(backend);
        o_.device = device;
        o_.co_dir = co_dir;
        o_.open_device = open_device && backend != "manifest";
        add_tier();
    }
    PySession(const PySession&) = delete;
    PySession& operator=(const PySession&) = delete;

    f4gemm::Session& s() { return *tiers_[0].s; }
    const f4gemm::Session& s() const { return *tiers_[0].s; }

    std::string backend() const { return o_.open_device ? f4gemm::to_string(s().backend()) : "manifest"; }
    bool gpu() const { return s().gpu(); }
    int device() const { return o_.device; }
    std::string device_name() const {
        const f4gemm::DeviceProps* p = s().device_props();
        return p ? p->name : "cpu";
    }
    std::string arch() const {
        const f4gemm::DeviceProps* p = s().device_props();
        return p ? p->arch : "";
    }
    int num_sms() const { return s().num_cu(); }
    std::string co_dir() const { return s().co_dir().dir; }
    std::string co_dir_source() const { return s().co_dir().source; }
    std::string tuned_path() const { return s().tuned().path; }
    int tiers() const { return int(tiers_.size()); }

    nb::list kernels() const {
        nb::list out;
        const f4gemm::Manifest& m = s().manifest();
        for (size_t i = 0; i < m.kernels.size(); ++i) {
            const f4gemm::KernelConfig& kc = m.kernels[i];
            nb::dict d;
            d["index"] = int(i);
            d["name"] = kc.co_name;
            d["knl_name"] = kc.knl_name;
            d["tile_m"] = kc.tile_m;
            d["tile_n"] = kc.tile_n;
            d["split_k"] = bool(kc.split_k);
            d["arch"] = kc.arch;
            d["abi"] = f4gemm::to_string(kc.abi);
            d["b_layout"] = f4gemm::to_string(kc.b_layout);
            d["threads"] = kc.threads;
            d["smem_bytes"] = kc.smem_bytes;
            d["max_m"] = kc.max_m;
            d["min_m"] = kc.min_m;
            d["priority"] = kc.priority;
            d["accum"] = f4gemm::accum_name(kc.accum);
            out.append(d);
        }
        return out;
    }

    nb::dict select(int m, int n, int k, const std::string& accum) const {
        f4gemm::GemmRequest r;
        r.m = m;
        r.n = n;
        r.k = k;
        r.accum = f4gemm::parse_accum(accum);
        const f4gemm::Choice c = s().select(r);
        nb::dict d;
        d["backend"] = backend();
        d["accum"] = f4gemm::accum_name(c.accum);                     // the request's mode
        d["kernel_accum"] = f4gemm::accum_name(s().kernel_accum(c));  // what runs (the CPU: exact)
        if (c.index >= 0) {
            const f4gemm::KernelConfig& kc = s().manifest().kernels[size_t(c.index)];
            d["kernel"] = kc.co_name;
            d["index"] = c.index;
            d["tile_m"] = kc.tile_m;
            d["tile_n"] = kc.tile_n;
        } else {
            d["kernel"] = nb::none();
            d["index"] = -1;
        }
        d["log2_k_split"] = c.log2_k_split;
        d["tuned"] = c.tuned;
        d["launch_k"] = c.launch_k;
        d["workspace_bytes"] = size_t(c.plan.workspace_bytes);
        d["num_cu"] = c.num_cu;
        d["slab_n"] = c.slab_n;
        return d;
    }

    // ---- device pointers ----
    void quantize(uint64_t x, bool is_bf16, int m, int k, int ldx, uint64_t a, uint64_t sa, uint64_t stream) {
        s().quantize(x, is_bf16, m, k, ldx, a, sa, stream);
    }
    void pad_a(uint64_t a, uint64_t sa, int m, int k, uint64_t a_out, uint64_t sa_out, uint64_t stream) {
        s().pad_a(a, sa, m, k, a_out, sa_out, stream);
    }
    void pack_weight(uint64_t b, uint64_t sb, int n, int k, uint64_t w, uint64_t stream) {
        s().pack_weight(b, sb, n, k, w, stream);
        tiers_[0].weights.insert(w);
    }

    void gemm(int m, int n, int k, float alpha, float beta, uint64_t a, uint64_t sa, uint64_t w, uint64_t c,
              uint64_t d, uint64_t stream, const std::string& accum, bool pdl) {
        if (!s().gpu())
            throw Error(Errc::Unsupported,
                        "GEMMs on device pointers need a GPU session: open it on a CUDA device");
        f4gemm::GemmRequest r;
        r.m = m;
        r.n = n;
        r.k = k;
        r.has_c = c != 0;
        r.accum = f4gemm::parse_accum(accum);
        const f4gemm::Choice ch = s().select(r);  // checks the shape
        const size_t idx = size_t(ch.index), ws = ch.plan.workspace_bytes;
        f4gemm::Session::DeviceGemm g;
        g.m = m;
        g.n = n;
        g.k = k;
        g.alpha = alpha;
        g.beta = beta;
        g.a = a;
        g.a_scale = sa;
        g.w = w;
        g.c = c;
        g.d = d;
        g.kernel = ch.index;
        g.log2_k_split = ch.log2_k_split;
        g.accum = r.accum;
        g.pdl = pdl;
        if (capturing(stream)) {
            for (Tier& t : tiers_)
                if (t.seen[idx] && ws <= t.ws_high && t.weights.count(w)) {
                    t.s->gemm(g, stream);
                    if (ws) t.graphs = true;
                    return;
                }
            throw Error(
                Errc::InvalidArgument,
                "M=" + std::to_string(m) + " N=" + std::to_string(n) + " K=" + std::to_string(k) +
                    " (kernel " + s().manifest().kernels[idx].co_name + ", workspace " + std::to_string(ws) +
                    " bytes) with this weight has not run on this session before the stream capture: run "
                    "the same call once before capturing (the warm-up torch.cuda.graph asks for)");
        }
        Tier* t = nullptr;
        for (Tier& x : tiers_)
            if (!x.graphs || ws <= x.ws_high) {
                t = &x;
                break;
            }
        if (!t) t = &add_tier();
        t->s->gemm(g, stream);
        t->seen[idx] = 1;
        t->ws_high = std::max(t->ws_high, ws);
        t->weights.insert(w);
    }

    void synchronize() {
        for (Tier& t : tiers_)
            if (t.s->device()) t.s->device()->synchronize();
    }

    // ---- host operands: the CPU backend ----
    nb::ndarray<nb::numpy, uint16_t> gemm_host(const HostU8& a_q, const HostU8& a_s, const HostU8& b_q,
                                               const HostU8& b_s, nb::object c_bits, float alpha, float beta,
                                               const std::string& accum) {
        f4gemm::Problem p;
        p.a = host_operand(a_q, a_s, "a_q", "a_scales");
        p.b = host_operand(b_q, b_s, "w (unpacked)", "w scales (unpacked)");
        need(p.a.k == p.b.k, "a_q: K = " + std::to_string(p.a.k) + " but the weight has K = " +
                                 std::to_string(p.b.k) + ": pass activations of the weight's K");
        p.m = int(p.a.rows);
        p.n = int(p.b.rows);
        p.k = int(p.a.k);
        p.alpha = alpha;
        p.beta = beta;
        if (!c_bits.is_none()) {
            const HostU16 c = nb::cast<HostU16>(c_bits);
            need(c.shape(0) == size_t(p.m) && c.shape(1) == size_t(p.n),
                 "c: shape " + shape_str(c.shape(0), c.shape(1)) + " is not [M, N] = " + shape_str(p.m, p.n) +
                     ": pass C of the output's shape");
            p.c.assign(c.data(), c.data() + size_t(p.m) * size_t(p.n));
        }
        std::vector<uint16_t> d;
        {
            nb::gil_scoped_release unlocked;
            f4gemm::GemmRequest r;
            r.m = p.m;
            r.n = p.n;
            r.k = p.k;
            r.has_c = !p.c.empty();
            r.accum =
                f4gemm::parse_accum(accum);  // the CPU backend runs the exact mode's arithmetic for both
            const f4gemm::Choice ch = s().select(r);
            d = s().prepare(ch, p)->run_and_fetch();
        }
        return to_numpy(std::move(d), {size_t(p.m), size_t(p.n)});
    }

private:
    struct Tier {
        std::unique_ptr<f4gemm::Session> s;
        std::vector<char> seen;      // per manifest index: launched on this tier
        std::set<uint64_t> weights;  // weights this tier has packed or run GEMMs with (no header read then)
        size_t ws_high = 0;          // its workspace: the largest plan it has run
        bool graphs = false;         // a captured GEMM recorded its workspace
    };

    Tier& add_tier() {
        Tier t;
        t.s = std::make_unique<f4gemm::Session>(o_);
        t.seen.assign(t.s->manifest().kernels.size(), 0);
        tiers_.push_back(std::move(t));
        return tiers_.back();
    }

    bool capturing(uint64_t stream) {
        f4gemm::Device* dev = s().device();
        if (!dev) return false;
        dev->set_stream(stream);
        const bool c = dev->capturing();
        dev->set_stream(0);
        return c;
    }

    f4gemm::SessionOptions o_;
    std::deque<Tier> tiers_;  // a deque: references to a tier stay valid when another is added
};

// ---- host functions (numpy): the host quantizer and packer, the same definitions the CUDA ones share ----

nb::tuple quantize_host(const HostF32& x) {
    const size_t m = x.shape(0), k = x.shape(1);
    need(m > 0 && k > 0, "x: empty array " + shape_str(m, k) + ": pass [M, K] with M, K >= 1");
    need(k % 32 == 0, "x: K = " + std::to_string(k) + " is not a multiple of 32: pad K with zero blocks");
    std::vector<uint8_t> q(m * k / 2), s(m * k / 32);
    {
        nb::gil_scoped_release unlocked;
        f4gemm::quantize_mxfp4(x.data(), m, k, q.data(), s.data());
    }
    return nb::make_tuple(to_numpy(std::move(q), {m, k / 2}), to_numpy(std::move(s), {m, k / 32}));
}

nb::ndarray<nb::numpy, float> dequantize_host(const HostU8& q, const HostU8& s) {
    const f4gemm::MxOperand op = host_operand(q, s, "q", "scales");
    std::vector<float> x(op.rows * op.k);
    for (size_t r = 0; r < op.rows; ++r)
        f4gemm::dequantize_mxfp4_row(op.packed.data() + r * op.k / 2, op.scales.data() + r * op.k / 32, op.k,
                                     x.data() + r * op.k);
    return to_numpy(std::move(x), {op.rows, op.k});
}

nb::ndarray<nb::numpy, uint8_t> pack_weight_host(const HostU8& q, const HostU8& s) {
    const f4gemm::MxOperand op = host_operand(q, s, "q", "scales");
    std::vector<uint8_t> w;
    {
        nb::gil_scoped_release unlocked;
        w = f4gemm::pack_weight(op.packed.data(), op.scales.data(), op.rows, op.k);
    }
    const size_t n = w.size();
    return to_numpy(std::move(w), {n});
}

nb::tuple unpack_weight_host(const HostU8Flat& w) {
    std::vector<uint8_t> b, s;
    f4gemm::WeightInfo info;
    f4gemm::unpack_weight(w.data(), w.shape(0), b, s, &info);
    return nb::make_tuple(to_numpy(std::move(b), {info.n, info.k / 2}),
                          to_numpy(std::move(s), {info.n, info.k / 32}));
}

// (n, k) from the header of a packed weight W (host bytes); throws with the fix when it is none.
nb::tuple weight_header(const HostU8Flat& w) {
    const f4gemm::WeightInfo info = f4gemm::read_weight_header(w.data(), w.shape(0), "w");
    return nb::make_tuple(info.n, info.k);
}

nb::tuple operand_bytes(int m, int k) {
    size_t d = 0, s = 0;
    f4gemm::Session::operand_bytes(m, k, &d, &s);
    return nb::make_tuple(d, s);
}

}  // namespace

NB_MODULE(_f4gemm, m) {
    m.doc() = "f4gemm's C++ Session (nanobind); use the f4gemm package, not this module";
    // The package keeps one Session per device for the life of the process (and Weights keep theirs), so some
    // are alive at interpreter exit by design: not a leak to warn about.
    nb::set_leak_warnings(false);

    nb::register_exception_translator([](const std::exception_ptr& p, void*) {
        try {
            std::rethrow_exception(p);
        } catch (const Error& e) {
            const bool bad_argument = e.code() == Errc::InvalidArgument || e.code() == Errc::BadInput;
            PyErr_SetString(bad_argument ? PyExc_ValueError : PyExc_RuntimeError, e.what());
        }
    });

    m.def("cuda_compiled", &f4gemm::cuda_compiled);
    m.def("cuda_device_count", &f4gemm::cuda_device_count);
    m.def("weight_bytes", &f4gemm::Session::weight_bytes, "n"_a, "k"_a);
    m.def("operand_bytes", &operand_bytes, "m"_a, "k"_a);
    m.def("quantize_host", &quantize_host, "x"_a);
    m.def("dequantize_host", &dequantize_host, "q"_a, "scales"_a);
    m.def("pack_weight_host", &pack_weight_host, "q"_a, "scales"_a);
    m.def("unpack_weight_host", &unpack_weight_host, "w"_a);
    m.def("weight_header", &weight_header, "w"_a);

    nb::class_<PySession>(m, "Session")
        .def(nb::init<const std::string&, int, const std::string&, bool>(), "backend"_a, "device"_a,
             "co_dir"_a, "open_device"_a = true)
        .def_prop_ro("backend", &PySession::backend)
        .def_prop_ro("gpu", &PySession::gpu)
        .def_prop_ro("device", &PySession::device)
        .def_prop_ro("device_name", &PySession::device_name)
        .def_prop_ro("arch", &PySession::arch)
        .def_prop_ro("num_sms", &PySession::num_sms)
        .def_prop_ro("co_dir", &PySession::co_dir)
        .def_prop_ro("co_dir_source", &PySession::co_dir_source)
        .def_prop_ro("tuned_path", &PySession::tuned_path)
        .def_prop_ro("tiers", &PySession::tiers)
        .def("kernels", &PySession::kernels)
        .def("select", &PySession::select, "m"_a, "n"_a, "k"_a, "accum"_a = "exact")
        .def("quantize", &PySession::quantize, "x"_a, "is_bf16"_a, "m"_a, "k"_a, "ldx"_a, "a_out"_a,
             "a_scale_out"_a, "stream"_a)
        .def("pad_a", &PySession::pad_a, "a"_a, "a_scale"_a, "m"_a, "k"_a, "a_out"_a, "a_scale_out"_a,
             "stream"_a)
        .def("pack_weight", &PySession::pack_weight, "b"_a, "b_scale"_a, "n"_a, "k"_a, "w"_a, "stream"_a)
        .def("gemm", &PySession::gemm, "m"_a, "n"_a, "k"_a, "alpha"_a, "beta"_a, "a"_a, "a_scale"_a, "w"_a,
             "c"_a, "d"_a, "stream"_a, "accum"_a = "exact", "pdl"_a = false)
        .def("gemm_host", &PySession::gemm_host, "a_q"_a, "a_scales"_a, "b_q"_a, "b_scales"_a,
             "c_bits"_a.none(), "alpha"_a, "beta"_a, "accum"_a = "exact")
        .def("synchronize", &PySession::synchronize);
}
