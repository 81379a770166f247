"""The exercise checkers, exercise by exercise, through both doors: the notebook's call (a Python value or
text) and the live page's answer box (cutelite.teach.live.check with the spec the notebook announced).

For every exercise of chapters 1-10: each equivalent spelling a reader might type passes (static or dynamic
ints, spaces, tuple or list, C++ spelling, Python constructor spelling, the CuTe DSL's spelling), each
plausible wrong answer gets its hint, no hint names the expected answer, and nothing a reader types raises.
Expected answers are worked out here by hand, from the chapters' definitions (row-major, colexicographic
order, the PTX fragment formulas, byte counts), not by the checkers.
"""

import json

import numpy as np
import pytest

from cutelite import Layout, Swizzle, composition, dyn
from cutelite.bank_conflicts import analyse, analyse_ldmatrix
from cutelite.teach import announce, exercises as ex, live
from cutelite.teach.answers import AnswerError, Word, read

from hint_leaks import leak

# ---- the exercises, as the chapters call their checkers -----------------------------------------------------
column0 = [(i, 0) for i in range(32)]
tile64 = Layout((32, 64), (64, 1))
t128 = Layout((16, 128), (128, 1))
rows_wide = [(i % 8 + 8 * (i // 8 % 2), 8 * (i // 16)) for i in range(32)]
TV_EX = Layout(((4, 2), (2, 2)), ((1, 16), (4, 8)))

# key -> (the chapter's check, the expected value worked out by hand; None where any of several answers is right)
EXERCISES = {
    "ch1 ex1": (lambda a: ex.check_layout_answer(a, Layout((8, 4), (4, 1)), "exercise 1"), Layout((8, 4), (4, 1))),
    # (4,(3,2)):(3,(1,16)): the last coordinate reaches 3*3 + 2*1 + 1*16 = 27; 24 coordinates, 12..15 unreached
    "ch1 ex2": (lambda a: ex.check_value(a, 28, "exercise 2", hints={
        24: "that is size, the number of coordinates", 27: "that is the largest offset; cosize is one more"}), 28),
    "ch1 ex3": (lambda a: ex.check_coordinates_answer(a, 13, (4, (2, 3)), "exercise 3"), ((1, 3), (1, (1, 1)))),
    "ch1 ex4": (lambda a: ex.check_offsets_answer(a, Layout((2, (2, 2)), (1, (4, 2))), "exercise 4"),
                ((0, 4, 2, 6), (1, 5, 3, 7))),
    "ch2 ex1": (lambda a: ex.check_layout_answer(a, composition(Layout((4, 8), (8, 1)), Layout((2, 2), (1, 4))),
                                                 "exercise 1"), Layout((2, 2), (8, 1))),
    # 2:4 reaches 0 and 4: the gap below 4 is 4:1, and the block of 8 repeats 3 times up to 24
    "ch2 ex2": (lambda a: ex.check_layout_answer(a, Layout((4, 3), (1, 8)), "exercise 2"), Layout((4, 3), (1, 8))),
    "ch2 ex3": (lambda a: ex.check_offsets_answer(a, [2, 3, 8, 9, 14, 15, 20, 21], "exercise 3"),
                (2, 3, 8, 9, 14, 15, 20, 21)),
    # A = (6,4):(1,8): 4:2 takes 3 elements a column and 4 is no multiple of 3 (the Shape Divisibility Condition)
    "ch2 ex4": (lambda a: ex.check_refused_answer(a, Layout((6, 4), (1, 8)), ("4:4", "4:2", "2:12"), "exercise 4"),
                Layout(4, 2)),
    # row-major 8x8: tile 1 by (2, 4) is rows 2..3 of columns 0..3; by (2,4):(1,2) it is indices 8..15, column 1
    "ch2 ex5": (lambda a: ex.check_value(a, ((16, 24, 17, 25, 18, 26, 19, 27), tuple(range(1, 64, 8))), "exercise 5",
                                         hints={(tuple(range(1, 64, 8)), (16, 24, 17, 25, 18, 26, 19, 27)):
                                                "the two are swapped"}),
                ((16, 24, 17, 25, 18, 26, 19, 27), tuple(range(1, 64, 8)))),
    "ch2 ex6": (lambda a: ex.check_layout_answer(a, Layout(((2, 3), (2, 2)), ((1, 4), (2, 12))), "exercise 6"),
                Layout(((2, 3), (2, 2)), ((1, 4), (2, 12)))),
    # tile (1, 3) of 4 x 6 tiles starts at (4, 18): 4 + 8 * 18
    "ch3 corner": (lambda a: ex.check_value(a, 148, "corner", hints={25: "tile (1, 3) starts at row 1*4",
                                                                    114: "that is the row-major index"}), 148),
    # thread 22 of a column-major (4, 16): (22 % 4, 22 // 4); 1024 elements over 64 threads
    "ch3 start": (lambda a: ex.check_value(a, (2, 5), "thread 22 starts at", hints={(5, 2): "m comes first"}), (2, 5)),
    "ch3 count": (lambda a: ex.check_value(a, 16, "elements per thread", hints={32: "the share of 32 threads"}), 16),
    "ch3 tv": (lambda a: ex.check_layout_answer(a, Layout((8, 4), (4, 1)), "TV layout"), Layout((8, 4), (4, 1))),
    # 22 = 16*1 + 4*1 + 2: t1 = 1, v0 = 1, t0 = 2 -> thread 2 + 4*1, value 1
    "ch3 owner": (lambda a: ex.check_owner_answer(a, TV_EX, (2, 5), (4, 8), "owner of (2, 5)"), (6, 1)),
    "ch4 ex1": (lambda a: ex.check_swizzle_answer(a, lambda sw: analyse(composition(sw, tile64), column0, 4, 2),
                                                  "exercise 1"), None),
    "ch4 ex2": (lambda a: ex.check_value(a, 8, "exercise 2", hints={4: "that is the ideal",
                                                                    16: "count per quarter-warp"}), 8),
    # Sw<3,2,3> on 64-float rows reads a column bit and row bits 0-1: rows 0 and 4 collide; S = 4 reads rows 0-2
    "ch4 ex3": (lambda a: ex.check_value(a, (4, 4), "exercise 3", hints={
        (4, 3): "the right lane; S = 3 is the swizzle that conflicts", (1, 4): "lane 1 is row 1"}), (4, 4)),
    "ch4 ex4": (lambda a: ex.check_swizzle_answer(a, lambda sw: analyse_ldmatrix(composition(sw, t128), rows_wide),
                                                  "exercise 4"), None),
    # the PTX ISA's m16n8k16 A fragment: (g + 8 (i>>1 & 1), 2t + (i & 1) + 8 (i >> 2)) for lane 13: g = 3, t = 1
    "ch5 a": (lambda a: ex.check_value(a, [(3, 2), (3, 3), (11, 2), (11, 3), (3, 10), (3, 11), (11, 10), (11, 11)],
                                       "A fragment of lane 13"),
              ((3, 2), (3, 3), (11, 2), (11, 3), (3, 10), (3, 11), (11, 10), (11, 11))),
    # D(5, 6) of m8n8k4: lane bits 0 and 1 set, second quad (16 + 4q + 3), value 4; quad-pair 2: lane 27
    "ch5 qp": (lambda a: ex.check_value(a, (27, 4), "owner of D(5, 6) in quad-pair 2", hints={
        (19, 4): "that lane is in quad-pair 0", (11, 4): "rows 4-7 belong to the second quad of a pair"}), (27, 4)),
    "ch5 col": (lambda a: ex.check_value(a, "garbage", "what a column-major A becomes", hints={
        "A.T": "A.T is 8x16"}), "garbage"),
    "ch6 pa": (lambda a: ex.check_partition_shape_answer(a, ((2, 2, 2), 3, 4), "partition_A of 96x64"),
               ((2, 2, 2), 3, 4)),
    "ch6 atom": (lambda a: ex.check_copy_atom_answer(a, "SM75_U16x4_LDSM_T", "copy atom for an N-major B"),
                 "SM75_U16x4_LDSM_T"),
    "ch6 tt": (lambda a: ex.check_tiled_mma_answer(a, (256, (32, 64, 16)), 32, (16, 8, 16), (2, 4, 1)),
               (256, (32, 64, 16))),
    "ch7 ex1": (lambda a: ex.check_budget_answer(a, (49152, 64), stages=4, a_bytes=4 * 128 * 32 * 2, name="exercise 1"),
                (49152, 64)),
    # 128 x 32 halves of A and 64 x 32 of B over 128 threads, 8 halves a cp.async: 4 + 2
    "ch7 ex2": (lambda a: ex.check_value(a, 6, "exercise 2", hints={
        4: "that is A's share: B is copied too", 2: "that is B's share", 48: "that counts halves"}), 6),
    # two groups a k-tile: the groups of the STAGES - 2 newer k-tiles may stay in flight
    "ch7 ex3": (lambda a: ex.check_wait_group_answer(a, 3, "exercise 3", groups=2), 2),
    "ch8 lbo": (lambda a: ex.check_lbo_sbo_answer(a, (1, 32), lbo_used=False), None),
    "ch8 lbo used": (lambda a: ex.check_lbo_sbo_answer(a, (1, 32)), (1, 32)),
    "ch8 tx": (lambda a: ex.check_expect_tx_answer(a, 64 * 64 * 2 + 128 * 64 * 2, 64 * 64 * 2), 24576),
    # 3 stages, k-tile 10: stage 1, filled before by k-tiles 1, 4, 7: phase 3, parity 1
    "ch8 phase": (lambda a: ex.check_phase_answer(a, (1, 1)), (1, 1)),
    # release of kt - 2 after wait_group 2: k-tile kt's stage is freed in iteration kt - S + 2 <= kt - 1
    "ch8 stages": (lambda a: ex.check_pipeline_stages_answer(a, wait_group=2, release_lag=2), 3),
    "ch8 regs": (lambda a: ex.check_setmaxnreg_answer(a, 152, 128), 152),
    "ch9 path": (lambda a: ex.check_value(a, 15, "size(X, mode=[1, 0])", hints={
        30: "that is mode=[1]", 3: "one level too deep", 120: "a path"}), 15),
    "ch9 complement": (lambda a: ex.check_layout_answer(a, Layout(3, 2), "complement(A)", hints={
        Layout((3, 2), (2, 12)): "that is complement(A, 24), chapter 2's example"}), Layout(3, 2)),
    # make_tiled_copy((16,8):(8,1), (1,8)) on a 16 x 64 tile, column-major: thread t at row t // 8, column
    # 8 (t % 8), so thread mode 0 strides 8 columns (128), mode 1 one row (1); the 8 values one column (16)
    "ch9 tv": (lambda a: ex.check_layout_answer(a, Layout(((8, 16), 8), ((128, 1), 16)), "layout_tv_tiled"),
               Layout(((8, 16), 8), ((128, 1), 16))),
    # 2 x 8 heads of 2048 x 2048 scores, 6 passes (S written, masked: read + written, read, P written, read), plus
    # Q, K, V, O of 2 x 8 x 2048 x 64 each; 2 bytes an element: (6 * 67108864 + 4 * 2097152) * 2
    "ch10 bytes": (lambda a: ex.check_value(a, 822083584, "naive bytes", hints={
        553648128: "that has no mask", 1644167168: "each fp16 element is 2 bytes",
        805306368: "Q, K and V are read and O written too"}), 822083584),
    # block maxima 6 | 9 | 9 | 12: running max 6, 9, 9, 12; e = m_old - m_new = -3, 0, -3
    "ch10 rescale": (lambda a: ex.check_value(a, (-3, 0, -3), "rescale exponents", hints={
        (9, 9, 12): "those are the running maxima", (3, 0, 3): "e is never positive"}), (-3, 0, -3)),
    # S_k - S_q = 64: tile (m, n) is full when its last key 32n + 31 <= its first query 32m + 64 (n <= m + 1),
    # skipped when its first key 32n > its last query 32m + 31 + 64 (n >= m + 3): 2 + 3 + 4 full, one partial
    # a row, 3 + 1 + 0 skipped
    "ch10 tiles": (lambda a: ex.check_value(a, (9, 3, 3), "(full, partial, skipped)"), (9, 3, 3)),
    # the PTX ISA's m16n8 C fragment: lane l holds rows l // 4 and l // 4 + 8, columns 2 (l % 4) + {0, 1} of each n8
    # tile; fragment ((2, 2), 1, 4): value 9 = column + 1, row + 0, n8 tile 2. Thread 37 = warp 1 (rows 16-31),
    # lane 5 (row 1, column 2): (16 + 1, 16 + 2 + 1)
    "ch10 element": (lambda a: ex.check_value(a, (17, 19), "(row, column) of thread 37's value 9", hints={
        (1, 19): "thread 37 is a lane of warp 1", (17, 3): "the last mode of the fragment runs over the n8 tiles",
        (19, 17): "the two are swapped"}), (17, 19)),
    # row 21 = row 5 of warp 1: lanes 4 * 5 .. 4 * 5 + 3 of threads 32-63
    "ch10 row": (lambda a: ex.check_value(a, (52, 53, 54, 55), "threads of row 21", hints={
        (20, 21, 22, 23): "those are lanes of warp 0", (48, 49, 50, 51): "one row too low"}), (52, 53, 54, 55)),
    # warps along N: lanes 0-3 of each of the 2 warps hold row 0
    "ch10 warps": (lambda a: ex.check_value(a, 8, "threads holding row 0", hints={4: "that is one warp's lanes"}),
                   8),
    # e4m3 0x5A = 0 | 1011 | 010: 1.25 x 2^(11 - 7) = 20; as e5m2, 0 | 10110 | 10: 1.5 x 2^(22 - 15) = 192
    "ch11 e4m3": (lambda a: ex.check_value(a, 20, "e4m3 0x5A", hints={192: "that reads the byte as e5m2"}), 20),
    # a 128 x 256 stage: 384 rows of 128 bytes + two 8-byte mbarriers = 49,168 bytes; 232,448 (CUDA's sm_90
    # opt-in limit) holds 4
    "ch11 stages": (lambda a: ex.check_value(a, 4, "stages", hints={3: "a stage of B is 256 rows"}), 4),
    # 128 x 128 blocks of 512 x 1024: 4 x 8
    "ch11 scales": (lambda a: ex.check_value(a, 32, "scales of B", hints={
        524288: "that is size: the elements", 4096: "that is 1 x 128 blocks"}), 32),
}

# Equivalent answers: each must pass. Strings are what a reader types (in a cell or the answer box).
RIGHT = {
    "ch1 ex1": [Layout((8, 4), (4, 1)), Layout((dyn(8), dyn(4)), (dyn(4), 1)), ((8, 4), (4, 1)), [[8, 4], [4, 1]],
                "(8,4):(4,1)", "(_8,_4):(_4,_1)", " ( 8 , 4 ) : ( 4 , 1 ) ", "Layout((8, 4), (4, 1))",
                "make_layout((8, 4), LayoutRight)", "make_layout(make_shape(8, 4), LayoutRight{})",
                "cute::make_layout(cute::make_shape(Int<8>{}, Int<4>{}), cute::make_stride(_4{}, _1{}))",
                "Layout<Shape<_8,_4>, Stride<_4,_1>>", "((8, 4), (4, 1))", "[[8, 4], [4, 1]]",
                "cute.make_layout((8, 4), stride=(4, 1))", "cutlass.cute.make_layout((8,4), stride=(4,1))"],
    "ch1 ex2": [28, np.int64(28), dyn(28), "28", "_28", "Int<28>{}", "3*3 + 2*1 + 1*16 + 1"],
    "ch1 ex3": [((1, 3), (1, (1, 1))), [[1, 3], [1, [1, 1]]], [(1, 3), (1, (1, 1))], "((1, 3), (1, (1, 1)))",
                "[[1,3],[1,[1,1]]]", "(1,3), (1,(1,1))",
                "make_tuple(make_coord(1, 3), make_coord(1, make_coord(1, 1)))"],
    "ch1 ex4": [[[0, 4, 2, 6], [1, 5, 3, 7]], np.array([[0, 4, 2, 6], [1, 5, 3, 7]]), ((0, 4, 2, 6), (1, 5, 3, 7)),
                [0, 1, 4, 5, 2, 3, 6, 7], "[[0, 4, 2, 6], [1, 5, 3, 7]]", "((0,4,2,6),(1,5,3,7))",
                "[0, 1, 4, 5, 2, 3, 6, 7]"],
    "ch2 ex1": [Layout((2, 2), (8, 1)), "(2,2):(8,1)", "(_2,_2):(_8,_1)",
                "make_layout(make_shape(2,2), make_stride(8,1))", "cute.make_layout((2, 2), stride=(8, 1))"],
    "ch2 ex2": [Layout((4, 3), (1, 8)), "(4,3):(1,8)", "((4,3),(1,8))", "Layout((4, 3), (1, 8))",
                "cute.make_layout((4, 3), stride=(1, 8))"],
    "ch2 ex3": [[2, 3, 8, 9, 14, 15, 20, 21], (2, 3, 8, 9, 14, 15, 20, 21), np.array([2, 3, 8, 9, 14, 15, 20, 21]),
                "[2, 3, 8, 9, 14, 15, 20, 21]", "2, 3, 8, 9, 14, 15, 20, 21"],
    "ch2 ex4": ["4:2", "_4:_2", "4 : 2", "Layout(4, 2)", Layout(4, 2), Layout(dyn(4), dyn(2)), "'4:2'",
                "make_layout(4, 2)", "cute.make_layout(4, stride=2)"],
    "ch2 ex5": [([16, 24, 17, 25, 18, 26, 19, 27], [1, 9, 17, 25, 33, 41, 49, 57]),
                "([16, 24, 17, 25, 18, 26, 19, 27], [1, 9, 17, 25, 33, 41, 49, 57])"],
    "ch2 ex6": [Layout(((2, 3), (2, 2)), ((1, 4), (2, 12))), "((2,3),(2,2)):((1,4),(2,12))",
                "cute.make_layout(((2, 3), (2, 2)), stride=((1, 4), (2, 12)))"],
    "ch3 corner": [148, "148", "4*1 + 18*8", "_148"],
    "ch3 start": [(2, 5), [2, 5], np.array([2, 5]), "(2, 5)", "[2,5]", "2, 5", "make_coord(2, 5)"],
    "ch3 count": [16, "16", "4 * 4"],
    "ch3 tv": [Layout((8, 4), (4, 1)), "(8,4):(4,1)", "((8,4),(4,1))", "Layout((8,4),(4,1))",
               "cute.make_layout((8, 4), stride=(4, 1))"],
    "ch3 owner": [(6, 1), [6, 1], "(6, 1)", "6,1"],
    "ch4 ex1": [(4, 1, 5), [4, 1, 5], Swizzle(4, 1, 5), "(4, 1, 5)", "Sw<4,1,5>", "Swizzle(4, 1, 5)",
                "cute::Swizzle<4, 1, 5>{}", "Swizzle<4,1,5>", "S<4,1,5>", "cute.make_swizzle(4, 1, 5)", "Sw<5,1,5>"],
    "ch4 ex2": [8, "8", np.int32(8)],
    "ch4 ex3": [(4, 4), [4, 4], "(4, 4)", "[4, 4]"],
    "ch4 ex4": [(3, 3, 4), "Sw<3,3,4>", "Swizzle(3, 3, 4)", Swizzle(3, 3, 4), "Sw<4,3,4>",
                "cute.make_swizzle(3, 3, 4)"],
    "ch5 a": [[(3, 2), (3, 3), (11, 2), (11, 3), (3, 10), (3, 11), (11, 10), (11, 11)],
              "[(3, 2), (3, 3), (11, 2), (11, 3), (3, 10), (3, 11), (11, 10), (11, 11)]",
              "[[3,2],[3,3],[11,2],[11,3],[3,10],[3,11],[11,10],[11,11]]"],
    "ch5 qp": [(27, 4), [27, 4], np.array([27, 4]), "(27, 4)", "27, 4"],
    "ch5 col": ["garbage", "'garbage'", '"garbage"', "Garbage", " garbage "],
    "ch6 pa": [((2, 2, 2), 3, 4), [[2, 2, 2], 3, 4], "((2,2,2),3,4)", "((_2,_2,_2),_3,_4)",
               "make_shape(make_shape(2, 2, 2), 3, 4)", "Shape<Shape<_2,_2,_2>,_3,_4>"],
    "ch6 atom": ["SM75_U16x4_LDSM_T", "cute::SM75_U16x4_LDSM_T", "'SM75_U16x4_LDSM_T'", "SM75_U16x4_LDSM_T{}"],
    "ch6 tt": [(256, (32, 64, 16)), [256, [32, 64, 16]], "(256, (32, 64, 16))", "256, (32,64,16)"],
    "ch7 ex1": [(49152, 64), [49152, 64], "(49152, 64)", "48*1024, 64"],
    "ch7 ex2": [6, "6", "_6", "4 + 2", np.int64(6)],
    "ch7 ex3": [2, "2", "_2"],
    # K-major SW64: PTX does not read LBO, so any LBO that fits its 14 bits is as right as CuTe's 1
    "ch8 lbo": [(1, 32), [1, 32], "(1, 32)", (0, 32), "(2, 32)", "(16383, _32)"],
    "ch8 lbo used": [(1, 32), "(1, 32)"],
    "ch8 tx": [24576, "24576", "64*64*2 + 128*64*2"],
    "ch8 phase": [(1, 1), [1, 1], "(1, 1)"],
    "ch8 stages": [3, "3", "_3", "Int<3>{}"],
    # (65536 - 128 * 40) registers over 3 * 128 consumer threads: 157.3, a multiple of 8 down: 152
    "ch8 regs": [152, "152", "19 * 8"],
    "ch9 path": [15, "15", "3 * 5", "_15"],
    "ch9 complement": ["3:2", "_3:_2", "Layout(3, 2)", "make_layout(3, 2)", "cute.make_layout(3, stride=2)",
                       Layout(3, 2)],
    "ch9 tv": ["((8,16),8):((128,1),16)", "cute.make_layout(((8, 16), 8), stride=((128, 1), 16))",
               Layout(((8, 16), 8), ((128, 1), 16))],
    "ch10 bytes": [822083584, "822083584", "(6 * 2 * 8 * 2048 * 2048 + 4 * 2 * 8 * 2048 * 64) * 2"],
    "ch10 rescale": [(-3, 0, -3), [-3, 0, -3], "(-3, 0, -3)", "-3, 0, -3", "[-3,0,-3]"],
    "ch10 tiles": [(9, 3, 3), [9, 3, 3], "(9, 3, 3)", "9, 3, 3"],
    "ch10 element": [(17, 19), [17, 19], "(17, 19)", "17, 19", "(16 + 1, 16 + 3)"],
    "ch10 row": [(52, 53, 54, 55), [52, 53, 54, 55], "(52, 53, 54, 55)", "52, 53, 54, 55"],
    "ch10 warps": [8, "8", "2 * 4"],
    "ch11 e4m3": [20, "20", "5 * 4"],
    "ch11 stages": [4, "4"],
    "ch11 scales": [32, "32", "4 * 8"],
}

# Plausible wrong answers and (a piece of) the hint each must get.
WRONG = {
    "ch1 ex1": [("(8,4):(1,8)", "column-major"), ("(4,8):(8,1)", "mode 0 has shape _4: its size is too small"),
                ("(8,4)", "the shape alone"), ("(8,4):(4,2)", "mode 1 (_4): its stride _2 is too large"),
                ("(8,4):(4,-1)", "the wrong sign"), ("(8,4", "cannot read"),
                ("(2,2,2,4):(4,4,4,1)", "rank 4 is too large")],
    "ch1 ex2": [(27, "largest offset"), (24, "that is size"), (29, "too large"), ((28,), "expected a whole number")],
    "ch1 ex3": [(((2, 1), (2, (0, 1))), "row-major"), (((1, 3), (1, (1, 0))), "split n = 3"),
                (((3, 1), (3, (1, 0))), "m and n are swapped"), (((1, (1, 1)), (1, 3)), "the other order"),
                ((1, 3), "give both"), (13, "expected a tuple of 2 entries")],
    "ch1 ex4": [([[0, 2, 4, 6], [1, 3, 5, 7]], "(0,1), 2, is too small"),
                ([[0, 1], [4, 5], [2, 3], [6, 7]], "transposed"), ([0, 4, 2, 6, 1, 5, 3, 7], "row by row"),
                ([1, 2], "you have 2 offsets: too few"), ([[0, 4, 2, 6]], "1 rows: too few")],
    "ch2 ex1": [("(2,2):(1,4)", "mode 0 (_2): its stride _1 is too small"), ("(4,4):(8,1)", "size 16 is too large"),
                ("(2,2):(1,8)", "the right strides in the wrong modes")],
    "ch2 ex2": [("(4,3):(1,4)", "mode 1 (_3): its stride _4 is too small"), ("(4,2):(1,8)", "size 8 is too small"),
                ("(3,4):(8,1)", "mode 0 has shape _3: its size is too small"), ("(4,3):(8,1)", "wrong modes")],
    "ch2 ex3": [([2, 8, 14, 20, 3, 9, 15, 21], "wrong order"),
                ([0, 1, 6, 7, 12, 13, 18, 19], "index 0, 0, is too small")],
    "ch2 ex4": [("4:4", "not A o B"), ("2:12", "R(i) == A(B(i)) for every i"), ("Layout(2, 12)", "for every i"),
                ("5:1", "size 5"), ("7", "expected a layout")],
    "ch2 ex5": [(([1, 9, 17, 25, 33, 41, 49, 57], [16, 24, 17, 25, 18, 26, 19, 27]), "swapped"),
                (([16, 17, 18, 19, 24, 25, 26, 27], [1, 9, 17, 25, 33, 41, 49, 57]), "entry 0")],
    "ch2 ex6": [("((2,3),(2,2)):((1,2),(2,12))", "sub-mode 1 of its stride (_1,_2) is too small"),
                ("((2,3),(2,2)):((1,4),(2,8))", "too small"), ("(6,4):(1,6)", "mode 0 has shape _6")],
    "ch3 corner": [(25, "starts at row 1*4"), (114, "row-major"), (100, "too small")],
    "ch3 start": [((5, 2), "m comes first"), ((2, 6), "entry 1, 6, is too large")],
    "ch3 count": [(32, "the share of 32 threads"), (1024, "too large")],
    "ch3 tv": [("(8,4):(1,8)", "column-major"), ("(4,8):(1,4)", "mode 0 has shape _4")],
    "ch3 owner": [((1, 6), "(value, thread)"), (14, "1-D (thread, value) index"),
                  (((2, 1), (1, 0)), "coordinates in the shapes"), ((5, 1), "row-major")],
    "ch4 ex1": [((3, 1, 5), "still needs"), ((5, 0, 6), "not aligned"), ((3, 0, 2), "abs(SShift)"),
                (5, "expected a swizzle"), ((1, 2, 3, 4), "expected a swizzle"), ("Sw<9,9,9>", "outside the range"),
                ("Sw<4,1,5> o _0 o (_32,_64):(_64,_1)", "swizzle alone")],
    "ch4 ex2": [(4, "ideal"), (7, "too small"), (16, "count per quarter-warp")],
    "ch4 ex3": [((1, 4), "lane 1 is row 1"), ((4, 3), "S = 3 is the swizzle"), ((4, 5), "entry 1, 5, is too large")],
    "ch4 ex4": [((3, 3, 3), "still needs"), ((2, 3, 4), "still needs")],
    "ch5 a": [([(2, 3), (3, 3), (2, 11), (3, 11), (10, 3), (11, 3), (10, 11), (11, 11)], "every entry is reversed"),
              ([(3, 2), (3, 3), (11, 2), (11, 3)], "you have 4 entries"),
              ([(3, 2), (3, 3), (11, 2), (11, 3), (3, 4), (3, 5), (11, 4), (11, 5)], "entry 4")],
    "ch5 qp": [((19, 4), "quad-pair 0"), ((11, 4), "second quad"), ((4, 27), "reverse order"),
               ((27, 5), "entry 1, 5, is too large")],
    "ch5 col": [("A.T", "A.T is 8x16"), ("A", "'A' is not it"), (5, "expected a word")],
    "ch6 pa": [((8, 3, 4), "atom's value shape (a nested shape)"), (((2, 2, 2), 3), "you have 2 entries"),
               (((2, 2, 2), 4, 3), "swapped")],
    "ch6 atom": [("SM75_U32x2_LDSM_N", "without .trans"), ("cute::SM75_U16x8_LDSM_T", "more than one atom call"),
                 ("SM75_U16x2_LDSM_T", "fewer than one atom call"), ("UniversalCopy<uint128_t>", "ONE thread")],
    "ch6 tt": [((8, (32, 64, 16)), "number of atoms"), ((256, (32, 32, 16)), "permutation")],
    "ch7 ex1": [((24576, 64), "counts elements"), ((49152, 2048), "per warp")],
    "ch7 ex2": [(4, "A's share"), (2, "B's share"), (48, "counts halves"), (8, "too large")],
    "ch7 ex3": [(3, "the bug"), (4, "the bug"), (1, "counts groups, not k-tiles"), (0, "no longer overlap"),
                (6, "never waits")],
    "ch8 lbo": [((32, 1), "swapped"), ((16, 512), "bytes"), ((1, 256), "elements"), ((1, 64), "SBO 64"),
                ((16384, 32), "14-bit"), (32, "expected a pair")],
    "ch8 lbo used": [((2, 32), "entry 0"), ((32, 1), "swapped")],
    "ch8 tx": [(8192, "A box only"), (12288, "elements")],
    "ch8 phase": [((1, 0), "flipped")],
    "ch8 stages": [(2, "deadlock"), (1, "deadlock"), (4, "not the fewest"), (9, "from 1 to 8"),
                   ((3, 1), "stages from")],
    "ch8 regs": [(128, "launch cap"), (157, "multiples of 8"), (160, "one step too many"), (256, "does not have"),
                 (144, "too small")],
    "ch9 path": [(30, "mode=[1]"), (3, "one level too deep"), (120, "a path"), (16, "too large")],
    "ch9 complement": [("(3,2):(2,12)", "chapter 2's example"), ("3:1", "its stride _1 is too small"),
                       ("8", "expected a layout")],
    "ch9 tv": [("((8,16),8):((1,128),16)", "wrong modes"), ("((8,16),8):((128,1),8)", "too small")],
    "ch10 bytes": [(553648128, "no mask"), (1644167168, "2 bytes"), (805306368, "O written too"),
                   (822083585, "too large")],
    "ch10 rescale": [((9, 9, 12), "running maxima"), ((3, 0, 3), "never positive"), ((-3, -3, -3), "entry 1"),
                     ((-3, 0), "3 entries")],
    "ch10 tiles": [((3, 3, 9), "reverse order"), ((12, 3, 0), "entry 0"), ((9, 3), "3 entries")],
    "ch10 element": [((1, 19), "warp 1"), ((17, 3), "n8 tiles"), ((19, 17), "swapped"), ((17, 18), "entry 1")],
    "ch10 row": [((20, 21, 22, 23), "warp 0"), ((48, 49, 50, 51), "one row too low"), ((52, 53), "4 entries")],
    "ch10 warps": [(4, "one warp's lanes"), (16, "too large")],
    "ch11 e4m3": [(192, "as e5m2"), (40, "too large")],
    "ch11 stages": [(3, "256 rows"), (7, "too large")],
    "ch11 scales": [(524288, "that is size"), (4096, "1 x 128 blocks"), (16, "too small")],
}

class Unshowable:
    """A reader's object whose repr fails."""
    def __repr__(self):
        raise RuntimeError("no repr")


class Incomparable:
    """A reader's object whose == fails."""
    def __eq__(self, other):
        raise RuntimeError("no ==")
    __hash__ = object.__hash__


class Unreadable:
    """A reader's object that fails when asked anything (here: whether it is an array, tolist)."""
    def __getattr__(self, name):
        raise RuntimeError("no " + name)


def nested(depth):
    """[[[...]]], `depth` lists deep."""
    value = []
    for _ in range(depth - 1):
        value = [value]
    return value


loop = [1]
loop.append(loop)   # a list that holds itself

# What else a reader might type: never an exception, always one verdict line.
JUNK = [5, (1, 2, 3, 4), [], (), {}, 1.5, True, "", "   ", "(", ")", "[[", "abc", "1.5", "(1,2):(3)", "_", "5//0",
        "x" * 5000, "(" * 400 + "1" + ")" * 400, "-" * 300 + "1", "٣", "Layout(0)", "Sw<1,2>", "Swizzle(a, b, c)",
        "make_layout()", "'unterminated", "9" * 900, Layout((2, 2)), Swizzle(1, 0, 1), np.zeros((2, 2)), object(),
        nested(1000), tuple(nested(1000)), loop, {"a": nested(1000)}, "[" * 1000 + "]" * 1000, 10 ** 5000,
        Unshowable(), [Unshowable(), 1], np.array([Unshowable(), 1], dtype=object), Incomparable(),
        (Incomparable(), 1), [Incomparable()] * 8, Unreadable()]


@pytest.fixture
def spec_of(monkeypatch):
    """The spec each exercise announces when its answer is None (what the page's answer box is built from)."""
    def announced(key):
        specs = []
        monkeypatch.setattr(announce, "announce", specs.append)
        EXERCISES[key][0](None)
        monkeypatch.undo()
        assert len(specs) == 1 and specs[0]["live"] == "exercise", key
        return json.dumps(specs[0])
    return announced


def notebook(capsys, key, answer):
    ok = EXERCISES[key][0](answer)
    out = capsys.readouterr().out.strip()
    assert isinstance(ok, bool) and len(out.splitlines()) == 1, (key, answer, out)
    return ok, out


def as_text(answer):
    """What a reader types for a Python value (the answer box takes text only)."""
    if isinstance(answer, str):
        return answer
    if isinstance(answer, Swizzle):
        return str(answer)
    return str(answer.tolist()) if hasattr(answer, "tolist") and not isinstance(answer, Layout) else str(answer)


@pytest.mark.parametrize("key", list(EXERCISES))
def test_every_right_spelling_passes_in_notebook_and_page(capsys, spec_of, key):
    spec = spec_of(key)
    capsys.readouterr()
    for answer in RIGHT[key]:
        ok, out = notebook(capsys, key, answer)
        assert ok and out.startswith("PASS"), (key, answer, out)
        page = json.loads(live.check(spec, as_text(answer)))
        assert page["ok"] and page["message"].startswith("PASS"), (key, answer, page)


@pytest.mark.parametrize("key", list(EXERCISES))
def test_every_wrong_answer_gets_its_hint_in_notebook_and_page(capsys, spec_of, key):
    spec = spec_of(key)
    capsys.readouterr()
    for answer, words in WRONG[key]:
        ok, out = notebook(capsys, key, answer)
        assert not ok and out.startswith("not yet") and words in out, (key, answer, out)
        page = json.loads(live.check(spec, as_text(answer)))
        assert page == {"ok": False, "message": out}, (key, answer, page, out)


@pytest.mark.parametrize("key", list(EXERCISES))
def test_nothing_a_reader_types_raises(capsys, spec_of, key):
    spec = spec_of(key)
    capsys.readouterr()
    for answer in JUNK:
        ok, out = notebook(capsys, key, answer)
        assert not ok and (out.startswith("not yet") or out.endswith("not answered yet")), (key, answer, out)
        assert "Error" not in out.split(":")[0], out      # a hint, not an exception's name
        if isinstance(answer, str):
            page = json.loads(live.check(spec, answer))
            assert page == {"ok": False, "message": out}, (key, answer, page)


def test_the_exercises_here_reach_every_checker(monkeypatch, capsys):
    """Every public checker is called by an exercise above (not only through another checker), so the junk
    reaches each one."""
    called, depth = set(), [0]

    def recording(name, checker):
        def check(*args, **kwargs):
            if depth[0] == 0:
                called.add(name)
            depth[0] += 1
            try:
                return checker(*args, **kwargs)
            finally:
                depth[0] -= 1
        return check
    checkers = [name for name in ex.__all__ if name.startswith("check_")]
    for name in checkers:
        monkeypatch.setattr(ex, name, recording(name, getattr(ex, name)))
    monkeypatch.setattr(announce, "announce", lambda spec: None)
    for check, _ in EXERCISES.values():
        check(None)
    assert called == set(checkers)


@pytest.mark.parametrize("key", [k for k, (_, expected) in EXERCISES.items() if expected is not None])
def test_no_hint_names_the_expected_value(capsys, key):
    expected = EXERCISES[key][1]
    capsys.readouterr()
    for answer, _ in WRONG[key]:
        ok, out = notebook(capsys, key, answer)
        assert not ok and leak(out, expected, answer) is None, (key, answer, out, leak(out, expected, answer))


def test_unanswered(capsys):
    for key in ("ch1 ex1", "ch1 ex2", "ch1 ex4", "ch4 ex1"):
        ok, out = notebook(capsys, key, None)
        assert not ok and out.endswith(": not answered yet"), out
    assert json.loads(live.check(json.dumps({"checker": "value", "name": "e", "expected": {"py": "3"}, "hints": []}),
                                 "  ")) == {"ok": False, "message": "e: not answered yet"}


# ---- the reader of answers -----------------------------------------------------------------------------------
@pytest.mark.parametrize("text, value", [
    ("(8,4):(4,1)", Layout((8, 4), (4, 1))), ("Layout<Shape<_8,_4>,Stride<_4,_1>>", Layout((8, 4), (4, 1))),
    ("make_layout((8,4), GenRowMajor{})", Layout((8, 4), (4, 1))), ("Layout((4, 8))", Layout((4, 8), (1, 4))),
    ("(1,)", (1,)), ("((1,),)", ((1,),)), ("(3)", 3), ("[]", ()), ("-(2*3) + 7 % 4 - 9 // 2", -7),
    ("Sw<3,4,-3>", (3, 4, -3)), ("None", None), ("", None), ("dyn(4)", 4),
    ("cute::SM80_CP_ASYNC", Word("SM80_CP_ASYNC")),
    ("cute.make_layout((8, 4), stride=(4, 1))", Layout((8, 4), (4, 1))), ("cute.make_layout(8)", Layout(8, 1)),
    ("cute.make_layout(4, stride=3)", Layout(4, 3)), ("cute.make_swizzle(5, 0, 6)", (5, 0, 6)), ("S<5,0,6>", (5, 0, 6)),
])
def test_read(text, value):
    assert read(text) == value and type(read(text)) is type(value)


@pytest.mark.parametrize("text, words", [
    ("(4,8", "ends early"), ("1.5", "'.5' is not part"), ("(8,4):(4,1,2)", "not congruent"), ("foo(1)", "foo(...)"),
    ("(" * 100 + "1" + ")" * 100, "nested too deeply"), ("x" * 2000, "at most 1000"), ("٣", "not part"),
    ("Layout(0)", "non-positive"), ("(1,2):(3,4):(5,6)", "unexpected ':'"),
    ("cute.make_layout((8, 4), order=(1, 0))", "no keyword order="), ("stride=(4, 1)", "outside a call"),
    ("((8, 4), stride=(4, 1))", "inside a tuple"), ("make_layout((8,4), (4,1), stride=(4,1))", "no keyword stride="),
    ("cute.make_layout((8, 4), stride=(4, 1, 2))", "not congruent"),
])
def test_read_refuses_in_words(text, words):
    with pytest.raises(AnswerError, match=None) as e:
        read(text)
    assert words in str(e.value) and len(str(e.value)) < 300


@pytest.mark.parametrize("value, words", [
    (nested(1000), "nested too deeply"), (loop, "nested too deeply"), (10 ** 5000, "more than 1000 digits"),
    (Unreadable(), "reading its Unreadable raised RuntimeError"),
], ids=["deep", "loop", "huge", "unreadable"])
def test_read_refuses_python_values_in_words(value, words):
    """What the text reader refuses as text (nested too deeply, too long) it refuses as a Python value too;
    and a value that fails when it is read."""
    with pytest.raises(AnswerError) as e:
        read(value)
    assert words in str(e.value)


def test_words_compare_without_case_spaces_quotes_or_namespace():
    assert Word(" 'cute::SM75_U16x8_LDSM_T' ") == "sm75_u16x8_ldsm_t" and Word("A . T") == Word("a.t")
    assert read("A.T", like=Word("garbage")) == Word("A.T") and read("3:2", like=Word("garbage")) == Layout(3, 2)
