"""A layout evaluates past its size as C++ CuTe does (tests/fixtures/extend_cpp.txt, made by
tests/fixtures/gen_extend.sh from compiled C++ CuTe).

C++ checks no coordinate against the shape: an int coordinate is split by the sizes of the modes before the
last (C++ division and remainder, which truncate toward zero) and the last mode takes the rest, so a layout
extends past its size along its last mode, and negative coordinates reach negative offsets. Slicing,
idx2crd, crd2idx and composition with a tiler that reaches past size(A) follow. C++ refuses only
coordinates whose tuples do not match the shape's, and those stay refusals here.

Run-time ints in C++ are dyn() here, so that the printed text carries the same marks; a layout's value
prints without them (Layout.__call__ returns a plain int), so values are compared with C++'s `_` dropped.
"""

import pytest

from cpp_fixture import blocks
import numpy as np

from cutelite import (
    Layout, OutOfRange, Swizzle, _, composition, crd2idx, dyn as d, get_flat_coord, idx2crd, logical_divide,
    make_copy_atom, make_identity_layout, make_identity_tensor, make_tensor, make_tiled_copy, slice_and_offset,
    zipped_divide,
)
from cutelite.int_tuple import fmt

CPP = {key: text.strip() for key, text in blocks("extend_cpp.txt").items()}

A = Layout(4)
C = Layout((4, 3), (3, 1))
CD = Layout(d((4, 3)), d((3, 1)))
H = Layout(((2, 2), 3), ((1, 6), 2))
N = Layout((4, 2), (-2, 8))
I = make_identity_layout((4, 3))
W = composition(Swizzle(2, 0, 2), Layout((4, 4), (4, 1)))
W3 = composition(Swizzle(3, 3, 3), Layout((8, 64), (64, 1)))

VALUES = {
    "_4:_1 (6)": lambda: A(d(6)),
    "_4:_1 (-2)": lambda: A(d(-2)),
    "(_4,_3):(_3,_1) (12)": lambda: C(d(12)),
    "(_4,_3):(_3,_1) (13)": lambda: C(d(13)),
    "(_4,_3):(_3,_1) (100)": lambda: C(d(100)),
    "(_4,_3):(_3,_1) (-1)": lambda: C(d(-1)),
    "(_4,_3):(_3,_1) (-5)": lambda: C(d(-5)),
    "(_4,_3):(_3,_1) (5,0)": lambda: C(d(5), d(0)),
    "(_4,_3):(_3,_1) (0,5)": lambda: C(d(0), d(5)),
    "(_4,_3):(_3,_1) (5,7)": lambda: C(d(5), d(7)),
    "(_4,_3):(_3,_1) (-1,2)": lambda: C(d(-1), d(2)),
    "(_4,_3):(_3,_1) (_5,_0)": lambda: C(5, 0),
    "(4,3):(3,1) (12)": lambda: CD(d(12)),
    "(4,3):(3,1) (5,0)": lambda: CD(d(5), d(0)),
    "((_2,_2),_3):((_1,_6),_2) (13)": lambda: H(d(13)),
    "((_2,_2),_3):((_1,_6),_2) (-3)": lambda: H(d(-3)),
    "((_2,_2),_3):((_1,_6),_2) (5,1)": lambda: H(d(5), d(1)),
    "((_2,_2),_3):((_1,_6),_2) ((3,0),1)": lambda: H((d(3), d(0)), d(1)),
    "((_2,_2),_3):((_1,_6),_2) ((1,2),4)": lambda: H((d(1), d(2)), d(4)),
    "(_4,_2):(_-2,_8) (9)": lambda: N(d(9)),
    "(_4,_2):(_-2,_8) (-1)": lambda: N(d(-1)),
    "(_4,_3):(_1@0,_1@1) (12)": lambda: I(d(12)),
    "(_4,_3):(_1@0,_1@1) (-1)": lambda: I(d(-1)),
    "(_4,_3):(_1@0,_1@1) (5,4)": lambda: I(d(5), d(4)),
    "Sw<2,0,2> o _0 o (_4,_4):(_4,_1) (16)": lambda: W(d(16)),
    "Sw<2,0,2> o _0 o (_4,_4):(_4,_1) (21)": lambda: W(d(21)),
    "Sw<2,0,2> o _0 o (_4,_4):(_4,_1) (-1)": lambda: W(d(-1)),
    "Sw<2,0,2> o _0 o (_4,_4):(_4,_1) (5,1)": lambda: W(d(5), d(1)),
    "Sw<3,3,3> o _0 o (_8,_64):(_64,_1) (9,70)": lambda: W3(d(9), d(70)),
    "Sw<3,3,3> o _0 o (_8,_64):(_64,_1) (600)": lambda: W3(d(600)),
    "make_identity_tensor((_4,_3)) (13)": lambda: make_identity_tensor((4, 3))(d(13)),
}

TEXTS = {
    "idx2crd(12, (_4,_3))": lambda: idx2crd(d(12), (4, 3)),
    "idx2crd(-1, (_4,_3))": lambda: idx2crd(d(-1), (4, 3)),
    "idx2crd(30, ((_2,_2),_3))": lambda: idx2crd(d(30), ((2, 2), 3)),
    "idx2crd(13, (_4,_3), (_3,_1))": lambda: idx2crd(d(13), (4, 3), (3, 1)),
    "idx2crd(-4, (_4,_3), (_3,_1))": lambda: idx2crd(d(-4), (4, 3), (3, 1)),
    "crd2idx((5,7), (_4,_3))": lambda: crd2idx((d(5), d(7)), (4, 3)),
    "crd2idx((-1,1), (_4,_3))": lambda: crd2idx((d(-1), d(1)), (4, 3)),
    "crd2idx(14, (_4,_3), (_3,_1))": lambda: crd2idx(d(14), (4, 3), (3, 1)),
    "(_4,_3):(_3,_1).get_flat_coord(40)": lambda: get_flat_coord(C, d(40)),
    "composition(_4:_1, _4:_2)": lambda: composition(A, Layout(4, 2)),
    "composition(_4:_2, _8:_1)": lambda: composition(Layout(4, 2), Layout(8)),
    "composition((_4,_3):(_3,_1), _6:_4)": lambda: composition(C, Layout(6, 4)),
    "composition((_4,_3):(_3,_1), _24:_1)": lambda: composition(C, Layout(24)),
    "composition((_4,_3):(_3,_1), (_2,_4):(_1,_12))": lambda: composition(C, Layout((2, 4), (1, 12))),
    "composition((_4,_3):(_3,_1), _24)": lambda: composition(C, 24),
    "composition((_4,_3):(_3,_1), (_8:_1,_6:_1))": lambda: composition(C, (Layout(8), Layout(6))),
    "composition(Sw<2,0,2> o _0 o (_4,_4):(_4,_1), _32:_1)": lambda: composition(W, Layout(32)),
    "logical_divide(_4:_1, _8:_1)": lambda: logical_divide(A, Layout(8)),
    "zipped_divide((_4,_3):(_3,_1), (_8:_1,_6:_1))": lambda: zipped_divide(C, (Layout(8), Layout(6))),
    "logical_divide((_4,_3):(_3,_1), _8:_1)": lambda: logical_divide(C, Layout(8)),
}

SLICES = {
    "(_4,_3):(_3,_1) (_,5)": (C, (_, d(5))),
    "(_4,_3):(_3,_1) (7,_)": (C, (d(7), _)),
    "(_4,_3):(_3,_1) (-1,_)": (C, (d(-1), _)),
    "((_2,_2),_3):((_1,_6),_2) (5,_)": (H, (d(5), _)),
    "((_2,_2),_3):((_1,_6),_2) ((_,3),_)": (H, ((_, d(3)), _)),
    "Sw<2,0,2> o _0 o (_4,_4):(_4,_1) (_,5)": (W, (_, d(5))),
    "Sw<2,0,2> o _0 o (_4,_4):(_4,_1) (6,_)": (W, (d(6), _)),
    "Sw<3,3,3> o _0 o (_8,_64):(_64,_1) (9,_)": (W3, (d(9), _)),
    "Sw<3,3,3> o _0 o (_8,_64):(_64,_1) (_,70)": (W3, (_, d(70))),
}

COPY = make_tiled_copy(make_copy_atom("UniversalCopy<uint32_t>", "float"), Layout((4, 8)), Layout((1, 2)))
THREADS = {f"TiledCopy 32 threads get_slice({t}).partition_S((_8,_32):(_1,_8))": t for t in (31, 32, 45)}

REFUSED = {
    "(_4,_3):(_3,_1) (1,2,3)": lambda: C(1, 2, 3),
    "_4:_1 (1,2)": lambda: A(1, 2),
    "(_4,_3):(_3,_1) ((1,2),0)": lambda: C((1, 2), 0),
    "composition((_4,_3):(_3,_1), _4:_5)": lambda: composition(C, Layout(4, 5)),
}


def test_every_recorded_case_is_tested():
    assert set(CPP) == set(VALUES) | set(TEXTS) | set(SLICES) | set(THREADS) | set(REFUSED) | {
        "TiledCopy 32 threads get_slice(1).partition_S((_6,_16):(_1,_6))"}


@pytest.mark.parametrize("key", sorted(VALUES))
def test_a_layout_evaluates_past_its_domain_as_cpp(key):
    assert str(VALUES[key]()) == CPP[key].replace("_", "")


@pytest.mark.parametrize("key", sorted(TEXTS))
def test_coordinates_and_compositions_past_the_domain_print_as_cpp(key):
    result = TEXTS[key]()
    assert (fmt(result) if isinstance(result, (int, tuple)) else str(result)) == CPP[key]


@pytest.mark.parametrize("key", sorted(SLICES))
def test_a_slice_at_a_coordinate_past_its_mode_prints_as_cpp(key):
    layout, coord = SLICES[key]
    sub, offset = slice_and_offset(coord, layout)
    assert f"{sub} {fmt(offset)}" == CPP[key]


@pytest.mark.parametrize("key", sorted(THREADS))
def test_a_thread_past_a_tiled_copys_threads_partitions_as_cpp(key):
    """C++ checks no thread index: thread 32 of a 32-thread copy starts where thread 0's next tile does."""
    data = np.zeros(2 * 8 * 32, dtype=np.float32)          # room for the offsets past the 8 x 32 tile
    part = COPY.get_slice(THREADS[key]).partition_S(make_tensor(data, Layout((8, 32))))
    assert f"{part.layout} {part.offset}" == CPP[key]


def test_a_tensor_that_is_not_a_whole_number_of_tiles_partitions_as_cpp():
    """C++ checks no divisibility here either: the last 4-row tile of a 6-row tensor reaches rows 6 and 7."""
    key = "TiledCopy 32 threads get_slice(1).partition_S((_6,_16):(_1,_6))"
    data = np.zeros(2 * 8 * 32, dtype=np.float32)
    part = COPY.get_slice(1).partition_S(make_tensor(data, Layout((6, 16))))
    assert f"{part.layout} {part.offset}" == CPP[key]


@pytest.mark.parametrize("key", sorted(REFUSED))
def test_what_cpp_does_not_compile_is_still_refused(key):
    assert CPP[key].startswith("error: static assertion failed")
    with pytest.raises(ValueError):
        REFUSED[key]()


def test_a_mismatched_coordinate_is_an_out_of_range_naming_the_layout():
    with pytest.raises(OutOfRange, match=r"\(_4,_3\):\(_3,_1\): coordinate \(_1,_2,_3\) does not match"):
        C(1, 2, 3)


def test_the_extension_is_the_last_mode_continued():
    """Documented behaviour: past size(L) an int walks on along the last mode (the layout function of
    (_4,_3):(_3,_1) at i is (i % 4) * 3 + (i // 4) * 1 for every i >= 0)."""
    assert [C(i) for i in range(12, 40)] == [(i % 4) * 3 + i // 4 for i in range(12, 40)]
    assert all(A(i) == i for i in range(-50, 50))
