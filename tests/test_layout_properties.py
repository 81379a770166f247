"""Post-conditions of every algebra operation, checked on random static layouts."""

from hypothesis import given, settings, assume
from hypothesis import strategies as st

from cutelite import (
    Layout, coalesce, filter, composition, complement, right_inverse, left_inverse, logical_divide,
    zipped_divide, tiled_divide, flat_divide, logical_product, blocked_product, raked_product, size, cosize,
    depth, rank, make_layout, max_common_vector, max_common_layout, upcast, downcast, flatten,
)
from cutelite.int_tuple import crd2idx, idx2crd, flatten as flat_tuple
from strategies import layouts

FAST = settings(max_examples=150, deadline=None)


def strongly_admissible(A, B):
    """Every stride of B divides, or is divided by, each prefix product of A's coalesced shape.

    (C++ CuTe accepts a weaker condition, under which composition need not be function composition.)
    """
    prefix, p = [], 1
    for s in flat_tuple((coalesce(A).shape,)):
        p *= s
        prefix.append(p)
    return all(d == 0 or all(d % q == 0 or q % d == 0 for q in prefix)
               for d in flat_tuple((B.stride,)))


def offsets(layout):
    return [layout(i) for i in range(size(layout))]


@FAST
@given(layouts())
def test_coalesce_keeps_size_and_function(L):
    C = coalesce(L)
    assert size(C) == size(L)
    assert offsets(C) == offsets(L)
    assert depth(C) <= 1


@FAST
@given(layouts())
def test_coalesce_by_mode_keeps_function(L):
    profile = tuple(1 for _ in range(rank(L)))
    C = coalesce(L, profile)
    assert rank(C) == rank(L)
    assert offsets(C) == offsets(L)


@FAST
@given(layouts())
def test_filter_keeps_image(L):
    F = filter(L)
    assert set(offsets(F)) == set(offsets(L))
    assert all(d != 0 for d in flat_tuple((F.stride,))) or size(F) == 1


@FAST
@given(layouts(strides="injective"), layouts(max_leaves=3, max_size=64, strides="injective"))
def test_composition_is_function_composition(A, B):
    assume(max(offsets(B)) < size(A))  # B stays inside A's domain
    assume(strongly_admissible(A, B))
    try:
        R = composition(A, B)
    except ValueError:
        assume(False)
    assert size(R) == size(B)
    for i in range(size(B)):
        assert R(i) == A(B(i)), (A, B, R, i)


@FAST
@given(layouts(strides="injective"), st.integers(1, 4))
def test_complement_is_disjoint_ordered_and_covers(L, k):
    cotarget = cosize(L) * k
    C = complement(L, cotarget)
    image = set(offsets(L))
    assert set(offsets(C)) & image == {0}
    strides = [d for d in flat_tuple((C.stride,)) if d != 0]
    assert strides == sorted(strides)
    assert size(L) * size(C) >= cotarget
    # together they are a bijection onto their combined codomain
    full = make_layout(L, C)
    assert len(set(offsets(full))) == size(full)


@FAST
@given(layouts())
def test_right_inverse(L):
    R = right_inverse(L)
    for i in range(size(R)):
        assert L(R(i)) == i


@FAST
@given(layouts(strides="injective"))
def test_left_inverse(L):
    Li = left_inverse(L)
    for i in range(size(L)):
        assert Li(L(i)) == i


@FAST
@given(layouts(strides="compact", max_leaves=3), st.sampled_from([1, 2, 4, 8]))
def test_logical_divide_is_composition_with_tile_and_rest(L, t):
    first = flat_tuple((coalesce(L).shape,))[0]
    assume(first % t == 0)
    T = Layout(t)
    R = logical_divide(L, T)
    assert size(R) == size(L)
    assert rank(R) == 2
    for c in range(t):
        assert R(c, 0) == L(c)
    Z = zipped_divide(L, T)
    assert offsets(Z) == offsets(R)
    assert offsets(tiled_divide(L, T)) == offsets(R) == offsets(flat_divide(L, T))


@FAST
@given(layouts(strides="injective", max_leaves=2, max_size=16), layouts(strides="compact", max_leaves=2, max_size=16))
def test_logical_product_repeats_block(B, T):
    try:
        R = logical_product(B, T)
    except ValueError:  # the complement of a block with gaps need not divide by the tiler
        assume(False)
    assert size(R) == size(B) * size(T)
    for c in range(size(B)):
        assert R(c, 0) == B(c)
    for c in range(size(B)):
        for j in range(size(T)):
            assert R(c, j) == B(c) + R(0, j)


@FAST
@given(layouts(strides="compact", max_leaves=2, max_size=16), layouts(strides="compact", max_leaves=2, max_size=16))
def test_blocked_and_raked_products_are_permutations_of_each_other(B, T):
    bp, rp = blocked_product(B, T), raked_product(B, T)
    assert size(bp) == size(rp) == size(B) * size(T)
    assert rank(bp) == max(rank(B), rank(T))
    assert sorted(offsets(bp)) == sorted(offsets(rp))


@FAST
@given(layouts(strides="compact"))
def test_max_common_vector_of_a_layout_with_itself(L):
    assert max_common_vector(L, L) >= 1
    common = max_common_layout(L, L)
    for i in range(size(common)):
        assert L(common(i)) == i


@FAST
@given(layouts())
def test_idx2crd_inverts_colexicographic_crd2idx(L):
    for i in range(size(L)):
        c = idx2crd(i, L.shape)
        assert crd2idx(c, L.shape) == i
        assert L(c) == L(i)


@FAST
@given(layouts(strides="compact"), st.sampled_from([2, 4]))
def test_downcast_then_upcast_round_trips(L, n):
    assume(any(d == 1 for d in flat_tuple((L.stride,))))
    assert offsets(coalesce(upcast(downcast(L, n), n))) == offsets(coalesce(L))
