"""The exercise checkers, exercise by exercise, through both doors: the notebook's call (a Python value or
text) and the live page's answer box (cutelite.teach.live.check with the spec the notebook announced).

For every exercise of chapters 1-8: each equivalent spelling a reader might type passes (static or dynamic
ints, spaces, tuple or list, C++ spelling, Python constructor spelling), each plausible wrong answer gets its
hint, and nothing a reader types raises. Expected answers are worked out here by hand, from the chapters'
definitions (row-major, colexicographic order, the PTX fragment formulas, byte counts), not by the checkers.
"""

import json

import numpy as np
import pytest

from cutelite import Layout, Swizzle, composition, dyn
from cutelite.bank_conflicts import analyse, analyse_ldmatrix
from cutelite.teach import announce, exercises as ex, live
from cutelite.teach.answers import AnswerError, Word, read

# ---- the exercises, as the chapters call their checkers -----------------------------------------------------
column0 = [(i, 0) for i in range(32)]
tile64 = Layout((32, 64), (64, 1))
t32 = Layout((16, 32), (32, 1))
rows32 = [(i % 8 + 8 * (i // 8 % 2), 8 * (i // 16)) for i in range(32)]
TV_DOCS = Layout(((2, 4), (2, 2)), ((8, 1), (4, 16)))

EXERCISES = {
    "ch1 ex1": lambda a: ex.check_layout_answer(a, Layout((8, 4), (4, 1)), "exercise 1"),
    "ch1 ex2": lambda a: ex.check_value(a, 24, "exercise 2", hints={
        23: "that is the largest offset; cosize is one more"}),
    "ch1 ex3": lambda a: ex.check_coordinates_answer(a, 13, (4, (2, 3)), "exercise 3"),
    "ch1 ex4": lambda a: ex.check_offsets_answer(a, Layout((2, (2, 2)), (1, (4, 2))), "exercise 4"),
    "ch2 ex1": lambda a: ex.check_layout_answer(a, composition(Layout((4, 8), (8, 1)), Layout((2, 2), (1, 4))),
                                                "exercise 1"),
    "ch2 ex2": lambda a: ex.check_layout_answer(a, Layout((2, 2), (1, 8)), "exercise 2"),
    "ch2 ex3": lambda a: ex.check_offsets_answer(a, [2, 3, 8, 9, 14, 15, 20, 21], "exercise 3"),
    "ch2 ex4": lambda a: ex.check_value(a, "3:2", "exercise 4", hints={
        "6:2": "2 divides 4: two elements per column of A", "4:4": "4 divides 4: the step skips whole columns"}),
    "ch3 corner": lambda a: ex.check_value(a, 132, "corner", hints={17: "tile (1, 2) starts at row 1*4"}),
    "ch3 start": lambda a: ex.check_value(a, (1, 2), "thread 5 starts at", hints={
        (2, 1): "a column-major (2, 16) puts thread i at (i % 2, i // 2)"}),
    "ch3 tv": lambda a: ex.check_layout_answer(a, Layout((8, 4), (4, 1)), "TV layout"),
    "ch3 owner": lambda a: ex.check_owner_answer(a, TV_DOCS, (2, 5), (4, 8), "owner of (2, 5)"),
    "ch4 ex1": lambda a: ex.check_swizzle_answer(a, lambda sw: analyse(composition(sw, tile64), column0), "exercise 1"),
    "ch4 ex2": lambda a: ex.check_value(a, 8, "exercise 2", hints={4: "that is the ideal"}),
    "ch4 ex3": lambda a: ex.check_value(a, (4, 3), "exercise 3", hints={
        (1, 3): "lane 1 is row 1", (4, 4): "B = 4 needs S >= 4"}),
    "ch4 ex4": lambda a: ex.check_swizzle_answer(a, lambda sw: analyse_ldmatrix(composition(sw, t32), rows32),
                                                 "exercise 4"),
    "ch5 c": lambda a: ex.check_value(a, [(3, 2), (3, 3), (11, 2), (11, 3)], "C fragment of lane 13"),
    "ch5 qp": lambda a: ex.check_value(a, [12, 13, 14, 15, 28, 29, 30, 31], "lanes of quad-pair 3"),
    "ch5 col": lambda a: ex.check_value(a, "garbage", "what a column-major A becomes", hints={
        "A.T": "A.T is 8x16"}),
    "ch6 pa": lambda a: ex.check_partition_shape_answer(a, ((2, 2, 2), 2, 2), "partition_A of 64x32"),
    "ch6 atom": lambda a: ex.check_copy_atom_answer(a, "SM75_U16x8_LDSM_T", "copy atom for an M-major A"),
    "ch6 tt": lambda a: ex.check_tiled_mma_answer(a, (256, (32, 64, 16)), 32, (16, 8, 16), (2, 4, 1)),
    "ch7 ex1": lambda a: ex.check_budget_answer(a, (49152, 64), stages=4, a_bytes=4 * 128 * 32 * 2, name="exercise 1"),
    "ch7 ex2": lambda a: ex.check_value(a, 8, "exercise 2", hints={
        4: "that is one operand's share: B is copied too", 64: "that counts halves: one cp.async moves 8"}),
    "ch7 ex3": lambda a: ex.check_wait_group_answer(a, 3, "exercise 3"),
    "ch8 lbo": lambda a: ex.check_lbo_sbo_answer(a, (1, 64), lbo_used=False),
    "ch8 lbo used": lambda a: ex.check_lbo_sbo_answer(a, (1, 64)),
    "ch8 tx": lambda a: ex.check_expect_tx_answer(a, 64 * 64 * 2 + 128 * 64 * 2, 64 * 64 * 2),
    "ch8 phase": lambda a: ex.check_phase_answer(a, (1, 0)),
    "ch8 wait": lambda a: ex.check_wait_release_answer(a, release_lag=2, stages=4),
    "ch8 regs": lambda a: ex.check_setmaxnreg_answer(a, 152, 128),
}

# Equivalent answers: each must pass. Strings are what a reader types (in a cell or the answer box).
RIGHT = {
    "ch1 ex1": [Layout((8, 4), (4, 1)), Layout((dyn(8), dyn(4)), (dyn(4), 1)), ((8, 4), (4, 1)), [[8, 4], [4, 1]],
                "(8,4):(4,1)", "(_8,_4):(_4,_1)", " ( 8 , 4 ) : ( 4 , 1 ) ", "Layout((8, 4), (4, 1))",
                "make_layout((8, 4), LayoutRight)", "make_layout(make_shape(8, 4), LayoutRight{})",
                "cute::make_layout(cute::make_shape(Int<8>{}, Int<4>{}), cute::make_stride(_4{}, _1{}))",
                "Layout<Shape<_8,_4>, Stride<_4,_1>>", "((8, 4), (4, 1))", "[[8, 4], [4, 1]]",
                "cute.make_layout((8, 4), stride=(4, 1))", "cutlass.cute.make_layout((8,4), stride=(4,1))"],
    "ch1 ex2": [24, np.int64(24), dyn(24), "24", "_24", "Int<24>{}", "3*2 + 1*1 + 2*8 + 1"],
    "ch1 ex3": [((1, 3), (1, (1, 1))), [[1, 3], [1, [1, 1]]], [(1, 3), (1, (1, 1))], "((1, 3), (1, (1, 1)))",
                "[[1,3],[1,[1,1]]]", "(1,3), (1,(1,1))",
                "make_tuple(make_coord(1, 3), make_coord(1, make_coord(1, 1)))"],
    "ch1 ex4": [[[0, 4, 2, 6], [1, 5, 3, 7]], np.array([[0, 4, 2, 6], [1, 5, 3, 7]]), ((0, 4, 2, 6), (1, 5, 3, 7)),
                [0, 1, 4, 5, 2, 3, 6, 7], "[[0, 4, 2, 6], [1, 5, 3, 7]]", "((0,4,2,6),(1,5,3,7))",
                "[0, 1, 4, 5, 2, 3, 6, 7]"],
    "ch2 ex1": [Layout((2, 2), (8, 1)), "(2,2):(8,1)", "(_2,_2):(_8,_1)",
                "make_layout(make_shape(2,2), make_stride(8,1))"],
    "ch2 ex2": [Layout((2, 2), (1, 8)), "(2,2):(1,8)", "((2,2),(1,8))", "Layout((2, 2), (1, 8))"],
    "ch2 ex3": [[2, 3, 8, 9, 14, 15, 20, 21], (2, 3, 8, 9, 14, 15, 20, 21), np.array([2, 3, 8, 9, 14, 15, 20, 21]),
                "[2, 3, 8, 9, 14, 15, 20, 21]", "2, 3, 8, 9, 14, 15, 20, 21"],
    "ch2 ex4": ["3:2", "_3:_2", "3 : 2", "Layout(3, 2)", Layout(3, 2), Layout(dyn(3), dyn(2)), "'3:2'",
                "make_layout(3, 2)"],
    "ch3 corner": [132, "132", "4*1 + 16*8", "_132"],
    "ch3 start": [(1, 2), [1, 2], np.array([1, 2]), "(1, 2)", "[1,2]", "1, 2", "make_coord(1, 2)"],
    "ch3 tv": [Layout((8, 4), (4, 1)), "(8,4):(4,1)", "((8,4),(4,1))", "Layout((8,4),(4,1))"],
    "ch3 owner": [(4, 3), [4, 3], "(4, 3)", "4,3"],
    "ch4 ex1": [(5, 0, 6), [5, 0, 6], Swizzle(5, 0, 6), "(5, 0, 6)", "Sw<5,0,6>", "Swizzle(5, 0, 6)",
                "cute::Swizzle<5, 0, 6>{}", "Swizzle<5,0,6>"],
    "ch4 ex2": [8, "8", np.int32(8)],
    "ch4 ex3": [(4, 3), [4, 3], "(4, 3)", "[4, 3]"],
    "ch4 ex4": [(2, 3, 3), "Sw<2,3,3>", "Swizzle(2, 3, 3)", Swizzle(2, 3, 3)],
    "ch5 c": [[(3, 2), (3, 3), (11, 2), (11, 3)], ((3, 2), (3, 3), (11, 2), (11, 3)),
              [[3, 2], [3, 3], [11, 2], [11, 3]],
              "[(3, 2), (3, 3), (11, 2), (11, 3)]", "[[3,2],[3,3],[11,2],[11,3]]"],
    "ch5 qp": [[12, 13, 14, 15, 28, 29, 30, 31], (12, 13, 14, 15, 28, 29, 30, 31),
               np.array([12, 13, 14, 15, 28, 29, 30, 31]), "(12, 13, 14, 15, 28, 29, 30, 31)",
               "[12,13,14,15,28,29,30,31]"],
    "ch5 col": ["garbage", "'garbage'", '"garbage"', "Garbage", " garbage "],
    "ch6 pa": [((2, 2, 2), 2, 2), [[2, 2, 2], 2, 2], "((2,2,2),2,2)", "((_2,_2,_2),_2,_2)",
               "make_shape(make_shape(2, 2, 2), 2, 2)", "Shape<Shape<_2,_2,_2>,_2,_2>"],
    "ch6 atom": ["SM75_U16x8_LDSM_T", "cute::SM75_U16x8_LDSM_T", "'SM75_U16x8_LDSM_T'", "SM75_U16x8_LDSM_T{}"],
    "ch6 tt": [(256, (32, 64, 16)), [256, [32, 64, 16]], "(256, (32, 64, 16))", "256, (32,64,16)"],
    "ch7 ex1": [(49152, 64), [49152, 64], "(49152, 64)", "48*1024, 64"],
    "ch7 ex2": [8, "8", "_8", "4 + 4", np.int64(8)],
    "ch7 ex3": [1, "1", "_1"],
    # K-major SW128: PTX does not read LBO, so any LBO that fits its 14 bits is as right as CuTe's 1
    "ch8 lbo": [(1, 64), [1, 64], "(1, 64)", (0, 64), "(2, 64)", "(16383, _64)"],
    "ch8 lbo used": [(1, 64), "(1, 64)"],
    "ch8 tx": [24576, "24576", "64*64*2 + 128*64*2"],
    "ch8 phase": [(1, 0), [1, 0], "(1, 0)"],
    # releasing k-tile kt - 2 needs its group done: wait_group N completes the groups of k-tiles <= kt - N
    "ch8 wait": [2, "2", "_2", "Int<2>{}"],
    # (65536 - 128 * 40) registers over 3 * 128 consumer threads: 157.3, a multiple of 8 down: 152
    "ch8 regs": [152, "152", "19 * 8"],
}

# Plausible wrong answers and (a piece of) the hint each must get.
WRONG = {
    "ch1 ex1": [("(8,4):(1,8)", "column-major"), ("(4,8):(8,1)", "mode 0 has shape _4"), ("(8,4)", "the shape alone"),
                ("(8,4):(4,2)", "mode 1 (_4) has stride _2; it should be _1"), ("(8,4", "cannot read")],
    "ch1 ex2": [(23, "largest offset"), (25, "too large"), ((24,), "expected a whole number")],
    "ch1 ex3": [(((2, 1), (2, (0, 1))), "row-major"), (((1, 3), (1, (1, 0))), "split n = 3"),
                (((3, 1), (3, (1, 0))), "m and n are swapped"), (((1, (1, 1)), (1, 3)), "the other order"),
                ((1, 3), "give both"), (13, "expected a tuple of 2 entries")],
    "ch1 ex4": [([[0, 2, 4, 6], [1, 3, 5, 7]], "(0,1) should be 4"), ([[0, 1], [4, 5], [2, 3], [6, 7]], "transposed"),
                ([0, 4, 2, 6, 1, 5, 3, 7], "row by row"), ([1, 2], "expected 8 offsets")],
    "ch2 ex1": [("(2,2):(1,4)", "mode 0 (_2) has stride _1; it should be _8"), ("(4,4):(8,1)", "size 16 should be 4")],
    "ch2 ex2": [("(2,2):(1,4)", "mode 1 (_2) has stride _4; it should be _8"), ("(2,2):(8,1)", "stride")],
    "ch2 ex3": [([2, 8, 14, 20, 3, 9, 15, 21], "wrong order"), ([0, 1, 6, 7, 12, 13, 18, 19], "index 0 should be 2")],
    "ch2 ex4": [("6:2", "2 divides 4"), ("_4:_4", "4 divides 4"), ("Layout(4, 4)", "4 divides 4"), ("5:1", "size 5"),
                ("7", "expected a layout")],
    "ch3 corner": [(17, "starts at row 1*4"), (100, "too small")],
    "ch3 start": [((2, 1), "puts thread i at"), ((1, 3), "entry 1")],
    "ch3 tv": [("(8,4):(1,8)", "column-major"), ("(4,8):(1,4)", "mode 0 has shape _4")],
    "ch3 owner": [((3, 4), "(value, thread)"), (28, "1-D (thread, value) index"),
                  (((0, 2), (1, 1)), "coordinates in the shapes"), ((2, 3), "row-major")],
    "ch4 ex1": [((5, 0, 5), "still needs"), ((3, 0, 2), "abs(SShift)"), (5, "expected a swizzle"),
                ((1, 2, 3, 4), "expected a swizzle"), ("Sw<9,9,9>", "outside the range"),
                ("Sw<5,0,6> o _0 o (_32,_64):(_64,_1)", "swizzle alone")],
    "ch4 ex2": [(4, "ideal"), (7, "too small")],
    "ch4 ex3": [((1, 3), "lane 1 is row 1"), ((4, 4), "B = 4 needs"), ((3, 4), "reverse order")],
    "ch4 ex4": [((1, 3, 3), "still needs")],
    "ch5 c": [([(2, 3), (3, 3), (2, 11), (3, 11)], "every entry is reversed"),
              ([(3, 3), (3, 2), (11, 2), (11, 3)], "another order"), ([(3, 2)], "you have 1 entries")],
    "ch5 qp": [([28, 29, 30, 31, 12, 13, 14, 15], "another order"), ([12, 13, 14, 15], "you have 4 entries"),
               ([12, 13, 14, 15, 16, 17, 18, 19], "entry 4")],
    "ch5 col": [("A.T", "A.T is 8x16"), ("A", "'A' is not it"), (5, "expected a word")],
    "ch6 pa": [((8, 2, 2), "atom's value shape"), (((2, 2, 2), 2), "you have 2 entries")],
    "ch6 atom": [("SM75_U32x4_LDSM_N", "without .trans"), ("cute::SM75_U16x4_LDSM_T", ".x2")],
    "ch6 tt": [((8, (32, 64, 16)), "number of atoms"), ((256, (32, 32, 16)), "permutation")],
    "ch7 ex1": [((24576, 64), "counts elements"), ((49152, 2048), "per warp")],
    "ch7 ex2": [(4, "one operand's share"), (64, "counts halves")],
    "ch7 ex3": [(2, "stay in flight"), (0, "no longer overlap")],
    "ch8 lbo": [((64, 1), "swapped"), ((16, 1024), "bytes"), ((1, 512), "elements"), ((1, 32), "SBO 32"),
                ((16384, 64), "14-bit"), (64, "expected a pair")],
    "ch8 lbo used": [((2, 64), "entry 0"), ((64, 1), "swapped")],
    "ch8 tx": [(8192, "A box only"), (12288, "elements")],
    "ch8 phase": [((1, 1), "flipped")],
    "ch8 wait": [(3, "is not known to be complete"), (1, "not the largest"), (0, "not the largest"),
                 (8, "from 0 to 7"), ((2, 1), "whole number")],
    "ch8 regs": [(128, "launch cap"), (157, "multiples of 8"), (160, "one step too many"), (256, "does not have"),
                 (144, "too small")],
}

# What else a reader might type: never an exception, always one verdict line.
JUNK = [5, (1, 2, 3, 4), [], (), {}, 1.5, True, "", "   ", "(", ")", "[[", "abc", "1.5", "(1,2):(3)", "_", "5//0",
        "x" * 5000, "(" * 400 + "1" + ")" * 400, "-" * 300 + "1", "٣", "Layout(0)", "Sw<1,2>", "Swizzle(a, b, c)",
        "make_layout()", "'unterminated", "9" * 900, Layout((2, 2)), Swizzle(1, 0, 1), np.zeros((2, 2)), object()]


@pytest.fixture
def spec_of(monkeypatch):
    """The spec each exercise announces when its answer is None (what the page's answer box is built from)."""
    def announced(key):
        specs = []
        monkeypatch.setattr(announce, "announce", specs.append)
        EXERCISES[key](None)
        monkeypatch.undo()
        assert len(specs) == 1 and specs[0]["live"] == "exercise", key
        return json.dumps(specs[0])
    return announced


def notebook(capsys, key, answer):
    ok = EXERCISES[key](answer)
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


def test_words_compare_without_case_spaces_quotes_or_namespace():
    assert Word(" 'cute::SM75_U16x8_LDSM_T' ") == "sm75_u16x8_ldsm_t" and Word("A . T") == Word("a.t")
    assert read("A.T", like=Word("garbage")) == Word("A.T") and read("3:2", like=Word("garbage")) == Layout(3, 2)
