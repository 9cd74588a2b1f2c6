"""scripts/fit_time_model.py, the least-squares fit behind kernels.json's time model constants (PERF.md entry 76): it
recovers known constants from synthetic times, refuses bad input in one line, and the built manifest carries exactly
what it fits to the committed measured tables."""
import os

import pytest

_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
_BUILD = os.environ.get("F4GEMM_BUILD_DIR") or os.path.join(_ROOT, "build")  # scripts/test.sh sets it
_HEAD = ("tile_M,tile_N,splitK,bpreshuffle,knl_name,co_name,arch,threads,smem_bytes,abi,b_layout,scale_layout,max_m,"
         "min_m,priority,accum,cost_wave_k,cost_prepass,cost_wave_us,decode_round,decode_warps,decode_speed,promote_k,"
         "reg_ctas\n")


@pytest.fixture()
def fit(repo_module):
    pytest.importorskip("numpy")
    return repo_module("scripts/fit_time_model.py")


def _manifest(tmp_path, wave_k, wave_us):
    p = tmp_path / "m.csv"
    p.write_text(_HEAD + f"128,128,1,0,t,t.cubin,sm_90a,384,152856,sm90pa1,frag16s,plain,,,4,exact,{wave_k},,{wave_us},"
                 ",,,,1\n")
    return p


def test_it_recovers_the_constants_of_synthetic_times(fit, tmp_path, capsys):
    # times made by the model itself (132 SMs, one CTA each): 10 us a wave, 5e-3 us per K element and wave, 7 a split
    row = {"tile_M": "128", "tile_N": "128", "abi": "sm90pa1", "smem_bytes": "152856", "threads": "384",
           "reg_ctas": "1"}
    lines = ["M,N,K,kernel,split,us,screen"]
    for m, n, k in ((128, 10240, 8192), (128, 16384, 16384), (256, 8192, 28672), (384, 8192, 28672), (512, 4096, 4096)):
        for l in (0, 1, 2):
            waves, kp, _ = fit.terms(row, m, n, k, l, 132)
            lines.append(f"{m},{n},{k},t.cubin,{l},{waves * (10 + 5e-3 * kp / (1 << l)) + (7 if l else 0):.4f},0")
    lines.append("128,1024,1024,t.cubin,0,999,1")  # a screen row: not an equation
    table = tmp_path / "t.csv"
    table.write_text("# synthetic\n" + "\n".join(lines) + "\n")
    assert fit.main([str(_manifest(tmp_path, 0.005, 10)), str(table), "--check"]) == 0
    out = capsys.readouterr().out
    assert "10.00 0.00500  7.00  0.0%  0.0%" in out
    # other constants in the manifest: --check names the difference and exits 1
    assert fit.main([str(_manifest(tmp_path, 0.006, 10)), str(table), "--check"]) == 1
    assert "(differs)" in capsys.readouterr().out


def test_bad_input_is_one_line_and_exit_2(fit, tmp_path, capsys):
    table = tmp_path / "t.csv"
    table.write_text("M,N,K,kernel,split,us,screen\n")
    for argv, says in (([str(tmp_path / "none.csv"), str(table)], "cannot read manifest"),
                       ([str(_manifest(tmp_path, 0.005, 10)), str(tmp_path / "none.csv")], "cannot read table"),
                       ([str(_manifest(tmp_path, 0.005, 10)), str(table)], "no timed row of a modelled kernel"),
                       ([str(_manifest(tmp_path, 0.005, 10)), str(table), "--num-cu", "0"],
                        "--num-cu must be positive")):
        assert fit.main(argv) == 2
        err = capsys.readouterr().err
        assert says in err and err.count("\n") == 1


def test_the_built_manifest_carries_the_fit_of_the_committed_tables(fit):
    manifest = os.path.join(_BUILD, "kernels", "sm90a", "f4gemm_bf16_per1x32Fp4.csv")
    if not os.path.exists(manifest):
        pytest.skip(f"no built sm_90a manifest in {_BUILD}")
    data = os.path.join(_ROOT, "tests", "data")
    tables = [os.path.join(data, t) for t in ("grid_measured.csv", "decode_measured.csv", "offgrid_measured.csv")]
    assert fit.main([manifest] + tables + ["--check"]) == 0


def test_write_puts_the_fit_into_kernels_json(fit, tmp_path, capsys):
    """--write rewrites the fitted config's constants in place (adding cost_wave_us where it had none) and leaves the
    rest of the file as it was; a config it cannot find is refused in one line."""
    row = {"tile_M": "128", "tile_N": "128", "abi": "sm90pa1", "smem_bytes": "152856", "threads": "384",
           "reg_ctas": "1"}
    lines = ["M,N,K,kernel,split,us,screen"]
    for m, n, k in ((128, 10240, 8192), (128, 16384, 16384), (384, 8192, 28672)):
        waves, kp, _ = fit.terms(row, m, n, k, 0, 132)
        lines.append(f"{m},{n},{k},t.cubin,0,{waves * (9.5 + 4.25e-3 * kp):.4f},0")
    table = tmp_path / "t.csv"
    table.write_text("\n".join(lines) + "\n")
    kj = tmp_path / "kernels.json"
    before = ('{"ws": {"configs": [\n'
              '  {"name": "u", "cost_wave_k": 0.001, "note": "x"},\n'
              '  {"name": "t", "manifest": "shipped",\n   "cost_wave_k": 0.00628,\n   "note": "y"}\n]}}\n')
    kj.write_text(before)
    manifest = _manifest(tmp_path, 0.00628, 0)
    assert fit.main([str(manifest), str(table), "--write", str(kj)]) == 0
    after = kj.read_text()
    assert '"cost_wave_k": 0.00425, "cost_wave_us": 9.5' in after
    assert after.replace('"cost_wave_k": 0.00425, "cost_wave_us": 9.5', '"cost_wave_k": 0.00628') == before
    # written again over a config that has both: replaced, not repeated
    assert fit.main([str(manifest), str(table), "--write", str(kj)]) == 0
    assert kj.read_text() == after
    capsys.readouterr()
    kj.write_text('{"ws": {"configs": [{"name": "other", "cost_wave_k": 0.001}]}}\n')
    assert fit.main([str(manifest), str(table), "--write", str(kj)]) == 2
    err = capsys.readouterr().err
    assert "has no config named t" in err and err.count("\n") == 1


def test_its_model_is_the_policys(fit, tmp_path):
    """The script's copy of predicted_us (waves, K padding, pre-pass rows, CTAs per SM, the split term) gives the
    numbers the built CLI prints for every kernel its time model weighs (`--explain`, no tuned table), on shapes
    with one and several waves, splits and the pre-pass kernels."""
    import re
    import shutil
    import subprocess

    cli = os.path.join(_BUILD, "cli", "f4gemm")
    manifest = os.path.join(_BUILD, "kernels", "sm90a", "f4gemm_bf16_per1x32Fp4.csv")
    if not (os.path.exists(cli) and os.path.exists(manifest)):
        pytest.skip(f"no built CLI and sm_90a manifest in {_BUILD}")
    shutil.copy(manifest, tmp_path)  # no tuned table beside it: the policy decides
    rows = fit.load_manifest(manifest)
    line = re.compile(r"\[f4gemm\]\s+(\S+\.cubin)\s+split (\d+)\s+time model: ([\d.]+) us predicted"
                      r"(?: in \d+ splits of K)?$")
    checked = 0
    for accum, (m, n, k) in (("exact", (384, 8192, 28672)), ("promoted", (128, 4096, 14336)),
                             ("exact", (1024, 10240, 8192)), ("promoted", (64, 16384, 16384)),
                             ("exact", (48, 10240, 8192))):
        out = subprocess.run([cli, "--co-dir", str(tmp_path), "--backend", "cuda", "--dry-run", "--explain",
                              "--num-cu", "132", "--accum", accum, "-m", str(m), "-n", str(n), "-k", str(k)],
                             capture_output=True, text=True, check=True).stdout
        for hit in filter(None, map(line.match, out.splitlines())):
            kernel, split, us = hit.group(1), int(hit.group(2)), float(hit.group(3))
            r = rows[kernel]
            want = fit.predict(r, m, n, k, split.bit_length() - 1, 132, float(r.get("cost_wave_us") or 0),
                               float(r["cost_wave_k"]), 7.0)
            assert abs(want - us) <= 0.051, f"{kernel} at {m}x{n}x{k} split {split}: CLI {us}, script {want:.2f}"
            checked += 1
    assert checked >= 10, checked
