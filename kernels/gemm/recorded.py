"""Recorded H100 figures of the GEMM ladder (benchmarks/gemm/RESULTS.md, h100_gemm.csv, h100_sass.csv), kept
in the package so that chapter 7 can show them where it cannot measure: in the simulator, or after a pip
install that has no benchmarks/ folder. tests/test_gemm_chapter.py asserts every figure here equals the CSVs.

RUN: where and how they were measured. ROWS: (name in the CSV, dtype, TFLOP/s at M = N = K = 4096, registers
per thread from the SASS, or None). CEILINGS: the register-only mma.sync loops of kernels/gemm/ceiling.py,
same run. CSV_NAME maps a rung name of kernels.gemm.LADDER to its name in the CSV (renamed after the run).
STALLS: rung name -> {Nsight Compute stall reason: value} for the same kernels at the same size, the reason
named as ncu names it without prefix or suffix ("long_scoreboard", "short_scoreboard", "mio_throttle",
"barrier", "math_pipe_throttle", "wait", "not_selected", ...), the value in STALLS_UNIT. Chapter 7 prints
"not recorded" for a rung that has none. STALLS come from benchmarks/gemm/ladder_profile.py (h100_stalls.csv),
one launch each at 4096^3 on the same day's H100.
SCHEDULE: rung name -> the main loop of its kernel in SASS, one character an instruction ("strip", letters in
SCHEDULE_LEGEND), and for each ldmatrix in it how many instructions later the first mma reads what it loaded
("ldmatrix_to_mma"), from benchmarks/gemm/sass_schedule.py: compiled offline, not on the H100 (SCHEDULE_SOURCE).
"""

__all__ = ["RUN", "ROWS", "CEILINGS", "CSV_NAME", "STALLS", "STALLS_UNIT", "SCHEDULE", "SCHEDULE_SOURCE",
           "SCHEDULE_LEGEND", "recorded", "recorded_regs"]

RUN = {"date": "2026-11-25", "device": "NVIDIA H100 80GB HBM3 (sm_90)", "size": (4096, 4096, 4096),
       "command": "python3 benchmarks/gemm/bench.py --sweep --explore",
       "method": "GPU time (kernels.timing.gpu_time_ms: CUDA events around batches of launches queued back "
                 "to back, 3 warm-ups, median of 10); cuBLAS through torch 2.11, TF32 off",
       "source": "benchmarks/gemm/RESULTS.md, run 2 (h100_gemm.csv, h100_sass.csv)"}

ROWS = [
    ("cuBLAS fp32 (torch)", "f32", 51.7, None),
    ("cuBLAS fp16 (torch)", "f16", 723.0, None),
    ("cuBLAS fp16->fp32 (torch)", "f16", 737.5, None),
    ("simt 1: naive", "f32", 0.5, 30),
    ("simt 2: coalesced", "f32", 1.3, 30),
    ("simt 3: smem tiles", "f32", 1.8, 32),
    ("simt 4: 1-D blocking", "f32", 4.7, 40),
    ("simt 5: 2-D blocking 8x8", "f32", 15.3, 127),
    ("simt 6: 128-bit loads", "f32", 30.2, 101),
    ("simt 6b: padded smem", "f32", 31.7, 101),
    ("simt 6b: swizzled smem", "f32", 27.7, 100),
    ("simt 7: dbuf + warp tiles", "f32", 33.5, 110),
    ("simt 8: unrolled k, padded A^T", "f32", 44.9, 128),
    ("tc sm75 128x128x32", "f16", 261.7, 254),
    ("tc sm80 128x128x32 4st", "f16", 410.5, 212),
    ("tc sm80 + k-block prefetch", "f16", 370.7, 230),
    ("tc sm80 pf 128x128x64 3st", "f16", 395.4, 240),
    ("tc sm80 pf 128x128x32 3st", "f16", 346.0, 232),
    ("tc sm80 pf 128x128x32 4st 1blk", "f16", 387.8, 254),
    ("tc sm80 pf 128x256x32 4st", "f16", 363.9, 230),
    ("tc sm80 128x128x32 3st", "f16", 392.6, 214),
]

CEILINGS = {"m16n8k16": 655.7, "m16n8k8": 476.6}

CSV_NAME = {}

STALLS = {
    "tc sm75 128x128x32": {
        "wait": 1.76, "short_scoreboard": 1.32, "selected": 1.0, "math_pipe_throttle": 0.68,
        "long_scoreboard": 0.51, "not_selected": 0.37, "dispatch_stall": 0.24, "barrier": 0.23,
        "lg_throttle": 0.06, "mio_throttle": 0.05, "no_instruction": 0.01},
    "tc sm80 128x128x32 4st": {
        "wait": 2.1, "selected": 1.0, "long_scoreboard": 0.79, "math_pipe_throttle": 0.46,
        "not_selected": 0.37, "dispatch_stall": 0.26, "short_scoreboard": 0.17, "barrier": 0.1,
        "lg_throttle": 0.07, "mio_throttle": 0.04, "no_instruction": 0.01},
    "tc sm80 + k-block prefetch": {
        "wait": 1.5, "selected": 1.0, "math_pipe_throttle": 0.95, "short_scoreboard": 0.7, "barrier": 0.44,
        "long_scoreboard": 0.39, "not_selected": 0.25, "dispatch_stall": 0.11, "mio_throttle": 0.07,
        "lg_throttle": 0.05, "no_instruction": 0.02},
}
STALLS_UNIT = ("warp cycles per issued instruction (ncu --section WarpStateStats: "
               "smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio)")

SCHEDULE = {
    "tc sm75 128x128x32": {
        "strip": ('m..m..m.m.m...mm.m..m..m..m..m..m..mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm.mm..m...g...'
                  '....g.......g.......g....l.....l....g...g.g...g.....ml.m..l.....l.....l...lmlmmmmmmmmmmmmmmmmmmm'
                  'mmmmmmmmmmmmmmmmmmmmmmmsmmsmmsmmmm.m.smmmsmmsmmsmms|...m...l.lllllll.'),
        "ldmatrix_to_mma": [27, 21, 22, 22, 14, 12, 16, 22, 10, 18, 22, 26, 43, 50, 3, 8]},
    "tc sm80 128x128x32 4st": {
        "strip": ('..w.|......................................c....c.....c....c...c.ccc........l...l...l...l...l...'
                  'l...l..l.l.llmlm.mmmmmmm..m.lm.mlmmmmm..mlm.m.mlmmmmmmmmmmmmmmmmmmmm..m.mmmmmmmmmmmmmmmmmmmmmm..'),
        "ldmatrix_to_mma": [33, 29, 29, 27, 25, 23, 33, 54, 50, 67, 74, 49, 12, 33, 26, 12]},
    "tc sm80 + k-block prefetch": {
        "strip": ('m....m...m.m..m...m..lm...m..m..m.m..m...m..m.m.m.m.m..m.m.m.m.m.m.m.m.mlm.m.mlm.m....l...ml.m..'
                  '...ml..m.l....lm..m...c.mc.mcm.m.m.m.m...mc...mc.m.cm..m.c..m.c.m....m.m.m..m..w|.m.m.m..ml..ml.'
                  'm.lm.lmllll.'),
        "ldmatrix_to_mma": [69, 18, 21, 25, 29, 25, 43, 68, 18, 28, 32, 36, 55, 71, 3, 11]},
}
SCHEDULE_SOURCE = ("benchmarks/gemm/sass_schedule.py on 2026-11-27, offline: Numba's PTX of each rung assembled by "
                   "ptxas of CUDA 13.0 (V13.0.88) for sm_90, disassembled by nvdisasm; the H100's driver compiled "
                   "the same PTX itself (212 registers for tc sm80 128x128x32 4st, where this ptxas gives 216)")
SCHEDULE_LEGEND = ("m mma (HMMA), l ldmatrix (LDSM), c cp.async (LDGSTS), w cp.async.wait_group (DEPBAR), "
                   "| barrier (BAR.SYNC), g ld.global (LDG), s st.shared (STS), . anything else")


def recorded(name):
    """The recorded TFLOP/s of a rung (a LADDER name or a CSV name), or None if it was not measured."""
    name = CSV_NAME.get(name, name)
    return next((tf for n, _, tf, _ in ROWS if n == name), None)


def recorded_regs(name):
    """Registers per thread of a rung's kernel in the recorded SASS, or None."""
    name = CSV_NAME.get(name, name)
    return next((r for n, _, _, r in ROWS if n == name), None)
