"""benchmarks/gemm/sass_schedule.py's reading of a SASS loop and of Nsight Compute's source page, on small texts
written here: which registers an instruction reads and writes, what a stalled instruction waits for, and which
loop instruction collects the most samples of a stall reason."""

import csv
import importlib.util
import io
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
spec = importlib.util.spec_from_file_location("sass_schedule",
                                              os.path.join(ROOT, "benchmarks", "gemm", "sass_schedule.py"))
ss = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ss)

# A loop of 6 instructions at 0x10..0x60, entered from 0x00 and left after 0x70.
LOOP = [("0x10", "HMMA.16816.F32 R4, R132, R136, R4"),
        ("0x20", "LDGSTS.E.BYPASS.128 desc[UR14][R36.64+0xc0], [R47]"),
        ("0x30", "LDSM.16.MT88.4 R36, [R50]"),
        ("0x40", "@!P0  VIADD R47, R53, 0x4000"),
        ("0x50", "LDSM.16.M88.4 R136, [R213]"),
        ("0x60", "@P0   BRA 0x10")]
CODE = [("0x00", "MOV R1, R2")] + LOOP + [("0x70", "EXIT")]


def source_page(samples):
    """An Nsight Compute source page (CSV) of CODE, with {address: {column: samples}}."""
    cols = ["stall_long_sb", "stall_short_sb", "stall_wait", "stall_long_sb (Not Issued)"]
    out = io.StringIO()
    w = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    w.writerow(["Kernel Name", "gemm(...)", ""])
    w.writerow(["Address", "Source", "Warp Stall Sampling (All Samples)"] + cols)
    for address, ins in CODE:
        s = samples.get(address, {})
        w.writerow([address, "      " + ins, sum(s.values())] + [s.get(c, 0) for c in cols])
    return out.getvalue()


def test_registers_read_and_written():
    assert ss.writes(LOOP[0][1]) == {4, 5, 6, 7}
    assert ss.reads(LOOP[0][1]) == {132, 133, 134, 135, 136, 137, 4, 5, 6, 7}
    assert ss.writes(LOOP[1][1]) == set() and ss.reads(LOOP[1][1]) == {36, 37, 47}   # a 64-bit address: R36, R37
    assert ss.writes(LOOP[2][1]) == {36, 37, 38, 39} and ss.reads(LOOP[2][1]) == {50}
    assert ss.writes(LOOP[3][1]) == {47} and ss.reads(LOOP[3][1]) == {53}             # predicated
    assert ss.writes("LDSM.16.M88.2 R8, [R2]") == {8, 9}


def test_what_an_instruction_waits_for():
    loop = [ins for _, ins in LOOP]
    # the first HMMA reads R136, written by the LDSM at 4: one instruction back, around the back edge = 2
    assert ss.waits_on(loop, 0, "short_scoreboard") == "reads R136, which the LDSM 2 instructions earlier writes"
    # the LDSM at 2 writes R36, which the LDGSTS at 1 reads as its address
    assert ss.waits_on(loop, 2, "long_scoreboard") == "writes R36, which the LDGSTS 1 instruction earlier reads"
    assert ss.waits_on(loop, 3, "long_scoreboard") == "writes R47, which the LDGSTS 2 instructions earlier reads"
    assert ss.waits_on(loop, 3, "short_scoreboard") is None          # reads nothing an LDSM wrote
    assert ss.waits_on(["IADD3 R1, R2, R3", "HMMA.16816.F32 R4, R8, R12, R4"], 1, "short_scoreboard") is None


def test_source_page_loop_and_hotspots():
    page = source_page({"0x10": {"stall_short_sb": 9, "stall_wait": 1}, "0x30": {"stall_long_sb": 6},
                        "0x40": {"stall_long_sb": 2}, "0x00": {"stall_long_sb": 2, "stall_short_sb": 1}})
    rows = ss.ncu_source(page)
    assert [a for a, _, _ in rows] == [a for a, _ in CODE]
    assert rows[1][2] == {"long_scoreboard": 0, "short_scoreboard": 9, "wait": 1}     # Not-Issued columns left out
    assert ss.loop_span([(a, ins) for a, ins, _ in rows]) == (1, 6)
    spots = ss.hotspots(rows)
    assert spots["short_scoreboard"] == (0, 0.9, LOOP[0][1], "reads R136, which the LDSM 2 instructions earlier writes")
    assert spots["long_scoreboard"] == (2, 0.6, LOOP[2][1], "writes R36, which the LDGSTS 1 instruction earlier reads")
    s = ss.schedule([(a, ins) for a, ins, _ in rows], "test")
    assert s["strip"] == "mcl.l." and s["ldmatrix_to_mma"] == [None, 2]   # R36 feeds no HMMA; R136 the first
