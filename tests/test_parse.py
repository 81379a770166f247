"""parse_layout reads CuTe's printed text back: parse(str(L)) == L with the same text, static and dynamic."""

import pytest
from hypothesis import given, settings, strategies as st

from cutelite import Layout, dyn, composition, Swizzle
from cutelite.int_tuple import Dyn
from cutelite.parse import parse_layout, parse_int_tuple, parse_operand
from strategies import layouts


def _dynamize(t, mask):
    """Make some ints of an IntTuple dynamic, chosen by the bits of mask (cycled)."""
    out, bits = [], iter(mask * 8)

    def go(v):
        if isinstance(v, tuple):
            return tuple(go(x) for x in v)
        return dyn(v) if next(bits) else v
    return go(t)


@settings(max_examples=300, deadline=None)
@given(layouts(), st.lists(st.booleans(), min_size=1, max_size=6))
def test_round_trip_random_layouts(layout, mask):
    for lay in (layout, Layout(_dynamize(layout.shape, mask), _dynamize(layout.stride, mask[::-1]))):
        back = parse_layout(str(lay))
        assert back == lay
        assert str(back) == str(lay)


@pytest.mark.parametrize("text", [
    "(_4,_8):(_1,_4)", "(4,_8):(_1,4)", "_12:_0", "(_16,(_6)):(_1,(_48))",
    "((_2,_2),(_2,_3)):((_4,_1),(_2,_8))", "(_4,8):(_-1,_4)", "Sw<3,3,3> o _0 o (_8,_64):(_64,_1)",
])
def test_round_trip_documented_texts(text):
    assert str(parse_layout(text)) == text


def test_static_and_dynamic_kinds():
    lay = parse_layout("(4,_8):(_1,4)")
    assert isinstance(lay.shape[0], Dyn) and not isinstance(lay.shape[1], Dyn)
    assert parse_int_tuple("(_2,(3,_4))") == (2, (3, 4))
    assert str(parse_layout("(_8,_64):(_64,_1)").shape) == "(8, 64)"


def test_swizzled_layout():
    lay = composition(Swizzle(3, 3, 3), Layout((8, 64), (64, 1)))
    assert parse_layout(str(lay)) == lay


def test_operands():
    assert str(parse_operand("(4,8):(1,4)")) == "(_4,_8):(_1,_4)"
    assert str(parse_operand("((4,8),(1,4))")) == "(_4,_8):(_1,_4)"
    assert parse_operand("(4,8)") == (4, 8)
    assert parse_operand("7") == 7
    tiler = parse_operand("(3:3, (2,4):(1,8))")
    assert [str(t) for t in tiler] == ["_3:_3", "(_2,_4):(_1,_8)"]


@pytest.mark.parametrize("text", ["", "(4,8", "(4,8):(1,4", "__import__('os')", "(4,8):(1,4,2)", "(1:2):3",
                                  "[4, 8]", "4.5"])
def test_bad_text_raises_value_error(text):
    with pytest.raises(ValueError):
        parse_operand(text)
    if text:
        with pytest.raises(ValueError):
            parse_layout(text)
