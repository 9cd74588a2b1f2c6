"""scripts/sass_same.sh, the instruction-for-instruction comparison of two cubins behind docs/PERF.md's "SASS unchanged"."""
import glob
import os
import shutil
import subprocess

import pytest

_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
_SCRIPT = os.path.join(_ROOT, "scripts", "sass_same.sh")


def run(*args):
    return subprocess.run(["bash", _SCRIPT, *args], capture_output=True, text=True)


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    r = run("only_one.cubin")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "usage" in r.stderr
    r = run(str(tmp_path / "missing.cubin"), str(tmp_path / "missing.cubin"))
    assert r.returncode == 2 and r.stderr.startswith("sass_same.sh: no file ")


def _cubins():
    """The built GEMM cubins, largest first (the util cubin holds no GEMM)."""
    build = os.environ.get("F4GEMM_BUILD_DIR") or os.path.join(_ROOT, "build")  # scripts/test.sh sets it
    found = glob.glob(os.path.join(build, "kernels", "sm90a", "f4gemm_sm90a_*.cubin"))
    return sorted((f for f in found if not f.endswith("_util.cubin")), key=os.path.getsize, reverse=True)


@pytest.mark.skipif(shutil.which("cuobjdump") is None or len(_cubins()) < 2,
                    reason="needs cuobjdump and two built sm_90a cubins ($F4GEMM_BUILD_DIR or build/kernels/sm90a)")
def test_same_and_different_cubins(tmp_path):
    a, b = _cubins()[:2]
    # the same code under another file name is the same; a kernel of another tile is not
    copy = tmp_path / "renamed.cubin"
    shutil.copy(a, copy)
    r = run(a, str(copy))
    assert r.returncode == 0 and r.stdout.startswith("same: ")
    n = int(r.stdout.split()[1])
    assert n > 4096, "the largest GEMM cubin has more than 4096 instructions: the comparison must see all of them"
    r = run(a, b)
    assert r.returncode == 1 and r.stdout.startswith("different: ")
    # not a cubin: refused
    text = tmp_path / "x.cubin"
    text.write_text("not a cubin\n")
    r = run(str(text), a)
    assert r.returncode == 2 and "sass_same.sh: cuobjdump cannot read" in r.stderr
