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


def test_range_keeps_the_instructions_between_two_offsets(mix, tmp_path, capsys):
    p = tmp_path / "src.csv"
    p.write_text(CSV)
    rows = mix.in_range(mix.read(str(p)), *mix.parse_range("10:20"))
    assert [(r[0], r[4]) for r in rows] == [("BRA", 0x10), ("LOP3", 0x20)]  # offsets from the first instruction
    assert mix.main([str(p), "--range", "10:20"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "200 warp instructions, 30 stall samples"
    for bad, says in (("20:10", "START is past END"), ("x:10", "pass START:END as hex"), ("100:200", "no instruction")):
        assert mix.main([str(p), "--range", bad]) == 2
        err = capsys.readouterr().err
        assert says in err and err.count("\n") == 1


def test_entry_58_numbers_come_from_its_profile(mix):
    """docs/PERF.md entry 58 quotes the main loop of pab_128x128_p (offsets 0x7490..0x9a60 of its SASS) from the
    committed ncu source page: 8005 stall samples, FADD 14.4% of them, the folded conversion's IMAD, LOP3, PRMT and
    SHF 31.5%, QGMMA 6.6%, the wgmma fences and waits (WARPGROUP.ARRIVE, .DEPBAR) 0.7%."""
    import os

    csv = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "results", "2026-12-02c", "call4",
                       "pab128p_sass.csv")
    rows = mix.in_range(mix.read(csv), 0x7490, 0x9A60)
    samples = sum(r[2] for r in rows)
    by_op = {}
    for r in rows:
        by_op[r[0]] = by_op.get(r[0], 0) + r[2]
    assert samples == 8005
    assert round(100 * by_op["FADD"] / samples, 1) == 14.4
    assert round(100 * sum(by_op[o] for o in ("IMAD", "LOP3", "PRMT", "SHF")) / samples, 1) == 31.5
    assert round(100 * by_op["QGMMA"] / samples, 1) == 6.6
    assert round(100 * by_op["WARPGROUP"] / samples, 1) == 0.7  # the wgmma fences and waits
