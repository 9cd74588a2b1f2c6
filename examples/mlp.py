"""An MLP block (up, SiLU, down) at a 70B-class size (hidden 8192, intermediate 28672) through f4gemm's MXFP4
Linear, beside bf16 (F.linear) and FP8 e4m3 with per-tensor scales (torch._scaled_mm), for several batch sizes:
time per call and the error against bf16.

    python3 examples/mlp.py [--batches 1,16,64,256,1024] [--calls 20] [--reps 5]

Every system's call includes its own activation quantization: f4gemm's Linear quantizes x and the SiLU output to
MXFP4 on the GPU; the FP8 path takes each activation's amax, scales and casts it to e4m3 (the weights of both are
quantized once, outside the timing). Timing: each system's block recorded `calls` times into one CUDA graph after
a warm-up, the graph replayed `reps` times, the median replay divided by `calls`; systems alternate within each
repetition. Error: ||y - y_bf16||_F / ||y_bf16||_F on Gaussian input, y_bf16 = the bf16 block on the same weights.
"""

import argparse
import statistics
import time

import torch
import torch.nn.functional as F

import f4gemm
import f4gemm.torch

E4M3_MAX = 448.0


def fp8_weight(w):
    """Per-tensor e4m3 weight [N, K] and its scale (once)."""
    scale = w.float().abs().amax().clamp(min=1e-12) / E4M3_MAX
    return (w.float() / scale).to(torch.float8_e4m3fn), scale


def fp8_linear(x, w8, w_scale):
    """x [M, K] bf16 -> bf16 [M, N]: x to e4m3 with its own per-tensor scale (no host sync), then _scaled_mm."""
    x_scale = x.float().abs().amax().clamp(min=1e-12) / E4M3_MAX
    x8 = (x.float() / x_scale).to(torch.float8_e4m3fn)
    return torch._scaled_mm(x8, w8.t(), scale_a=x_scale, scale_b=w_scale, out_dtype=torch.bfloat16)


def time_graphs(fns, calls, reps):
    """{name: us per call}: each fn captured `calls` times into its own graph, replays alternated `reps` times."""
    graphs, times = {}, {name: [] for name in fns}
    for name, fn in fns.items():
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):  # warm-up: kernel loads, workspaces, cuBLAS handles, all outside the capture
                fn()
        torch.cuda.current_stream().wait_stream(side)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(calls):
                fn()
        graphs[name] = g
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for name, g in graphs.items():
        g.replay()  # first replay (uploads the graph) not timed
    for _ in range(reps):
        for name, g in graphs.items():
            start.record()
            g.replay()
            stop.record()
            stop.synchronize()
            times[name].append(start.elapsed_time(stop) * 1000.0 / calls)
    return {name: statistics.median(t) for name, t in times.items()}


def rel_err(y, ref):
    return ((y.double() - ref.double()).norm() / ref.double().norm()).item()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--hidden", type=int, default=8192)
    p.add_argument("--intermediate", type=int, default=28672)
    p.add_argument("--batches", default="1,16,64,256,1024")
    p.add_argument("--calls", type=int, default=20, help="MLP calls per CUDA graph")
    p.add_argument("--reps", type=int, default=5, help="graph replays per system (median)")
    args = p.parse_args()
    h, i = args.hidden, args.intermediate
    batches = [int(b) for b in args.batches.split(",")]
    t0 = time.time()
    torch.manual_seed(0)
    dev = torch.device("cuda")
    up = torch.nn.Linear(h, i, bias=False, device=dev, dtype=torch.bfloat16)
    down = torch.nn.Linear(i, h, bias=False, device=dev, dtype=torch.bfloat16)
    f4_up, f4_down = f4gemm.torch.Linear.from_linear(up), f4gemm.torch.Linear.from_linear(down)
    p4_up = f4gemm.torch.Linear.from_linear(up, accum="promoted")
    p4_down = f4gemm.torch.Linear.from_linear(down, accum="promoted")
    up8, up8_s = fp8_weight(up.weight)
    down8, down8_s = fp8_weight(down.weight)
    sess = f4gemm.default_session("cuda")
    print(f"f4gemm MLP block: hidden {h}, intermediate {i} (up {i} x {h}, SiLU, down {h} x {i}) on "
          f"{sess.device_name}; weights: bf16 {2 * 2 * h * i / 1e6:.0f} MB, fp8 {2 * h * i / 1e6:.0f} MB, "
          f"f4gemm {(f4_up.weight_packed.numel() + f4_down.weight_packed.numel()) / 1e6:.0f} MB")
    print(f"timing: one CUDA graph of {args.calls} calls per system, median of {args.reps} replays; error: relative "
          f"Frobenius norm against bf16")
    head = (f"{'batch':>6} {'f4gemm us':>10} {'promoted':>9} {'bf16 us':>9} {'fp8 us':>9} {'bf16/f4':>8} "
            f"{'fp8/f4':>7} {'fp8/prom':>8} {'err f4gemm':>10} {'err prom':>9} {'err fp8':>8}  kernels (up, down; "
            f"exact / promoted)")
    print(head)
    print("-" * len(head))
    for m in batches:
        x = torch.randn(m, h, device=dev, dtype=torch.bfloat16)
        fns = {
            "f4gemm": lambda: f4_down(F.silu(f4_up(x))),
            "promoted": lambda: p4_down(F.silu(p4_up(x))),
            "bf16": lambda: F.linear(F.silu(F.linear(x, up.weight)), down.weight),
            "fp8": lambda: fp8_linear(F.silu(fp8_linear(x, up8, up8_s)), down8, down8_s),
        }
        with torch.no_grad():
            ref = fns["bf16"]()
            err_f4 = rel_err(fns["f4gemm"](), ref)
            err_p4 = rel_err(fns["promoted"](), ref)
            try:
                err_fp8 = rel_err(fns["fp8"](), ref)
            except RuntimeError as e:  # a shape cuBLASLt's FP8 refuses
                print(f"  fp8 at batch {m}: {str(e).splitlines()[0]}")
                del fns["fp8"]
                err_fp8 = float("nan")
            t = time_graphs(fns, args.calls, args.reps)
        t_fp8 = t.get("fp8", float("nan"))
        def kern(mm, nn, kk, accum):
            return f4gemm.select(mm, nn, kk, accum=accum)["kernel"].replace(".cubin", "").replace("f4gemm_sm90a_", "")
        ks = f"{kern(m, i, h, 'exact')}, {kern(m, h, i, 'exact')} / {kern(m, i, h, 'promoted')}, {kern(m, h, i, 'promoted')}"
        print(f"{m:>6} {t['f4gemm']:>10.1f} {t['promoted']:>9.1f} {t['bf16']:>9.1f} {t_fp8:>9.1f} "
              f"{t['bf16'] / t['f4gemm']:>7.2f}x {t_fp8 / t['f4gemm']:>6.2f}x {t_fp8 / t['promoted']:>7.2f}x "
              f"{err_f4:>10.4f} {err_p4:>9.4f} {err_fp8:>8.4f}  {ks}")
    print(f"({time.time() - t0:.0f} s; bf16/f4 and fp8/f4 above 1 mean f4gemm is faster)")


if __name__ == "__main__":
    main()
