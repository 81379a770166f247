"""Worked examples from CuTe's documentation (layout and layout-algebra pages), with their documented
results, and CuTe's printing conventions (static _N, dynamic N, size-1 modes with stride _0)."""

import pytest

from cutelite import (
    Layout, LayoutRight, _, dyn, make_layout, coalesce, composition, complement, logical_divide,
    zipped_divide, tiled_divide, flat_divide, logical_product, blocked_product, raked_product,
    right_inverse, left_inverse, tiled_product, size, cosize, rank, depth, get, slice_and_offset,
)
from cutelite.int_tuple import crd2idx, idx2crd


def L(shape, stride):
    return Layout(shape, stride)


def test_printing_static_and_dynamic():
    assert str(Layout((8, 8), (8, 1))) == "(_8,_8):(_8,_1)"
    assert str(Layout(((2, 2), (2, 2)), ((1, 4), (2, 8)))) == "((_2,_2),(_2,_2)):((_1,_4),(_2,_8))"
    assert str(Layout((dyn(4), 8))) == "(4,_8):(_1,4)"
    assert str(make_layout((12, 1))) == "(_12,_1):(_1,_0)"
    assert str(make_layout((2, 3, 4), LayoutRight)) == "(_2,_3,_4):(_12,_4,_1)"


def test_coordinates_of_the_layout_page():
    shape, stride = (3, (2, 3)), (3, (12, 1))
    assert idx2crd(16, shape) == (1, (1, 2))
    assert crd2idx(16, shape, stride) == 17
    assert crd2idx((1, 5), shape, stride) == 17
    assert crd2idx((1, (1, 2)), shape, stride) == 17
    layout = Layout(shape, stride)
    assert layout(16) == layout(1, 5) == layout((1, (1, 2))) == 17


def test_size_cosize_rank_depth():
    layout = Layout((2, (3, 4)), (12, (1, 3)))
    assert (size(layout), cosize(layout), rank(layout), depth(layout)) == (24, 24, 2, 2)
    assert str(get(layout, 1)) == "(_3,_4):(_1,_3)"


@pytest.mark.parametrize("layout, profile, expected", [
    (L((2, (1, 6)), (1, (6, 2))), None, "_12:_1"),
    (L((2, (1, 6)), (1, (6, 2))), (1, 1), "(_2,_6):(_1,_2)"),
])
def test_coalesce(layout, profile, expected):
    assert str(coalesce(layout, profile)) == expected


@pytest.mark.parametrize("a, b, expected", [
    (L(20, 2), L((5, 4), (4, 1)), "(_5,_4):(_8,_2)"),
    (L((10, 2), (16, 4)), L((5, 4), (1, 5)), "(_5,(_2,_2)):(_16,(_80,_4))"),
    (L((6, 2), (8, 2)), L((4, 3), (3, 1)), "((_2,_2),_3):((_24,_2),_8)"),
])
def test_composition(a, b, expected):
    assert str(composition(a, b)) == expected


def test_by_mode_composition_with_tilers():
    a = L((12, (4, 8)), (59, (13, 1)))
    assert str(composition(a, (L(3, 4), L(8, 2)))) == "(_3,(_2,_4)):(_236,(_26,_1))"
    assert str(composition(a, (3, 8))) == "(_3,(_4,_2)):(_59,(_13,_1))"


@pytest.mark.parametrize("layout, cotarget, expected", [
    (L(4, 1), 24, "_6:_4"),
    (L(6, 4), 24, "_4:_1"),
    (L((4, 6), (1, 4)), 24, "_1:_0"),
    (L(4, 2), 24, "(_2,_3):(_1,_8)"),
    (L((2, 4), (1, 6)), 24, "_3:_2"),
    (L((2, 2), (1, 6)), 24, "(_3,_2):(_2,_12)"),
])
def test_complement(layout, cotarget, expected):
    assert str(complement(layout, cotarget)) == expected


def test_logical_divide_1d_and_2d():
    assert str(logical_divide(L((4, 2, 3), (2, 1, 8)), L(4, 2))) == "((_2,_2),(_2,_3)):((_4,_1),(_2,_8))"
    a = L((9, (4, 8)), (59, (13, 1)))
    tiler = (L(3, 3), L((2, 4), (1, 8)))
    assert str(logical_divide(a, tiler)) == "((_3,_3),((_2,_4),(_2,_2))):((_177,_59),((_13,_2),(_26,_1)))"
    assert str(zipped_divide(a, tiler)) == "((_3,(_2,_4)),(_3,(_2,_2))):((_177,(_13,_2)),(_59,(_26,_1)))"
    assert str(tiled_divide(a, tiler)) == "((_3,(_2,_4)),_3,(_2,_2)):((_177,(_13,_2)),_59,(_26,_1))"
    assert str(flat_divide(a, tiler)) == "(_3,(_2,_4),_3,(_2,_2)):(_177,(_13,_2),_59,(_26,_1))"


def test_products():
    assert str(logical_product(L((2, 2), (4, 1)), L(6, 1))) == "((_2,_2),(_2,_3)):((_4,_1),(_2,_8))"
    block, tiler = L((2, 5), (5, 1)), L((3, 4), (1, 3))
    assert str(blocked_product(block, tiler)) == "((_2,_3),(_5,_4)):((_5,_10),(_1,_30))"
    assert str(raked_product(block, tiler)) == "((_3,_2),(_4,_5)):((_10,_5),(_30,_1))"
    assert str(tiled_product(L(16, 1), L((6,), (3,)))) == "(_16,(_6)):(_1,(_48))"


def test_inverses_skip_stride_zero_modes():
    assert str(right_inverse(L((4, 4), (0, 1)))) == "_4:_4"
    assert str(left_inverse(L(12, 0))) == "_12:_0"


def test_composition_reaching_past_a_uses_the_last_stride():
    assert str(composition(L((8, 1), (1, 1)), L((4, 1), (64, 64)))) == "(_4,_1):(_8,_8)"


def test_slicing():
    layout = L((4, (2, 3)), (1, (4, 8)))
    assert str(layout(_, 1)) == "(_4):(_1)"
    assert str(layout(2, _)) == "((_2,_3)):((_4,_8))"
    assert str(layout(None, (1, _))) == "(_4,_3):(_1,_8)"
    sub, off = slice_and_offset((_, (1, 2)), layout)
    assert (str(sub), off) == ("(_4):(_1)", 20)
