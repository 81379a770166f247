"""make_tensor_like and make_fragment_like on a partition: owning register-style tensors. Expected layouts are
what C++ CuTe (CUTLASS 4.2 headers, compiled as host code) prints for the same calls:
make_tensor_like(t) is laid out by make_layout_like (compact, modes in t's stride order), make_fragment_like(t)
by make_fragment_like (mode 0 compact column-major first, the rest in stride order)."""

import numpy as np
import pytest

from cutelite import Layout, _, local_partition, make_fragment_like, make_identity_tensor, make_tensor, make_tensor_like


@pytest.mark.parametrize("layout, like, fragment", [
    # local_partition of a (64,8) column-major tile among (16,16) threads, thread 17, Step<_1,X>
    (Layout((4, 8), (16, 64)), "(_4,_8):(_1,_4)", "(_4,(_8)):(_1,(_4))"),
    (Layout((4, 8), (64, 2)), "(_4,_8):(_8,_1)", "(_4,(_8)):(_1,(_4))"),
    (Layout((2, 3, 4), (1, 8, 2)), "(_2,_3,_4):(_1,_8,_2)", "(_2,_3,_4):(_1,_8,_2)"),
    # partition_A of the same tile by a UniversalFMA TiledMMA of (16,16,1) threads, thread 17
    (Layout((1, 4, 8), (0, 16, 64)), "(_1,_4,_8):(_0,_1,_4)", "(_1,_4,_8):(_0,_1,_4)"),
])
def test_like_layouts_match_cpp(layout, like, fragment):
    src = make_tensor(np.arange(1024, dtype=np.float32), layout)
    assert str(make_tensor_like(src).layout) == like
    assert str(make_fragment_like(src).layout) == fragment


def test_partition_then_register_copy():
    sA = make_tensor(np.arange(64 * 8, dtype=np.float16), Layout((64, 8)))
    part = local_partition(sA, Layout((16, 16)), 17, (1, _))
    reg = make_tensor_like(part)
    assert str(part.layout) == "(_4,_8):(_16,_64)"            # C++ prints the same partition
    assert reg.engine.dtype == np.float16 and reg.engine.size == 32 and not reg.engine.any()
    assert not np.shares_memory(reg.engine, sA.engine)
    for i in range(32):                                       # copy through both layouts
        reg[i] = part(i)
    assert np.array_equal(reg.to_numpy(), part.to_numpy())


def test_refuses_what_is_not_a_tensor_with_memory():
    with pytest.raises(TypeError, match="make_tensor_like: expected a Tensor"):
        make_tensor_like(Layout((4, 8)))
    with pytest.raises(TypeError, match="make_tensor_like: .* is a coordinate tensor"):
        make_tensor_like(make_identity_tensor((4, 8)))
