"""ScaledBasis, ArithmeticTuple and identity tensors: expected values derived by hand from CuTe's
definitions (arithmetic_tuple.hpp, layout.hpp, tensor_impl.hpp). The C++ oracle is test_identity_oracle.py.
"""
import itertools

import pytest

from cutelite import (
    E, ArithmeticTuple, Layout, ScaledBasis, _, as_arithmetic_tuple, coalesce, complement, composition, coprofile,
    coshape, cosize, dyn, elem_less, idx2crd, local_partition, local_tile, make_copy_atom, make_identity_layout,
    make_identity_tensor, make_coord_tensor, make_mma_atom, make_tensor, make_tiled_copy, make_tiled_mma, size,
    zipped_divide,
)
from cutelite.int_tuple import fmt, product_each


def test_basis_printing():
    assert str(E(0)) == "_1@0" and str(E(1)) == "_1@1"
    assert str(E()) == "_1"                       # no mode: just the value
    assert str(E(1, 0)) == "_1@0@1"               # mode 0 of mode 1, printed innermost first
    assert str(3 * E(1)) == "_3@1" and str(dyn(3) * E(1)) == "3@1" and str(E(0) * 0) == "_0@0"


def test_basis_arithmetic():
    assert E(0) + E(1) == (1, 1) and isinstance(E(0) + E(1), ArithmeticTuple)
    assert str(2 * E(0) + dyn(3) * E(0)) == "(5)"                 # a sum of bases is a tuple, even of one mode
    assert as_arithmetic_tuple(E(1, 0)) == (0, (1,))
    assert str(E(0, 1) + E(1)) == "((_0,_1),_1)"
    assert ArithmeticTuple((1, 2)) + (0, 3, 4) == (1, 5, 4)      # the shorter is padded with _0
    assert 0 + E(1) == E(1) and 0 + ArithmeticTuple((1, 2)) == (1, 2)
    with pytest.raises(TypeError, match="static _0"):
        1 + E(1)
    with pytest.raises(TypeError, match="mul"):
        E(0) * E(1)
    with pytest.raises(TypeError, match="ScaledBasis"):
        ScaledBasis(1.5, (0,))


def test_identity_layout_maps_index_to_coordinate():
    L = make_identity_layout((4, 8))
    assert str(L) == "(_4,_8):(_1@0,_1@1)"
    assert L(9) == (1, 2) and str(L(9)) == "(_1,_2)" and str(L(dyn(9))) == "(1,2)"
    for i in range(32):
        assert L(i) == idx2crd(i, (4, 8))
    nested = make_identity_layout(((2, 3), 4))
    assert str(nested) == "((_2,_3),_4):((_1@0@0,_1@1@0),_1@1)"
    assert nested(7) == ((1, 0), 1)
    assert str(make_identity_layout(8)) == "_8:_1" and make_identity_layout(8)(3) == E() * 3


def test_coshape_coprofile_cosize():
    L = make_identity_layout(((2, 3), 4))
    assert fmt(coprofile(L)) == "((_0,_0),_0)" and fmt(coshape(L)) == "((_2,_3),_4)" and cosize(L) == 24
    assert fmt(coprofile(Layout((4, 8)))) == "_0" and fmt(coshape(Layout((4, 8), (8, 1)))) == "_32"
    assert fmt(coshape(Layout((4, 8), (E(0), 4 * E(0))))) == "(_32)"


def test_identity_tensor_elements_and_slices():
    T = make_identity_tensor((4, 8))
    assert str(T) == "ArithTuple(_0,_0) o (_4,_8):(_1@0,_1@1)"
    for m, n in itertools.product(range(4), range(8)):
        assert T(m, n) == (m, n)
    assert str(T(_, dyn(3))) == "ArithTuple(_0,3) o (_4):(_1@0)"      # column 3 starts at (0, 3)
    assert T(_, 3)(2) == (2, 3)
    assert str(make_identity_tensor(8)) == "ArithTuple_0 o _8:_1" and make_identity_tensor(8)(5) == 5
    assert str(make_coord_tensor(Layout((2, 2), (E(1), E(0))))) == "ArithTuple(_0,_0) o (_2,_2):(_1@1,_1@0)"


def test_algebra_on_basis_strides():
    L = make_identity_layout((4, 8))
    assert str(coalesce(L)) == "(_4,_8):(_1@0,_1@1)"                 # different modes never merge
    assert str(coalesce(Layout((4, 8), (E(0), 4 * E(0))))) == "_32:_1@0"
    R = composition(L, Layout((2, 16), (16, 1)))
    for i in range(32):
        assert R(i) == L(Layout((2, 16), (16, 1))(i))
    T = make_identity_tensor((8, 12))
    Z = zipped_divide(T, (2, 4))
    for t, r in itertools.product(range(8), range(12)):
        tile, rest = idx2crd(t, (2, 4)), idx2crd(r, (4, 3))
        assert Z(t, r) == (rest[0] * 2 + tile[0], rest[1] * 4 + tile[1])
    tile = local_tile(T, (2, 4), (3, 1))
    assert all(tile(i, j) == (6 + i, 4 + j) for i in range(2) for j in range(4))
    part = local_partition(T, Layout((2, 2)), 3)                    # thread 3 = (1, 1): odd rows and columns
    assert all(part(i, j) == (2 * i + 1, 2 * j + 1) for i in range(4) for j in range(6))


def test_composition_with_basis_strides_on_the_right():
    A = Layout((4, 8), (8, 1))
    assert composition(A, make_identity_layout((4, 8))) == A             # A o identity == A
    R = composition(A, Layout((2, 4), (2 * E(1), E(0))))                 # B's value (2j, i) -> A(i, 2j)
    assert all(R(i, j) == A(j, 2 * i) for i in range(2) for j in range(4))
    with pytest.raises(ValueError, match="composition: B's values have 3 modes"):
        composition(A, Layout(2, E(2)))
    with pytest.raises(ValueError, match="composition: B.s values have 2 modes .* more than the 1 of _4:_8"):
        composition(A, Layout(2, E(0, 1)))


def _coords_of(tensor):
    return [tensor(i) for i in range(size(tensor))]


def test_mma_partition_of_identity_matches_tv_layout():
    mma = make_tiled_mma(make_mma_atom("SM80_16x8x8_F16F16F16F16_TN"), Layout((2, 2, 1)))
    M, N = 32, 16
    tv = mma.get_layoutC_TV()
    T, mem = make_identity_tensor((M, N)), make_tensor(Layout((M, N)))
    seen = set()
    for t in range(size(mma)):
        thr = mma.get_slice(t)
        coords, offsets = _coords_of(thr.partition_C(T)), thr.partition_C(mem)
        for v, c in enumerate(coords):
            assert c == idx2crd(tv(t, v), (M, N))                          # the C TV layout's coordinate
            assert c == idx2crd(int(offsets.offset + offsets.layout(v)), (M, N))   # the memory partition's
            seen.add(c)
    assert len(seen) == M * N


def test_copy_partition_of_identity_matches_memory_partition():
    tc = make_tiled_copy(make_copy_atom("UniversalCopy<uint64_t>", "half_t"), Layout((4, 8), (8, 1)), Layout((1, 4)))
    M, N = 8, 64
    T, mem = make_identity_tensor((M, N)), make_tensor(Layout((M, N)))
    for t in range(size(tc)):
        s = tc.get_slice(t)
        for part in (s.partition_S, s.partition_D):
            p, q = part(T), part(mem)
            assert [q.offset + q.layout(i) for i in range(size(q))] == \
                [c[0] + M * c[1] for c in _coords_of(p)]


def test_predication_with_elem_less():
    T = make_identity_tensor((16, 16))
    tile = local_tile(T, (8, 8), (1, 1))                             # rows 8..15, columns 8..15
    shape = (13, 10)                                                 # the real extents
    pred = [elem_less(tile(i, j), shape) for j in range(8) for i in range(8)]
    assert sum(pred) == 5 * 2
    assert elem_less((1, 2), (2, 3)) and not elem_less((1, 3), (2, 3)) and not elem_less((1, 2, 0), (2, 3))
    assert elem_less((1,), (2, 3))                                   # a shorter tuple compares its own modes
    with pytest.raises(TypeError, match="elem_less"):
        elem_less(1, (2, 3))


def test_errors_name_the_operation():
    L = make_identity_layout((4, 8))
    with pytest.raises(TypeError, match="complement"):
        complement(L)
    with pytest.raises(TypeError, match="stride must hold"):
        Layout((4, 8), (1, "x"))
    T = make_identity_tensor((4, 8))
    with pytest.raises(TypeError, match="coordinate tensor"):
        T[0, 0] = 1
    with pytest.raises(TypeError, match="coordinate tensor"):
        make_tiled_mma(make_mma_atom("SM80_16x8x8_F16F16F16F16_TN")).get_slice(0).partition_fragment_C(
            make_identity_tensor((16, 8)))
    with pytest.raises(TypeError, match="add"):
        dyn(1) + E(0)


def test_to_numpy_of_identity_tensor():
    a = make_identity_tensor((2, 3)).to_numpy()
    assert a.shape == product_each((2, 3)) and a[1, 2] == (1, 2)


def test_identity_tensors_need_no_numpy():
    from test_engine_imports import run_blocked
    out = run_blocked("""
        import cutelite as c
        mma = c.make_tiled_mma(c.make_mma_atom("SM80_16x8x8_F16F16F16F16_TN"))
        print(mma.get_slice(5).partition_C(c.make_identity_tensor((16, 8))))
    """)
    assert out == "ArithTuple(1,2) o ((_2,_2),_1,_1):((_1@1,_8@0),_0,_0)\n"
