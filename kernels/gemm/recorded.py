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

PROBE*: steps 10 (tc_sm80, "plain") and 11 (tc_sm80_prefetch, "prefetch") side by side in four configurations,
benchmarks/gemm/prefetch_probe.py on an H200 (PROBE_RUN: another GPU and day than the ladder's, so compare them
only with each other). PROBE: size -> configuration -> kind -> TFLOP/s (median, min, max of the rounds);
PROBE_KERNELS: (registers per thread, CTAs an SM); PROBE_STALLS: as STALLS, one launch at 4096^3
(h200_prefetch_probe.csv, h200_prefetch_stalls.csv). PROBE_SCHEDULE: as SCHEDULE, from the SASS the H200 ran
(PROBE_SCHEDULE_SOURCE). PROBE_HOTSPOTS: for the kernels whose Nsight Compute source page came back, the loop
instruction that collects the most samples of the long and the short scoreboard: (its position in the loop,
its share of the kernel's samples of that reason, the instruction, what it waits for), from
`sass_schedule.py --ncu`.
"""

__all__ = ["RUN", "ROWS", "CEILINGS", "CSV_NAME", "STALLS", "STALLS_UNIT", "SCHEDULE", "SCHEDULE_SOURCE",
           "SCHEDULE_LEGEND", "PROBE_RUN", "PROBE", "PROBE_KERNELS", "PROBE_STALLS", "PROBE_SCHEDULE",
           "PROBE_SCHEDULE_SOURCE", "PROBE_HOTSPOTS", "recorded", "recorded_regs"]

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

PROBE_RUN = {"date": "2026-11-27", "device": "NVIDIA H200 (sm_90)", "rounds": 3,
             "command": "python3 benchmarks/gemm/prefetch_probe.py --out DIR --rounds 3, then the same with --ncu-only",
             "method": "GPU time (kernels.timing.gpu_time_ms) at 4096^3 and 8192^3, every kernel once a round, in 3 "
                       "interleaved rounds in one process; each kernel first checked at 512^3 against NumPy",
             "source": "benchmarks/gemm/RESULTS.md, 'When the k-block prefetch pays' (h200_prefetch_probe.csv, "
                       "h200_prefetch_stalls.csv)"}
PROBE = {
    4096: {
        "128x128x32 4st": {"plain": (357.38, 351.3, 408.02), "prefetch": (328.24, 327.87, 382.64)},
        "128x128x64 3st": {"plain": (357.41, 355.88, 401.06), "prefetch": (385.91, 385.27, 388.73)},
        "128x128x32 8st": {"plain": (243.03, 238.13, 247.36), "prefetch": (307.18, 297.22, 313.01)},
        "64x64x32 4st": {"plain": (256.74, 255.28, 260.16), "prefetch": (260.54, 253.33, 260.74)},
    },
    8192: {
        "128x128x32 4st": {"plain": (367.58, 361.73, 419.56), "prefetch": (349.39, 348.43, 350.57)},
        "128x128x64 3st": {"plain": (362.53, 319.2, 377.26), "prefetch": (379.51, 338.02, 385.77)},
        "128x128x32 8st": {"plain": (279.19, 274.52, 282.35), "prefetch": (329.66, 329.47, 335.33)},
        "64x64x32 4st": {"plain": (222.23, 209.04, 235.94), "prefetch": (246.36, 241.24, 250.84)},
    },
}
PROBE_KERNELS = {
    "128x128x32 4st": {"plain": (212, 2), "prefetch": (230, 2)},
    "128x128x64 3st": {"plain": (232, 2), "prefetch": (240, 2)},
    "128x128x32 8st": {"plain": (210, 1), "prefetch": (230, 1)},
    "64x64x32 4st": {"plain": (103, 4), "prefetch": (112, 4)},
}
PROBE_STALLS = {
    "128x128x32 4st": {
        "plain": {"long_scoreboard": 0.787115, "short_scoreboard": 0.163674, "barrier": 0.104833,
            "math_pipe_throttle": 0.454977, "wait": 2.098848, "mio_throttle": 0.037825, "not_selected":
            0.368486, "selected": 0.999999, "dispatch_stall": 0.262968, "lg_throttle": 0.06957},
        "prefetch": {"long_scoreboard": 0.378117, "short_scoreboard": 0.711504, "barrier": 0.441696,
            "math_pipe_throttle": 0.954975, "wait": 1.501686, "mio_throttle": 0.06719, "not_selected": 0.251285,
            "selected": 1.0, "dispatch_stall": 0.114252, "lg_throttle": 0.046762},
    },
    "128x128x64 3st": {
        "plain": {"long_scoreboard": 0.656206, "short_scoreboard": 0.405271, "barrier": 0.288612,
            "math_pipe_throttle": 0.587063, "wait": 1.759484, "mio_throttle": 0.117084, "not_selected":
            0.329605, "selected": 1.000002, "dispatch_stall": 0.196898, "lg_throttle": 0.068032},
        "prefetch": {"long_scoreboard": 0.139589, "short_scoreboard": 0.180808, "barrier": 0.175354,
            "math_pipe_throttle": 1.28927, "wait": 1.61511, "mio_throttle": 0.071295, "not_selected": 0.368815,
            "selected": 1.0, "dispatch_stall": 0.114854, "lg_throttle": 0.05967},
    },
    "128x128x32 8st": {
        "plain": {"long_scoreboard": 0.392967, "short_scoreboard": 0.505189, "barrier": 0.015649,
            "math_pipe_throttle": 0.0, "wait": 1.994574, "mio_throttle": 0.000343, "not_selected": 0.0,
            "selected": 1.0, "dispatch_stall": 0.05987, "lg_throttle": 0.054605},
        "prefetch": {"long_scoreboard": 0.128341, "short_scoreboard": 0.395261, "barrier": 0.050368,
            "math_pipe_throttle": 0.0, "wait": 1.492029, "mio_throttle": 0.000567, "not_selected": 0.0,
            "selected": 1.0, "dispatch_stall": 0.039527, "lg_throttle": 0.053294},
    },
    "64x64x32 4st": {
        "plain": {"long_scoreboard": 0.449756, "short_scoreboard": 0.470924, "barrier": 0.649439,
            "math_pipe_throttle": 0.707817, "wait": 1.66261, "mio_throttle": 0.302853, "not_selected": 1.015962,
            "selected": 1.000001, "dispatch_stall": 0.601972, "lg_throttle": 0.007099},
        "prefetch": {"long_scoreboard": 0.05529, "short_scoreboard": 1.254611, "barrier": 0.532996, "math_pipe_throttle":
            1.058348, "wait": 1.583784, "mio_throttle": 0.397401, "not_selected": 0.840791, "selected":
            0.999999, "dispatch_stall": 0.652074, "lg_throttle": 0.014143},
    },
}
PROBE_SCHEDULE = {
    "128x128x32 4st": {
        "plain": {
            "strip": ('..w.|..................................................c....c.....c....c...c.ccc.l...l...l...l'
                      '...l...l...ll.lllm.mmmm..m....m.l..mllm..mmmlmmmmlmmmmmmmmmmmmmmmmmmmmmmmmm..m.mmmmmmmmmmmmmmm'
                      'mmmmmmm..'),
            "ldmatrix_to_mma": [30, 26, 24, 21, 18, 15, 41, 38, 52, 53, 56, 47, 38, 40, 22, 21]},
        "prefetch": {
            "strip": ('m....m...m.m..m...m..lm...m..m..m.m..m...m..m.m.m.m.m..m.m.m.m.m.m.m.m.mlm.m.mlm.m....l...ml.m'
                      '.....ml..m.l....lm..m...c.mc.mcm.m.m.m.m...mc...mc.m.cm..m.c..m.c.m....m.m.m..m..w|.m.m.m..ml.'
                      '.ml.m.lm.lmllll.'),
            "ldmatrix_to_mma": [69, 18, 21, 25, 29, 25, 43, 68, 18, 28, 32, 36, 55, 71, 3, 11]},
    },
    "128x128x64 3st": {
        "plain": {
            "strip": ('.w.|...................................................c.....c.......c.....c..c.....c..c......'
                      '...c..c..c..c..c.cccc..l.....l...l...l...l...l...l...l...l...l.llmllmlm.mmmmmm.m.mlm.m.mm..mml'
                      'mmmlmmmmmmm..mmmm..m..mlmmmmmm..m.l.l.ml.lmlmmmmmmmmmmm.m.mlmmm.m.mm.m..m....m..l..mlm.mmmmm..'
                      'lm..l.m..l..l.m.l..m...m...m...m...m...m...m...m...m...m..mmmmmmmmmmm..m.mmmmmmmmmmmmmmmmmmmmm'
                      'mmmmmmmmmmm..'),
            "ldmatrix_to_mma": [50, 36, 32, 33, 34, 32, 30, 28, 62, 60, 69, 84, 77, 148, 138, 28, 23, 13, 64, 55, 47,
                                33, 31, 57, 108, 98, 83, 77, 75, 71, 63, 66]},
        "prefetch": {
            "strip": ('m...m..m.m..m...m...m.lm.m.m.m.mlm.m.m..m.mlm.m.m..m..m..m.m.m.m.ml.m.m.m.m.m....ml.ml......l.'
                      '......l..........c......mc....m.c..m...m...m....m..c.m...m...m..m.c.m...m..m...m.c.m..m.m.mc.m'
                      '.m.m.mc.m.mc.m.m.mc.m.mc.m....c.......c.......c.......c......c.....l..lllllmlmlmlmmlmlmlmmlmlm'
                      'lmmlm.mmm.m.mw|m.m.m.m.m..m.m..m.m.m.m.m.m.m.m.m..m.m.m.m..m.m.mlm.mlm.mlm.m.m.ml.m.ml.m.m.m.m'
                      '.ml.m.mlmlmmmm.'),
            "ldmatrix_to_mma": [59, 97, 94, 15, 36, 62, 85, 96, 8, 5, 8, 10, 13, 15, 26, 42, 57, 54, 56, 59, 60, 63,
                                77, 92, 70, 83, 98, 29, 31, 13, 20, 26]},
    },
    "128x128x32 8st": {
        "plain": {
            "strip": ('..w.|.............................................c...........c.....c.....c...cccc.l...l...l..'
                      '.l...l...l...ll.lllm.mmmm..m....m.l..mllm..mmmlmmmmlmmmmmmmmmmmmmmmmmmmmmmmmm..m.mmmmmmmmmmmmm'
                      'mmmmmmmmm..'),
            "ldmatrix_to_mma": [30, 26, 24, 21, 18, 15, 41, 38, 52, 53, 56, 47, 38, 40, 22, 21]},
        "prefetch": {
            "strip": ('m....m...m.m..m..m....ml...m...m..m.lm..m..m.m..m.m.m.m.m..m.m...m..m.m.mlm.m.mlm.m.m.m.m.m...'
                      'm...ml.ml.ml....l.........c..m.mmm.mc.m.cm...mc..mc.m.mc.m...m.c..m.c..m....m.m.m.m.w|.m.m.m..'
                      'ml..ml.m.lm.lllll.'),
            "ldmatrix_to_mma": [65, 65, 15, 15, 24, 24, 43, 66, 17, 27, 31, 37, 57, 76, 3, 11]},
    },
    "64x64x32 4st": {
        "plain": {
            "strip": ('.......................w.............|..............................c....c.cc.l...l..l..l.....'
                      '..llllwmmmmmmmmm.mmmmmmm.|..................................c....c.cc....................l...l'
                      '..llllllmmmmmmmmmmmmmm.m......m..........'),
            "ldmatrix_to_mma": [23, 19, 17, 17, 13, 12, 13, 15, 13, 13, 6, 7, 11, 10, 11, 12]},
    },
}
PROBE_HOTSPOTS = {
    "128x128x32 4st": {
        "plain": {
            "long_scoreboard": (81, 0.711, "LDSM.16.MT88.4 R36, [R50]",
                "writes R38, which the LDGSTS 2 instructions earlier reads"),
            "short_scoreboard": (111, 0.429, "HMMA.16816.F32 R96, R172, R36, R96",
                "reads R172, which the LDSM 26 instructions earlier writes"),
        },
        "prefetch": {
            "long_scoreboard": (135, 0.48, "@!P0 VIADD R212, R218, 0x4000",
                "writes R212, which the LDGSTS 11 instructions earlier reads"),
            "short_scoreboard": (0, 0.851, "HMMA.16816.F32 R4, R132, R136, R4",
                "reads R136, which the LDSM 3 instructions earlier writes"),
        },
    },
    "128x128x32 8st": {
        "plain": {
            "long_scoreboard": (83, 0.909, "LDSM.16.MT88.4 R36, [R50]",
                "writes R38, which the LDGSTS 2 instructions earlier reads"),
            "short_scoreboard": (118, 0.396, "HMMA.16816.F32 R32, R172, R44, R32",
                "reads R44, which the LDSM 15 instructions earlier writes"),
        },
        "prefetch": {
            "long_scoreboard": (162, 0.315, "@!P0 LDGSTS.E.BYPASS.LTC128B.128 desc[UR14][R226.64], [R219+0x11800]",
                None),
            "short_scoreboard": (0, 0.888, "HMMA.16816.F32 R4, R132, R136, R4",
                "reads R136, which the LDSM 3 instructions earlier writes"),
        },
    },
}

PROBE_SCHEDULE_SOURCE = ("the SASS the H200 ran (numba-cuda's inspect_sass there; the cubin says ptxas of CUDA 13.0, "
                         "V13.0.88, -arch sm_90a), read by benchmarks/gemm/sass_schedule.py --sass; the 64x64x32 4st "
                         "prefetch kernel's did not come back from the machine")


def recorded(name):
    """The recorded TFLOP/s of a rung (a LADDER name or a CSV name), or None if it was not measured."""
    name = CSV_NAME.get(name, name)
    return next((tf for n, _, tf, _ in ROWS if n == name), None)


def recorded_regs(name):
    """Registers per thread of a rung's kernel in the recorded SASS, or None."""
    name = CSV_NAME.get(name, name)
    return next((r for n, _, _, r in ROWS if n == name), None)
