"""scripts/measured_table.py (no GPU): tune log lines to the policy tests' measured tables, later logs replacing
earlier rows, the M and name filters, and a one-line error for a file with no timing lines."""

import os

import pytest

_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "measured_table.py")

LOG1 = """[f4gemm] tuning 2 shapes over 2 kernels (accum exact) on NVIDIA H200 (132 SMs)
[f4gemm]   1x8192x8192 f4gemm_sm90a_dec_16x64_m2.cubin          split 1:     18.40 us screen, dropped
[f4gemm]   1x8192x8192 f4gemm_sm90a_dec_16x64_m2.cubin          split 0:     16.10 us      8.3 TF/s (spread 1.0%, 4 sets)
[f4gemm]   64x8192x8192 f4gemm_sm90a_x_sk.cubin                 split 0:     99.00 us      1.0 TF/s (spread 1.0%, 4 sets)
[f4gemm] best 1x8192x8192 (accum exact): f4gemm_sm90a_dec_16x64_m2.cubin split 0 (16.10 us)
"""
LOG2 = """[f4gemm]   1x8192x8192 f4gemm_sm90a_dec_16x64_m2.cubin          split 0:     15.90 us      8.4 TF/s (spread 0.5%, 4 sets)
"""


@pytest.fixture(scope="module")
def script(repo_module):
    return repo_module("scripts/measured_table.py")


def test_rows_filters_and_replacement(script, tmp_path):
    a, b, out = tmp_path / "a.log", tmp_path / "b.log", tmp_path / "t.csv"
    a.write_text(LOG1)
    b.write_text(LOG2)
    assert script.main([str(a), str(b), "--max-m", "16", "--exclude", r"_sk\.cubin", "--comment", "one\\ntwo",
                        "-o", str(out)]) == 0
    assert out.read_text().splitlines() == [
        "# one",
        "# two",
        "M,N,K,kernel,split,us,screen",
        "1,8192,8192,f4gemm_sm90a_dec_16x64_m2.cubin,0,15.9,0",  # the later log's time
        "1,8192,8192,f4gemm_sm90a_dec_16x64_m2.cubin,1,18.4,1",  # a screened candidate keeps its screen time
    ]


BEST = """cu_num,M,N,K,accum,kernelName,splitK,us,tflops
132,1,8192,8192,exact,f4gemm_sm90a_dec_16x64_m2.cubin,1,15.5,8.6
132,1,8192,8192,promoted,f4gemm_sm90a_dec_16x64_w12.cubin,0,15.7,8.5
132,2,8192,8192,exact,f4gemm_sm90a_dec_16x64_m2.cubin,0,16.0,8.3
"""


def test_best_rows_update_the_cells_the_logs_hold(script, tmp_path, capsys):
    """--late-best (a tuned table whose tune log was lost): its rows replace a kernel's time or add a kernel in cells
    the logs hold, and leave out cells they do not (one row is not a cell's timing)."""
    a, best, out = tmp_path / "a.log", tmp_path / "best.csv", tmp_path / "t.csv"
    a.write_text(LOG1)
    best.write_text(BEST)
    assert script.main([str(a), "--max-m", "16", "--exclude", r"_sk\.cubin", "--late-best", str(best),
                        "-o", str(out)]) == 0
    assert out.read_text().splitlines() == [
        "M,N,K,kernel,split,us,screen",
        "1,8192,8192,f4gemm_sm90a_dec_16x64_m2.cubin,0,16.1,0",
        "1,8192,8192,f4gemm_sm90a_dec_16x64_m2.cubin,1,15.5,0",  # the screened split, timed as a best row
        "1,8192,8192,f4gemm_sm90a_dec_16x64_w12.cubin,0,15.7,0",  # a kernel the log did not time, in a held cell
    ]
    # no row in a held cell, and a file that is not a tuned table: one-line errors
    best.write_text(BEST.splitlines()[0] + "\n" + BEST.splitlines()[3] + "\n")
    assert script.main([str(a), "--max-m", "16", "--late-best", str(best), "-o", str(out)]) == 1
    assert "no row of" in capsys.readouterr().err
    best.write_text("M,N,K\n1,8192,8192\n")
    assert script.main([str(a), "--max-m", "16", "--late-best", str(best), "-o", str(out)]) == 2
    assert "lacks M, N, K, kernelName, splitK or us" in capsys.readouterr().err


def test_a_file_without_timing_lines_is_an_error(script, tmp_path, capsys):
    empty = tmp_path / "x.log"
    empty.write_text("nothing here\n")
    assert script.main([str(empty), "-o", str(tmp_path / "t.csv")]) == 1
    assert "no tune timing lines in" in capsys.readouterr().err


def _rows(path):
    with open(path) as f:
        return [line.rstrip("\n") for line in f if line.strip() and not line.startswith(("#", "M,"))]


def test_the_decode_table_is_its_logs(script, tmp_path):
    """tests/data/decode_measured.csv holds exactly the rows its header's two commands write from the device logs
    kept in docs/results (no row edited by hand)."""
    root = os.path.join(os.path.dirname(_SCRIPT), "..")
    res = os.path.join(root, "docs", "results")
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    assert script.main([os.path.join(res, "2026-12-01c", "tune_sk.log"), os.path.join(res, "2026-12-01d", "tune_dec.log"),
                        os.path.join(res, "2026-12-01d", "tune_dec_extra.log"),
                        os.path.join(res, "2026-12-01e", "tune_other.log"),
                        os.path.join(res, "2026-12-01g", "tune_m16_14.log"),
                        os.path.join(res, "2026-12-01h", "tune_w8_lo.log"),
                        os.path.join(res, "2026-12-01i", "tune_wg3_shipped.log"),
                        os.path.join(res, "2026-12-01i", "tune_wg4.log"),
                        os.path.join(res, "2026-12-01l", "tune16_call4.log"),
                        os.path.join(res, "2026-12-02b", "call3", "tune_ctr1_1.log"),
                        os.path.join(res, "2026-12-02b", "call3", "tune_ctr1_2.log"), "--max-m", "16",
                        "--exclude", r"_sk\.cubin|dec_16x80_w16|dec_32x112_w8|dec_32x32_w12|dec_16x128_wg12_c3|"
                        r"dec_16x128_wg8_c4|dec_16x64_wg12_c2|_ue4",
                        "--rename", "f4gemm_sm90a_dec_16x128_wg12_s_ue.cubin=f4gemm_sm90a_dec_16x128_wg12_s.cubin",
                        "-o", str(a)]) == 0
    assert script.main([os.path.join(res, "2026-12-01e", "tune_mid12.log"), os.path.join(res, "2026-12-01e", "tune_other.log"),
                        os.path.join(res, "2026-12-01f", "tune_mid13.log"),
                        os.path.join(res, "2026-12-01f", "tune_other13.log"),
                        os.path.join(res, "2026-12-01g", "tune_mid14.log"),
                        os.path.join(res, "2026-12-01g", "tune_cv64_14.log"),
                        os.path.join(res, "2026-12-01h", "tune_w8_hi.log"),
                        os.path.join(res, "2026-12-01l", "tune_m17_32_call8.log"),
                        os.path.join(res, "2026-12-01m", "call1", "tune_m17_24_call1.log"),
                        os.path.join(res, "2026-12-01m", "call4", "tune_m32_call4.log"),
                        os.path.join(res, "2026-12-01m", "call5", "tune_m17_24_call5.log"),
                        os.path.join(res, "2026-12-01n", "call5", "tune_m32_call5.log"),
                        os.path.join(res, "2026-12-01n", "call6", "tune_m17_24_call6.log"),
                        os.path.join(res, "2026-12-02", "call1", "tune_m32_c2s.log"),
                        os.path.join(res, "2026-12-02", "call1", "tune_m17_24_c2s.log"),
                        os.path.join(res, "2026-12-02b", "call2", "tune_m33_64.log"),
                        os.path.join(res, "2026-12-02b", "call3", "tune_ctr1_1.log"),
                        os.path.join(res, "2026-12-02b", "call3", "tune_ctr1_2.log"),
                        os.path.join(res, "2026-12-02b", "call3", "tune_pab.log"),
                        os.path.join(res, "2026-12-02d", "call1", "tune_m33_64.log"),
                        os.path.join(res, "2026-12-02e", "call4", "tune_m33_64_exact.log"),
                        os.path.join(res, "2026-12-02f", "call2", "tune_m33_64_ex.log"),
                        os.path.join(res, "2026-12-02f", "call2", "tune_m33_64_pr.log"),
                        os.path.join(res, "2026-12-02g", "call6", "tune_m33_64_ex.log"),
                        os.path.join(res, "2026-12-02h", "call1", "tune_m33_64_pr.log"),
                        os.path.join(res, "2026-12-05b", "call9", "tune_m33_64_ex.log"),
                        os.path.join(res, "2026-12-05b", "call9", "tune_m33_64_pr.log"), "--min-m", "17",
                        "--exclude", r"dec_32x112_w8|dec_32x32_w12|dec_16x80_w16|dec_32x128_wg12\.cubin|dec_32x128_wg8_c2",
                        "-o", str(b)]) == 0
    table = _rows(os.path.join(root, "tests", "data", "decode_measured.csv"))
    assert table == _rows(a) + _rows(b)
    assert len(table) == 2549  # session 28's log re-timed cells and kernels the table already held


def test_the_grid_table_is_its_logs(script, tmp_path):
    """tests/data/grid_measured.csv likewise: its header's command over the logs in docs/results, the lab name of
    cv_128x80_p and of session 24's pab_128x128 renamed to the shipped ones."""
    root = os.path.join(os.path.dirname(_SCRIPT), "..")
    res = os.path.join(root, "docs", "results")
    out = tmp_path / "g.csv"
    assert script.main([os.path.join(res, "2026-12-01b", "tune_all5.log"),
                        os.path.join(res, "2026-12-01e", "tune_pab128p.log"),
                        os.path.join(res, "2026-12-01g", "tune6.log"),
                        os.path.join(res, "2026-12-02c", "call5", "t_e128_1.log"),
                        os.path.join(res, "2026-12-02c", "call5", "t_p128_1.log"),
                        os.path.join(res, "2026-12-02d", "call3", "tune_split.log"),
                        os.path.join(res, "2026-12-02e", "call3", "t_ex_1.log"), "--min-m", "128",
                        "--late", os.path.join(res, "2026-12-02f", "call2", "tune_grid_ex.log"),
                        "--late", os.path.join(res, "2026-12-02f", "call2", "tune_grid_pr.log"),
                        "--late", os.path.join(res, "2026-12-02g", "call6", "tune_grid_ex.log"),
                        "--late", os.path.join(res, "2026-12-02h", "call1", "tune_grid_pr.log"),
                        "--late", os.path.join(res, "2026-12-02h", "call3", "tune_grid_ex.log"),
                        "--late", os.path.join(res, "2026-12-05b", "call10", "retime", "tune_m384_1024_ex.log"),
                        "--late", os.path.join(res, "2026-12-05b", "call10", "retime", "tune_m384_1024_pr.log"),
                        "--exclude-shape", "128x8192x8192", "--exclude-shape", "128x4096x14336",
                        "--exclude-shape", "256x8192x8192",
                        # session 32's re-time also timed M = 384 and 768, off the grid
                        *[a for m in (384, 768) for nk in ("16384x16384", "10240x8192", "28672x8192", "8192x28672")
                          for a in ("--exclude-shape", f"{m}x{nk}")],
                        "--exclude", r"cv_128x128_p|cv_128x64_p_c2|cv_128x80_p\.cubin|pab_128x128_p_b|cv_128x80_c1",
                        "--rename", "f4gemm_sm90a_cv_128x80_p_c2.cubin=f4gemm_sm90a_cv_128x80_p.cubin",
                        "--rename", "f4gemm_sm90a_pab_128x128_b.cubin=f4gemm_sm90a_pab_128x128.cubin",
                        "-o", str(out)]) == 0
    table = _rows(os.path.join(root, "tests", "data", "grid_measured.csv"))
    assert table == _rows(out)
    # session 24's pab_128x128 (B_WG0 1, timed as pab_128x128_b) replaced its older row of the same cell, and
    # session 26's (call 3, EPI 1) that one
    # session 27's (its A pre-pass split over K) that one, session 28's (four ring stages) and session 29's (three) that one
    assert "128,16384,16384,f4gemm_sm90a_pab_128x128.cubin,0,105.73,0" in table
    # session 25's split A pre-pass tile, the exact pick of 128 x 8192 x 28672, re-timed in sessions 27, 28 and 29
    assert "128,8192,28672,f4gemm_sm90a_pab_128x128.cubin,1,101.75,0" in table
    # session 26's exact converter tile at N = 10240, re-timed in session 27; the --late log's cv_128x80_p row is
    # kept although --exclude names that code object (the lab build of session 14 it drops); re-timed in session 29
    assert "128,10240,8192,f4gemm_sm90a_cv_128x80.cubin,0,48.87,0" in table
    assert "128,10240,8192,f4gemm_sm90a_cv_128x80_p.cubin,0,42.64,0" in table
    # session 32's H200 re-time of the 256-K A pre-pass tiles against the pre-pass kernels at M = 512, 1024
    assert "512,10240,8192,f4gemm_sm90a_pab_128x128.cubin,0,159.04,0" in table
    assert "512,16384,16384,f4gemm_sm90a_pp_128x128_p.cubin,0,357.24,0" in table


def test_the_off_grid_table_is_its_logs(script, tmp_path):
    """tests/data/offgrid_measured.csv likewise: session 32's H200 re-time at M = 384 and 768 (its M = 512 and 1024
    cells are grid_measured.csv's)."""
    root = os.path.join(os.path.dirname(_SCRIPT), "..")
    res = os.path.join(root, "docs", "results", "2026-12-05b", "call10", "retime")
    out = tmp_path / "o.csv"
    assert script.main([os.path.join(res, "tune_m384_1024_ex.log"), os.path.join(res, "tune_m384_1024_pr.log"),
                        *[a for m in (512, 1024) for nk in ("16384x16384", "10240x8192", "28672x8192", "8192x28672")
                          for a in ("--exclude-shape", f"{m}x{nk}")],
                        "-o", str(out)]) == 0
    table = _rows(os.path.join(root, "tests", "data", "offgrid_measured.csv"))
    assert table == _rows(out)
    assert len(table) == 128
    # the cell the time model missed before it priced waves (PERF.md entry 76): two splits 0.84x the unsplit time
    assert "384,8192,28672,f4gemm_sm90a_pab_128x128.cubin,1,279.24,0" in table
    assert "384,8192,28672,f4gemm_sm90a_pab_128x128.cubin,0,333.13,0" in table


def test_rename_gives_the_shipped_name_and_refuses_a_bad_pair(script, tmp_path, capsys):
    a, out = tmp_path / "a.log", tmp_path / "t.csv"
    a.write_text(LOG2)
    assert script.main([str(a), "--rename", "f4gemm_sm90a_dec_16x64_m2.cubin=f4gemm_sm90a_new.cubin",
                        "-o", str(out)]) == 0
    assert "1,8192,8192,f4gemm_sm90a_new.cubin,0,15.9,0" in out.read_text()
    assert script.main([str(a), "--rename", "no_equals_sign", "-o", str(out)]) == 2
    assert "--rename 'no_equals_sign': pass OLD=NEW" in capsys.readouterr().err


def test_exclude_shape_leaves_a_cell_out(script, tmp_path):
    a, out = tmp_path / "a.log", tmp_path / "t.csv"
    a.write_text(LOG1 + LOG2)
    assert script.main([str(a), "--exclude-shape", "1x8192x8192", "--exclude", "_sk", "-o", str(out)]) == 1  # nothing left
    assert script.main([str(a), "--exclude-shape", "2x8192x8192", "--exclude", "_sk", "-o", str(out)]) == 0
    assert "1,8192,8192,f4gemm_sm90a_dec_16x64_m2.cubin,0,15.9,0" in out.read_text()


def test_tune_subset_refuses_what_it_cannot_tune(tmp_path):
    """scripts/tune_subset.sh (the restricted-manifest tune the logs above come from): a one-line error and exit 2
    for missing arguments and for a regex that names no kernel (or no build to take them from), nothing run."""
    import subprocess

    script = os.path.join(os.path.dirname(_SCRIPT), "tune_subset.sh")
    r = subprocess.run(["bash", script, "x"], capture_output=True, text=True)
    assert r.returncode == 2 and "usage" in r.stderr
    log = tmp_path / "t.log"
    r = subprocess.run(["bash", script, "no_such_kernel_xyz", str(log), "--shape", "1x64x64"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.startswith("tune_subset.sh: no ")
    assert not log.exists()
    # --make DIR REGEX (the restricted directory alone, for a device call to carry)
    r = subprocess.run(["bash", script, "--make", str(tmp_path / "d")], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.startswith("tune_subset.sh: usage: scripts/tune_subset.sh --make DIR REGEX")
    r = subprocess.run(["bash", script, "--make", str(tmp_path / "d"), "no_such_kernel_xyz"], capture_output=True,
                       text=True)
    assert r.returncode == 2 and r.stderr.startswith("tune_subset.sh: no ")
    assert not (tmp_path / "d").exists()


def test_a_late_log_is_read_last_without_the_lab_filters(script, tmp_path):
    """--late: read after every LOG, neither --exclude nor --rename applied (its kernels already carry their shipped
    names), --min-m, --max-m and --exclude-shape still applied."""
    a, b, out = tmp_path / "a.log", tmp_path / "b.log", tmp_path / "t.csv"
    a.write_text(LOG1)
    b.write_text(LOG2)
    assert script.main([str(a), "--exclude", r"dec_16x64_m2", "--rename",
                        "f4gemm_sm90a_dec_16x64_m2.cubin=f4gemm_sm90a_other.cubin", "--late", str(b),
                        "-o", str(out)]) == 0
    rows = [line for line in out.read_text().splitlines() if not line.startswith(("#", "M,"))]
    # LOG1's dec rows excluded (its other kernel kept), LOG2's dec row kept under its own name
    assert rows == ["1,8192,8192,f4gemm_sm90a_dec_16x64_m2.cubin,0,15.9,0",
                    "64,8192,8192,f4gemm_sm90a_x_sk.cubin,0,99.0,0"]
    # a late log with no timing lines left after the filters is an error like any other
    assert script.main([str(a), "--late", str(b), "--exclude-shape", "1x8192x8192", "-o", str(out)]) == 1


def test_a_missing_log_is_a_one_line_error(script, tmp_path, capsys):
    """A log that cannot be read, as LOGS or --late, names itself and exits 2 (no traceback, no output file)."""
    a, out = tmp_path / "a.log", tmp_path / "t.csv"
    a.write_text(LOG1)
    missing = str(tmp_path / "missing.log")
    assert script.main([missing, "-o", str(out)]) == 2
    assert f"cannot read {missing}" in capsys.readouterr().err
    assert script.main([str(a), "--late", missing, "-o", str(out)]) == 2
    assert f"cannot read {missing}" in capsys.readouterr().err
    assert not out.exists()


def test_update_re_times_rows_the_table_holds_and_adds_none(script, tmp_path, capsys):
    """--update TABLE: a re-time of rebuilt kernels replaces the same (cell, kernel, split) rows, keeps every other
    row and the table's comment, appends --comment, and leaves out log rows the table lacks."""
    a, b, table = tmp_path / "a.log", tmp_path / "b.log", tmp_path / "t.csv"
    a.write_text(LOG1)
    assert script.main([str(a), "--comment", "old header", "-o", str(table)]) == 0
    b.write_text(LOG2 + "[f4gemm]   2x8192x8192 f4gemm_sm90a_dec_16x64_m2.cubin          split 0:     17.00 us\n")
    assert script.main([str(b), "--update", str(table), "--comment", "re-timed", "-o", str(table)]) == 0
    assert "1 rows re-timed, 1 log rows not in the table left out" in capsys.readouterr().out
    assert table.read_text().splitlines() == [
        "# old header",
        "# re-timed",
        "M,N,K,kernel,split,us,screen",
        "1,8192,8192,f4gemm_sm90a_dec_16x64_m2.cubin,0,15.9,0",  # re-timed
        "1,8192,8192,f4gemm_sm90a_dec_16x64_m2.cubin,1,18.4,1",  # kept
        "64,8192,8192,f4gemm_sm90a_x_sk.cubin,0,99.0,0",  # kept
    ]
    # a log with nothing the table holds: one line, non-zero
    c = tmp_path / "c.log"
    c.write_text("[f4gemm]   3x8192x8192 f4gemm_sm90a_dec_16x64_m2.cubin          split 0:     17.00 us\n")
    assert script.main([str(c), "--update", str(table), "-o", str(tmp_path / "u.csv")]) == 1
    assert "no row of the logs is in" in capsys.readouterr().err
