"""Bad input gets a clear error naming the operation and the values, never a wrong layout."""

import pytest

from cutelite import (
    Layout, Swizzle, _, composition, complement, left_inverse, upcast, downcast, print_layout,
    logical_divide, make_layout, tile_to_shape,
)


def test_shape_and_stride_not_congruent():
    with pytest.raises(ValueError, match="not congruent"):
        Layout((4, 8), (1, 4, 8))


@pytest.mark.parametrize("shape", [0, -2, (4, 0)])
def test_non_positive_extents(shape):
    with pytest.raises(ValueError, match="non-positive"):
        Layout(shape)


@pytest.mark.parametrize("shape", [4.0, "4", (4, 2.5), [4, 8], True])
def test_non_integers(shape):
    with pytest.raises(TypeError):
        Layout(shape)


def test_composition_stride_divisibility():
    with pytest.raises(ValueError, match=r"stride _9 .* shape _4 .*Stride Divisibility"):
        composition(Layout((4, 6), (1, 5)), Layout(2, 9))


def test_composition_shape_divisibility():
    with pytest.raises(ValueError, match="Shape Divisibility"):
        composition(Layout((3, 4), (1, 10)), Layout(3, 2))


def test_complement_of_non_injective_layout():
    with pytest.raises(ValueError, match="Non-injective"):
        complement(Layout((2, 2), (1, 1)))


def test_left_inverse_divisibility():
    with pytest.raises(ValueError, match="Left inverse divisibility"):
        left_inverse(Layout((2, 2), (2, 3)))


def test_upcast_and_downcast_conditions():
    with pytest.raises(ValueError, match="Divisibility condition"):
        upcast(Layout((4, 4), (3, 12)), 2)
    with pytest.raises(ValueError, match="Downcast requires adjacent elements"):
        downcast(Layout((4, 4), (2, 8)), 2)


def test_swizzle_masks_must_not_overlap():
    with pytest.raises(ValueError, match=r"abs\(SShift\) must be more than BBits"):
        Swizzle(3, 1, 2)


def test_coordinate_out_of_range_and_wrong_rank():
    layout = Layout((4, 8))
    with pytest.raises(IndexError, match="out of range"):
        layout(32)
    with pytest.raises(IndexError, match="out of range"):
        layout(4, 0)
    with pytest.raises(IndexError, match="does not match"):
        layout(1, 2, 3)
    with pytest.raises(IndexError, match="does not match"):
        layout(_, 1, 2)


def test_print_layout_needs_rank_2():
    with pytest.raises(ValueError, match="rank-2"):
        print_layout(Layout((2, 2, 2)))


def test_tiler_with_too_many_modes():
    with pytest.raises(ValueError, match="more modes"):
        logical_divide(Layout(8), (2, 2))
    with pytest.raises(ValueError, match="does not divide"):
        tile_to_shape(Layout((3, 3)), (8, 8))


def test_make_layout_bad_arguments():
    with pytest.raises(TypeError):
        make_layout()
