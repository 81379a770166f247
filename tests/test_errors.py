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


def test_coordinate_of_the_wrong_rank():
    """C++ does not compile these ("Mismatched Ranks"); a coordinate past the shape it computes
    (tests/test_extend.py)."""
    layout = Layout((4, 8))
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


# ---- the wrong kinds of issue 18: each a TypeError or ValueError naming the operation -------------------
import numpy as np  # noqa: E402

from cutelite import (  # noqa: E402
    ceil_div, coalesce, append, prepend, bank_of, flatten, inner_partition, local_partition, local_tile,
    make_mma_atom, make_tiled_mma, make_tensor, outer_partition, owner_of, prefix_product, shape_div,
    swizzle_for, tile_size, Tensor, OutOfRange,
)
from cutelite.errors import MAX_DEPTH, QUOTE  # noqa: E402
from cutelite.int_tuple import flatten as flatten_tuple  # noqa: E402
from cutelite.parse import parse_layout, parse_operand  # noqa: E402


def nested(depth, leaf=2):
    for _ in range(depth):
        leaf = (leaf,)
    return leaf


@pytest.mark.parametrize("fn", [append, prepend])
def test_append_and_prepend_take_a_layout(fn):
    with pytest.raises(TypeError, match=f"{fn.__name__}: expected a Layout, got 4"):
        fn(Layout(4), 4)
    with pytest.raises(ValueError, match="at least 0"):
        fn(Layout(4), Layout(2), -1)


@pytest.mark.parametrize("text", [None, 4, b"4:1"])
def test_parse_layout_takes_text(text):
    with pytest.raises(TypeError, match="parse_layout: expected text"):
        parse_layout(text)


@pytest.mark.parametrize("fn", [local_tile, inner_partition, outer_partition])
def test_partitions_take_tensors_as_in_cpp(fn):
    with pytest.raises(TypeError, match=f"{fn.__name__}: expected a Tensor, got .*only tensors"):
        fn(Layout((32, 32)), (8, 8), (1, _))


def test_local_partition_takes_a_tensor_as_in_cpp():
    with pytest.raises(TypeError, match="local_partition: expected a Tensor"):
        local_partition(Layout((32, 32)), Layout((4, 8)), 3)


@pytest.mark.parametrize("call", [
    lambda: parse_layout("(" * 330 + "1" + ")" * 330 + ":" + "(" * 330 + "1" + ")" * 330),
    lambda: parse_operand("(" * 330 + "1" + ")" * 330 + ":1"),
    lambda: Layout(nested(2000)),
    lambda: Layout(4, nested(2000)),
    lambda: composition(Layout(4), nested(2000)),
    lambda: logical_divide(Layout(4), nested(2000)),
    lambda: prefix_product(nested(2000)),
    lambda: shape_div(nested(2000), 2),
    lambda: Layout((4, 8))(nested(2000, 1)),
])
def test_nesting_past_the_depth_limit_is_a_value_error_naming_it(call):
    with pytest.raises(ValueError, match=f"more than {MAX_DEPTH} levels deep"):
        call()


def test_nesting_up_to_the_limit_works():
    deep = nested(MAX_DEPTH - 1, 4)
    lay = Layout(deep)
    assert flatten(lay).shape == (4,) and str(coalesce(lay)) == "_4:_1"
    assert prefix_product(deep) == nested(MAX_DEPTH - 1, 1)
    assert flatten_tuple(nested(2000)) == (2,)   # flatten of an IntTuple walks any depth


@pytest.mark.parametrize("call, op", [
    (lambda: shape_div(4, 0), "shape_div"), (lambda: ceil_div(4, 0), "ceil_div"),
    (lambda: upcast(Layout((4, 8)), 0), "upcast"), (lambda: downcast(Layout((4, 8)), 0), "downcast"),
    (lambda: swizzle_for(64, 0), "swizzle_for"), (lambda: swizzle_for(0, 2), "swizzle_for"),
    (lambda: swizzle_for(48, 2), "swizzle_for"), (lambda: bank_of(1.5), "bank_of"), (lambda: bank_of(-4), "bank_of"),
    (lambda: coalesce(Layout((4, 8)), "x"), "coalesce"),
    (lambda: Swizzle(10 ** 30, 0, 10 ** 30), "Swizzle"),
])
def test_nonsense_values_are_refused_naming_the_operation(call, op):
    with pytest.raises((TypeError, ValueError), match=op):
        call()


def test_tile_size_past_the_modes_is_out_of_range():
    mma = make_tiled_mma(make_mma_atom("SM80_16x8x8_F16F16F16F16_TN"), Layout((2, 2, 1)))
    assert [tile_size(mma, i) for i in range(3)] == [32, 16, 8]
    for i in (5, 3, -1):
        with pytest.raises(OutOfRange, match="tile_size: mode"):
            tile_size(mma, i)


def test_owner_of_refuses_a_quad_pair_the_warp_does_not_have():
    volta = make_mma_atom("SM70_8x8x4_F16F16F16F16_TN")
    assert owner_of(volta, "A", 1, 2, quadpair=3)[0] == owner_of(volta, "A", 1, 2)[0] + 12
    with pytest.raises(ValueError, match="owner_of: quadpair must be in 0..3"):
        owner_of(volta, "A", 1, 2, quadpair=9)
    with pytest.raises(ValueError, match="owner_of: quadpair must be in 0..0"):
        owner_of(make_mma_atom("SM80_16x8x8_F16F16F16F16_TN"), "A", 1, 2, quadpair=1)


def test_a_tensor_never_wraps_through_negative_indexing():
    data = np.arange(8.0)
    t = Tensor(data, Layout(4, -1))            # offset 0 with stride -1 reaches -1, -2, -3
    assert t(0) == 0.0
    with pytest.raises(OutOfRange, match="reaches element -1"):
        t(1)
    with pytest.raises(OutOfRange):
        t[2] = 1.0
    with pytest.raises(OutOfRange):
        t.to_numpy()
    assert Tensor(data, Layout(4, -1), 3).to_numpy().tolist() == [3.0, 2.0, 1.0, 0.0]
    with pytest.raises(ValueError, match="make_tensor"):
        make_tensor(data, Layout(4, -1))


@pytest.mark.parametrize("text", ["(" + "1," * 50000 + "x", "9" * 5000, "_" + "9" * 5000, "(" * 5000])
def test_parser_messages_quote_at_most_about_200_characters(text):
    for fn in (parse_layout, parse_operand):
        with pytest.raises(ValueError) as e:
            fn(text)
        assert len(str(e.value)) < 2 * QUOTE + 200, (fn.__name__, len(str(e.value)))


@pytest.mark.parametrize("text", ["(\u0664,8):(1,4)", "(4,8):(1,\u0664)", "\u0664", "(\uff14,8)", "(4,8):(\u0661,4)"])
def test_parser_refuses_digits_other_than_ascii(text):
    for fn in (parse_layout, parse_operand):
        with pytest.raises(ValueError, match=fn.__name__):
            fn(text)


def test_swizzle_masks_past_32_bits_are_refused():
    assert Swizzle(3, 4, 25)(1) == 1
    with pytest.raises(ValueError, match="32-bit"):
        Swizzle(3, 4, 26)
