"""scripts/variant.py, the lab variants of a kernels.json config (the A/Bs of docs/PERF.md entries 64-66): its
refusals, the flags and manifest entry it builds from kernels.json, and, with nvcc, that a variant without overrides is
the built kernel itself and that an override reaches the manifest row through the variant's own PTX."""
import importlib.util
import json
import os
import shutil
import subprocess
import sys

import pytest

_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
_SCRIPT = os.path.join(_ROOT, "scripts", "variant.py")
_BUILD = os.environ.get("F4GEMM_BUILD_DIR") or os.path.join(_ROOT, "build")  # scripts/test.sh sets it
_NAME = "f4gemm_sm90a_pab_128x128"
_NVCC = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.access("/usr/local/cuda/bin/nvcc", os.X_OK) else None)


def run(*args):
    return subprocess.run([sys.executable, _SCRIPT, *args], capture_output=True, text=True)


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("variant", _SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _config(name):
    with open(os.path.join(_ROOT, "kernels", "sm90a", "kernels.json")) as f:
        table = json.load(f)
    for fam in table.values():
        if isinstance(fam, dict):
            for cfg in fam.get("configs", []):
                if cfg["name"] == name:
                    return fam, cfg
    raise AssertionError(name)


def test_refusals_are_one_line_exit_2_and_write_nothing(tmp_path):
    out = tmp_path / "v"
    cases = [
        (("nope", "x"), "is not a config of kernels/sm90a/kernels.json"),
        ((_NAME, "x", "FOO=1"), "is not a param of the ws family: use one of BLOCK_R"),
        ((_NAME, "x", "STAGES=three"), "is not PARAM=VALUE with an integer VALUE"),
        ((_NAME, "x", "STAGES"), "is not PARAM=VALUE"),
        ((_NAME, "x", "STAGES=3", "STAGES=4"), "'STAGES' is given twice"),
        ((_NAME, "st-3", "STAGES=3"), "suffix 'st-3' must be letters and digits"),
    ]
    for args, msg in cases:
        r = run(str(out), *args)
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and msg in r.stderr, (args, r.stderr)
    # a build that lacks the kernel is refused before anything is compiled
    r = run(str(out), _NAME, "x", "STAGES=3", "--with-built", str(tmp_path / "nobuild"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "no built " + _NAME in r.stderr
    # --define: a macro outside the family's params, an integer, once; --also needs --with-built
    cases = [
        (("--define", "F4GEMM_CV_PROBE"), "--define 'F4GEMM_CV_PROBE' is not MACRO=VALUE"),
        (("--define", "F4GEMM_CV_PROBE=x"), "is not MACRO=VALUE with an integer VALUE"),
        (("--define", "F4GEMM_STAGES=3"), "--define 'F4GEMM_STAGES' is set by variant.py itself: pass a ws param"),
        (("--define", "F4GEMM_KNL_NAME=1"), "--define 'F4GEMM_KNL_NAME' is set by variant.py itself"),
        (("--define", "F4GEMM_X=1", "--define", "F4GEMM_X=2"), "--define 'F4GEMM_X' is given twice"),
        (("--also", "f4gemm_sm90a_pp_128x128"), "--also copies built kernels: pass --with-built BUILD"),
    ]
    for extra, msg in cases:
        r = run(str(out), _NAME, "x", *extra)
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and msg in r.stderr, (extra, r.stderr)
    if os.path.exists(os.path.join(_BUILD, "kernels", "sm90a", f"{_NAME}.cubin")):
        # every --also name is looked up before anything is compiled
        r = run(str(out), _NAME, "x", "--with-built", _BUILD, "--also", "f4gemm_sm90a_nope")
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and "no built f4gemm_sm90a_nope" in r.stderr
    assert not out.exists()


def test_dry_run_is_the_config_with_its_overrides_under_the_new_name(tmp_path):
    r = run(str(tmp_path / "v"), _NAME, "st3", "STAGES=3", "--dry-run")
    assert r.returncode == 0, r.stderr
    ptx_cmd, cubin_cmd, entry = r.stdout.splitlines()
    fam, cfg = _config(_NAME)
    for cmd, kind in ((ptx_cmd, "-ptx"), (cubin_cmd, "-cubin")):
        words = cmd.split()
        assert kind in words and words[-1].endswith("sm90_mxfp4_gemm_ws.cu")
        assert f"-DF4GEMM_KNL_NAME={_NAME}_st3" in words
        for p in fam["params"]:  # every param once, kernels.json's value but the override
            want = 3 if p == "STAGES" else cfg[p]
            assert [w for w in words if w.startswith(f"-DF4GEMM_{p}=")] == [f"-DF4GEMM_{p}={want}"], p
        # the build's flags (kernels/sm90a/CMakeLists.txt F4GEMM_SM90A_FLAGS)
        for f in ("-std=c++17", "-O3", "arch=compute_90a,code=sm_90a"):
            assert f in words
    cols = entry.split(",")
    assert cols[0] == f"{_NAME}_st3" and cols[-1].endswith(f"{_NAME}_st3.ptx")
    # the base config's policy fields, 0 where kernels.json has none (as CMakeLists.txt writes its entries)
    assert cols[1:10] == [str(cfg.get(k, 0)) for k in ("priority", "max_m", "min_m", "cost_wave_k", "cost_prepass",
                                                         "cost_wave_us", "decode_round", "decode_warps",
                                                         "decode_speed")]
    assert not (tmp_path / "v").exists()


def test_dry_run_passes_each_define_after_the_params(tmp_path):
    r = run(str(tmp_path / "v"), _NAME, "pr", "STAGES=4", "--define", "F4GEMM_LAB_A=7", "--define", "F4GEMM_LAB_B=-1",
            "--dry-run")
    assert r.returncode == 0, r.stderr
    fam, _ = _config(_NAME)
    last = f"-DF4GEMM_{list(fam['params'])[-1]}="
    for cmd in r.stdout.splitlines()[:2]:
        words = cmd.split()
        i = next(j for j, w in enumerate(words) if w.startswith(last))
        assert words[i + 1:i + 3] == ["-DF4GEMM_LAB_A=7", "-DF4GEMM_LAB_B=-1"], words
        assert "-DF4GEMM_STAGES=4" in words
    assert not (tmp_path / "v").exists()


def test_merge_row_appends_replaces_and_refuses_another_header(script, tmp_path):
    path = str(tmp_path / "m.csv")
    h = "tile_M,tile_N,splitK,bpreshuffle,knl_name,co_name"
    open(path, "w").write(script.merge_row(path, h, "1,2,0,0,a,a.cubin"))
    open(path, "w").write(script.merge_row(path, h, "1,2,0,0,b,b.cubin"))
    assert script.merge_row(path, h, "3,4,0,0,a,a.cubin") == f"{h}\n1,2,0,0,b,b.cubin\n3,4,0,0,a,a.cubin\n"
    with pytest.raises(script.Refusal, match="another header"):
        script.merge_row(path, h + ",x", "1,2,0,0,c,c.cubin,0")


@pytest.mark.skipif(_NVCC is None or shutil.which("cmake") is None, reason="needs nvcc and cmake")
def test_built_variants_carry_their_own_exported_row(tmp_path):
    out = tmp_path / "v"
    for args in (("b0",), ("st4", "STAGES=4"), ("st3", "STAGES=3")):
        r = run(str(out), _NAME, *args)
        assert r.returncode == 0, r.stderr
    lines = (out / "f4gemm_bf16_per1x32Fp4.csv").read_text().splitlines()
    header = lines[0].split(",")
    rows = {c[4]: dict(zip(header, c)) for c in (l.split(",") for l in lines[1:])}
    assert list(rows) == [f"{_NAME}_b0", f"{_NAME}_st4", f"{_NAME}_st3"]
    # the ring's depth is in the variant's own shared memory (50264 bytes a 256-K stage: the A image's 128 x 256 bytes,
    # eight 16-row groups' two 1088-byte W chunks, eleven mbarriers), the rest is the config's
    assert int(rows[f"{_NAME}_st4"]["smem_bytes"]) - int(rows[f"{_NAME}_st3"]["smem_bytes"]) == 50264
    for r in rows.values():
        assert (out / r["co_name"]).exists()
        assert (r["threads"], r["abi"], r["accum"], r["reg_ctas"], r["priority"], r["max_m"]) == \
            ("384", "sm90pa1", "exact", "1", "10", "768")
    r = run(str(out), _NAME, "st3", "STAGES=3")  # the same name again: its row replaced, not doubled
    assert r.returncode == 0 and (out / "f4gemm_bf16_per1x32Fp4.csv").read_text().count(f"{_NAME}_st3,") == 1
    # a config the kernel refuses (two stages: its static_assert) fails with nvcc's error, and leaves no cubin
    r = run(str(out), _NAME, "st2", "STAGES=2")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "static assertion failed" in r.stderr
    assert not (out / f"{_NAME}_st2.cubin").exists()
    built = os.path.join(_BUILD, "kernels", "sm90a", f"{_NAME}.cubin")
    if os.path.exists(built):
        # --with-built: the built kernel itself joins OUTDIR, its row as the build wrote it
        r = run(str(out), _NAME, "w4", "STAGES=4", "--with-built", _BUILD)
        assert r.returncode == 0, r.stderr
        man = (out / "f4gemm_bf16_per1x32Fp4.csv").read_text().splitlines()
        with open(os.path.join(_BUILD, "kernels", "sm90a", "f4gemm_bf16_per1x32Fp4.csv")) as f:
            row = next(l for l in f.read().splitlines() if l.split(",")[4] == _NAME)
        assert man[-1] == row and man[-2].split(",")[4] == f"{_NAME}_w4"
        assert (out / f"{_NAME}.cubin").read_bytes() == open(built, "rb").read()
        # --also: further built kernels join OUTDIR beside it, each row as the build wrote it
        other = "f4gemm_sm90a_pp_128x128"
        r = run(str(out), _NAME, "w4", "STAGES=4", "--with-built", _BUILD, "--also", other)
        assert r.returncode == 0 and f"copied from {_BUILD}: {_NAME}, {other}" in r.stdout, r.stdout + r.stderr
        man = (out / "f4gemm_bf16_per1x32Fp4.csv").read_text().splitlines()
        with open(os.path.join(_BUILD, "kernels", "sm90a", "f4gemm_bf16_per1x32Fp4.csv")) as f:
            orow = next(l for l in f.read().splitlines() if l.split(",")[4] == other)
        assert man[-1] == orow and man[-2] == row and [l.split(",")[4] for l in man].count(other) == 1
        assert (out / f"{other}.cubin").read_bytes() == \
            open(os.path.join(_BUILD, "kernels", "sm90a", f"{other}.cubin"), "rb").read()
    if shutil.which("cuobjdump") is None or not os.path.exists(built):
        pytest.skip("the SASS check needs cuobjdump and a build")
    # no override: the built kernel, instruction for instruction (scripts/sass_same.sh)
    s = subprocess.run(["bash", os.path.join(_ROOT, "scripts", "sass_same.sh"), built, str(out / f"{_NAME}_b0.cubin")],
                       capture_output=True, text=True)
    assert s.returncode == 0 and s.stdout.startswith("same: "), s.stdout + s.stderr
