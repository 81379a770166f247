"""cutelite refuses what C++ CuTe does not compile, and computes what it does, at the edges the engine's
limits guard (tests/fixtures/limits_cpp.txt, made by tests/fixtures/gen_limits.sh from compiled C++)."""

import re

import pytest

from cutelite import Layout, Swizzle, ceil_div, complement, composition, left_inverse, logical_divide, logical_product
from cutelite import shape_div, upcast

with open(__file__.rsplit("/", 1)[0] + "/fixtures/limits_cpp.txt") as f:
    _blocks = f.read().split("== ")[1:]
CPP = {b.split("\n", 1)[0]: b.split("\n", 1)[1].strip() for b in _blocks}
SWIZZLES = {k: v for k, v in CPP.items() if k.startswith("Swizzle<")}


def int32(x):
    """x as C++'s 32-bit int holds it (two's complement)."""
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x >> 31 else x


@pytest.mark.parametrize("case", sorted(SWIZZLES))
def test_swizzle_parameters_as_cpp_compiles_them(case):
    b, m, s = map(int, re.findall(r"-?\d+", case))
    if SWIZZLES[case].startswith("error:"):
        with pytest.raises(ValueError, match=r"Swizzle<"):
            Swizzle(b, m, s)
        return
    sw = Swizzle(b, m, s)
    assert [int32(sw.yyy_msk), int32(sw.zzz_msk), int32(sw(12345))] == [int(v) for v in SWIZZLES[case].split()]


def test_the_swizzle_cases_cover_both_sides_of_the_limit():
    assert sum(v.startswith("error:") for v in SWIZZLES.values()) >= 8
    assert sum(not v.startswith("error:") for v in SWIZZLES.values()) >= 8


@pytest.mark.parametrize("case, call", [
    ("shape_div(_4,_0)", lambda: shape_div(4, 0)),
    ("ceil_div(_4,_0)", lambda: ceil_div(4, 0)),
    ("upcast<0>((_4,_8):(_1,_4))", lambda: upcast(Layout((4, 8)), 0)),
    ("composition((_4,_8):(_1,_4), ())", lambda: composition(Layout((4, 8)), ())),
])
def test_what_cpp_does_not_compile_is_a_value_error(case, call):
    assert CPP[case].startswith(("error:", "crash:"))
    with pytest.raises(ValueError):
        call()


@pytest.mark.parametrize("case, call", [
    ("composition((_4,_6):(_6,_1), _8:_3)", lambda: composition(Layout((4, 6), (6, 1)), Layout(8, 3))),
    ("composition((_4,_6):(_1,_8), _4:_3)", lambda: composition(Layout((4, 6), (1, 8)), Layout(4, 3))),
    ("composition((_4,_6):(_1,_8), _6:_3)", lambda: composition(Layout((4, 6), (1, 8)), Layout(6, 3))),
    ("composition((_6,_2):(_1,_7), (_3,_2):(_2,_3))", lambda: composition(Layout((6, 2), (1, 7)), Layout((3, 2), (2, 3)))),
    ("composition((_4,_6,_8):(_2,_3,_5), _6:_3)", lambda: composition(Layout((4, 6, 8), (2, 3, 5)), Layout(6, 3))),
    ("composition((_4,_8):(_1,_4), -4)", lambda: composition(Layout((4, 8)), -4)),
    ("composition(_4:_1, _8:_1)", lambda: composition(Layout(4), Layout(8))),
    ("left_inverse((_2,_2):(_1,_1))", lambda: left_inverse(Layout((2, 2), (1, 1)))),
    ("complement((_2,_2):(_1,_3))", lambda: complement(Layout((2, 2), (1, 3)))),
    ("logical_divide(_6:_1, _4:_1)", lambda: logical_divide(Layout(6), Layout(4))),
    ("composition((_4,_8):(_1,_4), _0)", lambda: composition(Layout((4, 8)), 0)),
    ("logical_divide((_4,_8):(_1,_4), ())", lambda: logical_divide(Layout((4, 8)), ())),
    ("logical_product((_4,_8):(_1,_4), ())", lambda: logical_product(Layout((4, 8)), ())),
])
def test_questionable_inputs_cpp_accepts_give_what_cpp_gives(case, call):
    assert str(call()) == CPP[case]
