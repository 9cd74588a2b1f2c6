"""scripts/cv_probes.py, the probe builds behind docs/PERF.md entry 36 (each part of a converter-warpgroup kernel timed
alone): what it compiles, the manifest it writes, and its one-line refusals."""
import json
import os
import shutil
import subprocess
import sys

import pytest

_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
_SCRIPT = os.path.join(_ROOT, "scripts", "cv_probes.py")
_BUILD = os.environ.get("F4GEMM_BUILD_DIR") or os.path.join(_ROOT, "build")  # scripts/test.sh sets it
_NAME = "f4gemm_sm90a_cv_64x128_p"
_HAVE_ROW = os.path.exists(os.path.join(_BUILD, "kernels", "sm90a", "f4gemm_bf16_per1x32Fp4.csv"))


def run(*args):
    return subprocess.run([sys.executable, _SCRIPT, *args, "--build", _BUILD], capture_output=True, text=True)


def test_refusals_are_one_line_and_exit_2(tmp_path):
    r = run("f4gemm_sm90a_pab_64x128_p", str(tmp_path), "13")  # not a cv config
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "is not a cv config" in r.stderr
    r = run(_NAME, str(tmp_path), "128")  # a bit the knob does not have
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "bits outside" in r.stderr
    assert not os.listdir(tmp_path)


@pytest.mark.skipif(not _HAVE_ROW, reason="needs a build's sm_90a manifest ($F4GEMM_BUILD_DIR or build/)")
def test_dry_run_compiles_the_config_with_the_knob_and_renames_the_row(tmp_path):
    r = run(_NAME, str(tmp_path / "p"), "13", "29", "--dry-run")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    cmds, manifest = lines[:2], lines[2:]
    with open(os.path.join(_ROOT, "kernels", "sm90a", "kernels.json")) as f:
        config = next(c for c in json.load(f)["cv"]["configs"] if c["name"] == _NAME)
    params = [f"-DF4GEMM_{k}={v}" for k, v in config.items() if k.isupper()]
    assert "-DF4GEMM_BLOCK_N=128" in params and "-DF4GEMM_K_STAGE=256" in params, params
    for p, cmd in zip((13, 29), cmds):
        # every param of the shipped kernel's kernels.json config, the probe's name and bits
        for d in params + [f"-DF4GEMM_KNL_NAME={_NAME}_probe{p}", f"-DF4GEMM_CV_PROBE={p}"]:
            assert d in cmd.split(), (d, cmd)
        assert cmd.endswith("sm90_mxfp4_gemm_cv.cu")
    header = manifest[0].split(",")
    assert header[4] == "knl_name" and len(manifest) == 3
    for p, line in zip((13, 29), manifest[1:]):
        row = dict(zip(header, line.split(",")))
        assert row["knl_name"] == f"{_NAME}_probe{p}" and row["co_name"] == f"{_NAME}_probe{p}.cubin"
        assert row["max_m"] == "" and row["min_m"] == "" and row["priority"] == "38"
        assert row["accum"] == "promoted" and row["abi"] == "sm90pa1" and row["threads"] == "512"
    assert not (tmp_path / "p").exists()


@pytest.mark.skipif(not _HAVE_ROW or shutil.which("cuobjdump") is None
                    or not (shutil.which("nvcc") or os.access("/usr/local/cuda/bin/nvcc", os.X_OK)),
                    reason="needs nvcc, cuobjdump and a build's sm_90a manifest")
def test_probe_zero_is_the_kernel_itself(tmp_path):
    """Probe 0 removes nothing: its SASS is the built kernel's, instruction for instruction (scripts/sass_same.sh),
    so every probe differs from the kernel only by what its bits remove."""
    out = tmp_path / "p"
    r = run(_NAME, str(out), "0")
    assert r.returncode == 0, r.stderr
    assert (out / "f4gemm_bf16_per1x32Fp4.csv").read_text().count("\n") == 2
    built = os.path.join(_BUILD, "kernels", "sm90a", _NAME + ".cubin")
    s = subprocess.run(["bash", os.path.join(_ROOT, "scripts", "sass_same.sh"), built, str(out / f"{_NAME}_probe0.cubin")],
                       capture_output=True, text=True)
    assert s.returncode == 0 and s.stdout.startswith("same: "), s.stdout + s.stderr
