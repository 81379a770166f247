"""upcast / downcast of a swizzled layout, as compiled C++ CuTe prints them: the swizzle's base M moves by
log2(N) (an upcast below 0 takes the missing bits from B), the offset is divided or multiplied, the inner
layout is recast. Expected text: CUTLASS 4.2's headers (the nvidia-cutlass wheel's include/), g++ -std=c++17,
this program:

    auto L  = composition(Swizzle<3,3,3>{}, Layout<Shape<_8,_64>, Stride<_64,_1>>{});
    auto L2 = composition(Swizzle<2,3,3>{}, Layout<Shape<_8,_32>, Stride<_32,_1>>{});
    print(downcast<2>(L)); print(upcast<8>(L)); print(upcast<16>(L)); print(upcast<2>(L2));
    print(recast_layout<uint16_t, uint8_t>(L));
"""

import pytest

from cutelite import Layout, Swizzle, composition, downcast, upcast

L = composition(Swizzle(3, 3, 3), Layout((8, 64), (64, 1)))
L2 = composition(Swizzle(2, 3, 3), Layout((8, 32), (32, 1)))


@pytest.mark.parametrize("got,cpp", [
    (lambda: downcast(L, 2), "Sw<3,4,3> o _0 o (_8,_128):(_128,_1)"),    # halves -> bytes: Sw<3,4,3>
    (lambda: upcast(L, 8), "Sw<3,0,3> o _0 o (_8,_8):(_8,_1)"),          # 8 halves -> one 16-byte unit
    (lambda: upcast(L, 16), "Sw<2,0,3> o _0 o (_8,_4):(_4,_1)"),         # M would be -1: one bit of B goes
    (lambda: upcast(L2, 2), "Sw<2,2,3> o _0 o (_8,_16):(_16,_1)"),
])
def test_recast_of_a_swizzled_layout_is_what_cpp_prints(got, cpp):
    assert str(got()) == cpp


def test_the_recast_swizzle_reaches_the_same_bytes():
    """downcast by 2 (halves -> bytes): byte b of element (r, c) is at byte 2 L(r, c) + b."""
    B = downcast(L, 2)
    assert all(B(r, c) == 2 * L(r, c // 2) + c % 2 for r in range(8) for c in range(128))


def test_recast_by_a_non_power_of_two_is_refused():
    with pytest.raises(ValueError, match="power of two"):
        upcast(L, 3)
