"""Swizzle<B,M,S>: the documented bit formula, CuTe's masks, printing, and the tables of the swizzle
article (each table entry recomputed here independently with NumPy bit arithmetic)."""

import numpy as np
import pytest

from cutelite import Layout, Swizzle, ComposedLayout, composition, format_layout, size, cosize, _, dyn, slice_and_offset


def reference_swizzle(offsets, b, m, s):
    """ZZZ ^= YYY on arrays: the B bits at M + max(0,S) are XORed into the B bits at M - min(0,S)."""
    offsets = np.asarray(offsets, dtype=np.int64)
    yyy = offsets >> (m + max(0, s)) & ((1 << b) - 1)
    return offsets ^ (yyy << (m - min(0, s)))


@pytest.mark.parametrize("b, m, s", [(1, 1, 1), (1, 2, 1), (2, 1, 2), (3, 1, 3), (3, 1, 4), (1, 0, 1),
                                     (1, 0, -1), (3, 3, 3), (2, 3, 3), (3, 2, 3), (2, 4, -3), (0, 4, 3)])
def test_swizzle_matches_the_bit_formula(b, m, s):
    sw = Swizzle(b, m, s)
    xs = np.arange(4096)
    assert [sw(int(x)) for x in xs] == reference_swizzle(xs, b, m, s).tolist()


def test_masks_as_cute_derives_them():
    sw = Swizzle(3, 3, 3)
    assert (sw.yyy_msk, sw.zzz_msk) == (0b111 << 6, 0b111 << 3)
    neg = Swizzle(2, 1, -3)
    assert (neg.yyy_msk, neg.zzz_msk) == (0b11 << 1, 0b11 << 4)


@pytest.mark.parametrize("b, m, s", [(3, 3, 3), (2, 1, -2), (1, 0, 5)])
def test_swizzle_is_an_involution(b, m, s):
    sw = Swizzle(b, m, s)
    assert all(sw(sw(x)) == x for x in range(2048))


ARTICLE_TABLES = [
    (Swizzle(1, 1, 1), Layout((8, 8), (8, 1))),
    (Swizzle(1, 2, 1), Layout((8, 8), (8, 1))),
    (Swizzle(2, 1, 2), Layout((8, 8), (8, 1))),
    (Swizzle(3, 1, 3), Layout((8, 16), (16, 1))),
    (Swizzle(3, 1, 4), Layout((8, 16), (16, 1))),
    (Swizzle(1, 0, 1), Layout(((2, 2), (2, 2)), ((1, 4), (2, 8)))),
    (Swizzle(1, 0, -1), Layout(((2, 2), (2, 2)), ((1, 4), (2, 8)))),
]


@pytest.mark.parametrize("sw, inner", ARTICLE_TABLES, ids=str)
def test_article_tables(sw, inner):
    composed = composition(sw, inner)
    assert isinstance(composed, ComposedLayout)
    assert str(composed) == f"Sw<{sw.bits},{sw.base},{sw.shift}> o _0 o {inner}"
    m, n = size(inner, 0), size(inner, 1)
    plain = np.array([[inner(i, j) for j in range(n)] for i in range(m)])
    expected = reference_swizzle(plain, sw.bits, sw.base, sw.shift)
    got = np.array([[composed(i, j) for j in range(n)] for i in range(m)])
    np.testing.assert_array_equal(got, expected)
    text = format_layout(composed).splitlines()
    assert text[0] == str(composed)
    width = len(str(cosize(inner))) + 2
    for i in range(m):
        row = text[3 + 2 * i]
        assert row == f"{i:>2}  " + "".join(f"| {v:>{width - 2}} " for v in expected[i]) + "|"


def test_print_layout_grid_format_of_the_article():
    lines = format_layout(composition(Swizzle(1, 1, 1), Layout((8, 8), (8, 1)))).splitlines()
    assert lines[0] == "Sw<1,1,1> o _0 o (_8,_8):(_8,_1)"
    assert lines[1] == "       0    1    2    3    4    5    6    7 "
    assert lines[2] == "    +----+----+----+----+----+----+----+----+"
    assert lines[3] == " 0  |  0 |  1 |  2 |  3 |  6 |  7 |  4 |  5 |"
    assert len(lines) == 2 + 2 * 8 + 1


def test_slicing_a_swizzled_layout_folds_the_swizzle():
    # C++ (CUTLASS 4.2, compiled): slice_and_offset(make_coord(_, Int<9>{}), Sw<3,3,3> o (8,64):(64,1))
    # is ((_2,_4)):((_56,_144)) with offset 9; with a run-time 9 the strides are dynamic.
    composed = composition(Swizzle(3, 3, 3), Layout((8, 64), (64, 1)))
    column, off = slice_and_offset((_, 9), composed)
    assert (str(column), off) == ("((_2,_4)):((_56,_144))", 9)
    assert [off + column(i) for i in range(8)] == [composed(i, 9) for i in range(8)]
    column, off = slice_and_offset((_, dyn(9)), composed)
    assert (str(column), off) == ("((_2,_2,_2)):((56,144,288))", 9)
    # C++: Sw<2,2,3> o (16,32):(1,16) at (_, 3) -> ((_4,_2,_2)):((_1,-4,8)) | 52
    col = composition(Swizzle(2, 2, 3), Layout((16, 32), (1, 16)))
    sub, off = slice_and_offset((_, dyn(3)), col)
    assert (str(sub), off) == ("((_4,_2,_2)):((_1,-4,8))", 52)
    assert [off + sub(i) for i in range(16)] == [col(i, 3) for i in range(16)]


def test_tile_to_shape_keeps_the_swizzle():
    # C++ (compiled): tile_to_shape(Sw<3,3,3> o (8,64):(64,1), Shape<_128,_64>)
    from cutelite import tile_to_shape
    tiled = tile_to_shape(composition(Swizzle(3, 3, 3), Layout((8, 64), (64, 1))), (128, 64))
    assert str(tiled) == "Sw<3,3,3> o _0 o ((_8,_16),(_64,_1)):((_64,_512),(_1,_0))"
