"""bench/bench.py's pure helpers (no GPU, no torch): the --accum list, the system names per accumulation mode, the per-mode summary of the cells
f4gemm wins, and the plot's panels; the plot itself when matplotlib is installed."""

import pytest


@pytest.fixture(scope="module")
def bench(repo_module):
    return repo_module("bench/bench.py")  # torch is imported by main() only


def test_parse_accums(bench):
    assert bench.parse_accums("exact,promoted") == ["exact", "promoted"]
    assert bench.parse_accums(" promoted ") == ["promoted"]
    assert bench.parse_accums("promoted,exact") == ["promoted", "exact"]
    for bad in ("", "fast", "exact,fast", "exact,exact", ","):
        with pytest.raises(ValueError, match="--accum"):
            bench.parse_accums(bad)


def test_names_and_bound(bench):
    assert bench.f4_system("exact") == "f4gemm"
    assert bench.f4_system("promoted") == "f4gemm_promoted"
    assert bench.ACCUM_CODE == {"exact": 0, "promoted": 1}


def _row(m, n, k, **us):
    return {"M": m, "N": n, "K": k, "systems": {name: {"us": t} for name, t in us.items()}}


def test_summary_counts_cells_per_mode(bench):
    rows = [
        _row(1, 8192, 8192, f4gemm=10.0, f4gemm_promoted=9.0, cublaslt_fp8=12.0, cublas_bf16=30.0),
        _row(4096, 8192, 8192, f4gemm=500.0, f4gemm_promoted=300.0, cublaslt_fp8=350.0, cublas_bf16=700.0),
        _row(16, 8192, 8192, f4gemm=20.0, cublaslt_fp8=15.0),  # promoted failed here: not counted for it
    ]
    assert bench.wins(rows, "exact", "cublaslt_fp8") == (1, 3)
    assert bench.wins(rows, "promoted", "cublaslt_fp8") == (2, 2)
    assert bench.wins(rows, "promoted", "triton_dot_scaled") == (0, 0)
    lines = bench.summary_lines(rows, ["exact", "promoted"])
    assert lines == [
        "f4gemm accum exact: faster than cublaslt_fp8 1/3, cublas_bf16 2/2 cells",
        "f4gemm accum promoted: faster than cublaslt_fp8 2/2, cublas_bf16 2/2 cells",
    ]


def test_panels_group_by_n_and_k_sorted_by_m(bench):
    rows = [_row(m, n, k) for (n, k) in ((16384, 16384), (10240, 8192)) for m in (4096, 1, 256)]
    groups = bench.panels(rows)
    assert list(groups) == [(16384, 16384), (10240, 8192)]
    assert [r["M"] for r in groups[(10240, 8192)]] == [1, 256, 4096]


def test_plot_when_matplotlib_is_installed(bench, tmp_path):
    pytest.importorskip("matplotlib")
    rows = []
    for (n, k) in ((16384, 16384), (8192, 28672), (10240, 8192)):
        for m in (1, 16, 256, 4096):
            r = _row(m, n, k, f4gemm=m + 10.0, f4gemm_promoted=m + 8.0, cublaslt_fp8=m + 9.0, cublas_bf16=m + 20.0)
            if m <= 256:
                r["systems"]["read_floor"] = {"us": 5.0}
            rows.append(r)
    path = tmp_path / "bench.png"
    bench.plot({"device": "test", "reps": 1, "accum": ["exact", "promoted"], "rows": rows}, str(path))
    assert path.stat().st_size > 0


def test_untuned_names_and_the_decode_grid(bench):
    assert bench.f4_untuned("exact") == "f4gemm_untuned"
    assert bench.f4_untuned("promoted") == "f4gemm_promoted_untuned"
    decode = bench.GRIDS["decode"]
    assert len(decode) == 16
    assert {m for (m, _, _) in decode} == {1, 16, 32, 64}
    assert set(decode) <= set(bench.GRIDS["serving"])
    other = bench.GRIDS["decode-other"]
    assert len(other) == 24 and len(set(other)) == 24
    assert {m for (m, _, _) in other} == {1, 16, 32, 64}
    assert not set(other) & set(bench.GRIDS["serving"])  # shapes off the grid
    assert all(k % 32 == 0 for (_, _, k) in other)


def test_floor_table_shows_the_untuned_picks(bench, capsys):
    def system(us):
        return {"us": us, "tflops": 1.0, "spread": 0.01}

    row = {"M": 64, "N": 8192, "K": 28672,
           "systems": {"f4gemm": system(110.0), "f4gemm_promoted": system(105.0), "read_floor": system(30.0),
                       "f4gemm_promoted_untuned": system(162.0), "cublaslt_fp8": system(60.0)},
           "f4gemm": {"exact": {"kernel": "ws_swap_64x128_fs", "gbs": 1000.0},
                      "promoted": {"kernel": "ws_swap_64x128_fs_p", "gbs": 1000.0}},
           "f4gemm_untuned": {"exact": {"kernel": "ws_swap_64x128_fs", "log2_k_split": 1, "same_as_tuned": True,
                                        "us": 110.0},
                              "promoted": {"kernel": "ws_swap_64x128_fs_p", "log2_k_split": 0,
                                           "same_as_tuned": False, "us": 162.0}},
           "ratio": {"exact": {"cublaslt_fp8": 60.0 / 110.0}, "promoted": {"cublaslt_fp8": 60.0 / 105.0}},
           "read_floor_gbs": 4200.0}
    bench.print_table({"accum": ["exact", "promoted"], "rows": [row], "copy_gbs": 4100.0})
    out = capsys.readouterr().out
    assert "exact untuned" in out and "promo untuned" in out
    line = next(x for x in out.splitlines() if x.strip().startswith("64x  8192x 28672") and "3.67" in x)
    assert "5.40" in line  # promoted untuned / floor = 162 / 30
    assert "untuned: the policy's pick with an empty tuned table" in out


def test_clock_samples_line_up_with_the_repetitions(bench):
    """--clocks: nvidia-smi's lines (local-time stamps) become samples; each repetition gets the median SM clock and
    power of the samples inside its wall-clock interval and the OR of their throttle masks."""
    import datetime

    t0 = datetime.datetime(2026, 12, 5, 20, 0, 0)

    def line(dt_ms, mhz, w, mask):
        t = t0 + datetime.timedelta(milliseconds=dt_ms)
        return f"{t.strftime('%Y/%m/%d %H:%M:%S')}.{t.microsecond // 1000:03d}, {mhz}, {w}, 0x{mask:016x}"

    lines = ["timestamp, clocks.sm [MHz], power.draw [W], clocks_throttle_reasons.active",  # a header: skipped
             line(0, 1980, 650.5, 0), line(50, 1980, 690.0, 0), line(100, 1755, 699.9, 4), line(150, 1740, 700.1, 4),
             line(200, 1980, 400.0, 0), "2026/12/05 20:00:00.250, [N/A], [N/A], [N/A]", "2026/12/05 20:0"]
    samples = bench.parse_smi(lines)
    assert len(samples) == 5
    assert samples[2][1:] == (1755.0, 699.9, 4)
    base = t0.timestamp()
    reps = bench.clocks_per_rep(samples, [base - 0.01, base + 0.075, base + 0.175, base + 0.3, base + 0.4])
    assert reps[0] == {"samples": 2, "sm_mhz": 1980.0, "power_w": (650.5 + 690.0) / 2, "throttle": "0x0"}
    assert reps[1] == {"samples": 2, "sm_mhz": (1755 + 1740) / 2, "power_w": 700.0, "throttle": "0x4"}
    assert reps[2]["samples"] == 1 and reps[2]["sm_mhz"] == 1980.0
    assert reps[3] == {"samples": 0, "sm_mhz": None, "power_w": None, "throttle": None}
    assert bench.clock_range(reps) == "clk 1748-1980 MHz 400-700 W"
    assert bench.clock_range([reps[3]]) == ""
