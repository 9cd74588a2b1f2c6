"""scripts/exact_rows.py (no GPU): the exact-mode tuned rows of an `f4gemm tune --accum promoted` log - per shape the
fastest timed exact kernel and its split, promoted kernels and screen-dropped candidates left out - and a one-line
error and exit 2 for a file it cannot use, writing nothing."""

import os

import pytest

LOG = """[f4gemm] tuning 2 shapes over 3 kernels (accum promoted) on NVIDIA H200 (132 SMs)
[f4gemm]   64x8192x8192 f4gemm_sm90a_ws_swap_32x128_fs.cubin     split 2:     30.00 us screen, dropped
[f4gemm]   64x8192x8192 f4gemm_sm90a_cv_64x64_p.cubin            split 0:     31.39 us    273.7 TF/s (spread 0.5%, 1 sets)
[f4gemm]   64x8192x8192 f4gemm_sm90a_dec_32x128_wg12_c2.cubin    split 0:     33.32 us    257.8 TF/s (spread 0.4%, 1 sets)
[f4gemm]   64x8192x8192 f4gemm_sm90a_ws_swap_32x128_fs.cubin     split 0:     39.46 us    217.7 TF/s (spread 0.3%, 1 sets)
[f4gemm]   64x4096x14336 f4gemm_sm90a_dec_32x128_wg12_c2_s.cubin split 1:     31.87 us    235.8 TF/s (spread 0.6%, 1 sets)
[f4gemm]   64x4096x14336 f4gemm_sm90a_dec_32x128_wg12_c2_s.cubin split 0:     47.02 us    159.8 TF/s (spread 0.6%, 1 sets)
[f4gemm] best 64x8192x8192 (accum promoted): f4gemm_sm90a_cv_64x64_p.cubin split 0 (31.39 us)
"""


@pytest.fixture(scope="module")
def script(repo_module):
    return repo_module("scripts/exact_rows.py")


def test_fastest_exact_kernel_per_shape(script, tmp_path):
    log, out = tmp_path / "t.log", tmp_path / "t.csv"
    log.write_text(LOG)
    assert script.main([str(log), "-o", str(out)]) == 0
    assert out.read_text().splitlines() == [
        "cu_num,M,N,K,accum,kernelName,splitK,us,tflops",
        # not cv_64x64_p (promoted) nor the screen-dropped 30.00 us line
        "132,64,8192,8192,exact,f4gemm_sm90a_dec_32x128_wg12_c2.cubin,0,33.32,257.8",
        "132,64,4096,14336,exact,f4gemm_sm90a_dec_32x128_wg12_c2_s.cubin,1,31.87,235.8",
    ]


def test_the_session_23_rows_are_its_log(script, tmp_path):
    """docs/results/2026-12-02b/call2/tune_m33_64_exact.csv holds exactly what the script writes from its log."""
    res = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "results", "2026-12-02b",
                       "call2")
    out = tmp_path / "e.csv"
    assert script.main([os.path.join(res, "tune_m33_64.log"), "-o", str(out)]) == 0
    with open(os.path.join(res, "tune_m33_64_exact.csv")) as f:
        assert out.read_text() == f.read()


@pytest.mark.parametrize("text", [None, "no timing lines here\n",
                                  "[f4gemm]   1x8x8 f4gemm_sm90a_cv_64x64_p.cubin split 0:  1.00 us  1.0 TF/s\n"])
def test_bad_input_is_one_line_and_writes_nothing(script, tmp_path, capsys, text):
    log, out = tmp_path / "t.log", tmp_path / "t.csv"
    if text is not None:
        log.write_text(text)
    assert script.main([str(log), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and str(log) in err and "pass an `f4gemm tune` log" in err
    assert not out.exists()
