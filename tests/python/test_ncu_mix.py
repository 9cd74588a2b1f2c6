"""scripts/ncu_mix.py: instruction mix and stall reasons from ncu's source page (docs/PERF.md entry 33)."""
import pytest


@pytest.fixture(scope="module")
def mix(repo_module):
    return repo_module("scripts/ncu_mix.py")


# The shape of `ncu --page source --csv --print-source sass`: a kernel-name line, the header, one row per instruction.
CSV = '''"Kernel Name","k",
"Address","Source","Warp Stall Sampling (All Samples)","Instructions Executed","stall_wait","stall_long_sb","stall_wait (Not Issued)"
"0x0","      IMAD R1, R2, R3, R4","10","300","6","0","5"
"0x10","  @!P0 BRA 0x40","30","100","0","30","0"
"0x20","      LOP3.LUT R1, R2, 0xff, RZ, 0xc0, !PT","0","100","0","0","0"
"0x30","      IMAD.MOV.U32 R5, RZ, RZ, R6","0","100","4","0","0"
'''


def test_counts_opcodes_and_stalls(mix, tmp_path):
    p = tmp_path / "src.csv"
    p.write_text(CSV)
    rows = mix.read(str(p))
    assert [r[0] for r in rows] == ["IMAD", "BRA", "LOP3", "IMAD"]  # predicate and modifiers stripped
    out = mix.summary(rows, steps=2, sms=1)
    assert out.splitlines()[0] == "600 warp instructions (300 per SM and k32 step), 40 stall samples"
    assert "IMAD           66.7%" in out and "BRA            16.7%" in out
    # reasons over their own total (40 samples: wait 10, long_sb 30); the Not Issued columns are not counted twice
    assert out.splitlines()[-1] == "stall reasons: long_sb 75.0%, wait 25.0%"


def test_not_a_source_page_is_one_line_and_exit_2(mix, tmp_path, capsys):
    p = tmp_path / "x.csv"
    p.write_text("a,b\n1,2\n")
    assert mix.main([str(p)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ncu_mix.py: ") and err.count("\n") == 1
    assert mix.main([str(tmp_path / "missing.csv")]) == 2
