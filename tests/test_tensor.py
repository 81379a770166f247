"""cutelite.tensor: element access, slicing and partitioning, checked against NumPy slicing (independent of
the layout algebra) and against the examples of CuTe's tensor documentation."""

import itertools

import numpy as np
import pytest

from cutelite import Layout, LayoutRight, _, make_layout, right_inverse, size, Swizzle
from cutelite.tensor import (
    Tensor, make_tensor, composition, zipped_divide, logical_divide, dice, get_flat_coord,
    inner_partition, outer_partition, local_tile, local_partition, tv_partition, owner_table,
    offsets_of,
)


def colmajor(M, N):
    """An M x N column-major tensor over arange(M*N), and the same matrix as a NumPy array."""
    mem = np.arange(M * N)
    return make_tensor(mem, Layout((M, N))), mem.reshape(N, M).T


def rowmajor(M, N):
    mem = np.arange(M * N)
    return make_tensor(mem, make_layout((M, N), LayoutRight)), mem.reshape(M, N)


# ---- element access, views, to_numpy ------------------------------------------------------------------
@pytest.mark.parametrize("maker", [colmajor, rowmajor])
def test_elements_and_to_numpy_match_numpy(maker):
    t, ref = maker(6, 10)
    assert t.shape == (6, 10) and t.size == 60 and t.rank == 2
    for m, n in itertools.product(range(6), range(10)):
        assert t(m, n) == ref[m, n] and t[m, n] == ref[m, n]
    assert np.array_equal(t.to_numpy(), ref)


def test_hierarchical_coordinates():
    mem = np.arange(24)
    t = make_tensor(mem, Layout((3, (2, 4)), (1, (3, 6))))  # a compact column-major 3 x 8 in disguise
    ref = mem.reshape(8, 3).T
    for m, n in itertools.product(range(3), range(8)):
        assert t(m, (n % 2, n // 2)) == ref[m, n]
    assert np.array_equal(t.to_numpy(), ref)


def test_slices_are_views_that_write_through():
    mem = np.zeros(4 * 8, dtype=np.int32)
    t = make_tensor(mem, make_layout((4, 8), LayoutRight))
    ref = mem.reshape(4, 8)
    col = t(_, 3)
    assert col.engine is t.engine and col.shape == (4,)
    col[2] = 7
    assert ref[2, 3] == 7
    t[1, _] = np.arange(8)
    assert np.array_equal(ref[1], np.arange(8))
    assert np.array_equal(t(3, _).to_numpy(), ref[3, :])
    t[0, 5] = -1
    assert ref[0, 5] == -1


def test_make_tensor_views_nd_arrays_and_checks_bounds():
    a = np.arange(12).reshape(3, 4)           # C order: memory is row-major
    t = make_tensor(a, make_layout((3, 4), LayoutRight))
    t[2, 1] = 100
    assert a[2, 1] == 100
    with pytest.raises(ValueError):
        make_tensor(np.arange(10), Layout((4, 4)))
    own = make_tensor(Layout((4, 8), (1, 5)), dtype=np.float64)
    assert own.engine.size == 3 + 7 * 5 + 1 and own.engine.dtype == np.float64
    with pytest.raises(TypeError):
        Tensor(np.zeros((2, 2)), Layout(4))


def test_swizzled_tensor_reads_through_the_swizzle():
    sw = composition(Swizzle(1, 0, 2), Layout((4, 4), (4, 1)))
    mem = np.arange(16)
    t = make_tensor(mem, sw)
    for m, n in itertools.product(range(4), range(4)):
        off = 4 * m + n
        off ^= (off >> 2) & 1                 # Swizzle<1,0,2> by hand: bit 2 into bit 0
        assert t(m, n) == mem[off]
    row = t(2, _)
    assert [row(n) for n in range(4)] == [t(2, n) for n in range(4)]


# ---- divide and partition (CuTe docs, tensor page: an 8 x 24 tensor, 4 x 8 tiles) ----------------------
def test_zipped_divide_of_a_tensor_docs():
    t, _ref = colmajor(8, 24)
    z = zipped_divide(t, (4, 8))
    assert str(z.layout) == "((_4,_8),(_2,_3)):((_1,_8),(_4,_64))"
    assert z.engine is t.engine


@pytest.mark.parametrize("bm,bn", list(itertools.product(range(2), range(3))))
def test_local_tile_is_numpy_block_slicing(bm, bn):
    for maker in (colmajor, rowmajor):
        t, ref = maker(8, 24)
        tile = local_tile(t, (4, 8), (bm, bn))
        assert tile.shape == (4, 8)
        assert np.array_equal(tile.to_numpy(), ref[4 * bm:4 * bm + 4, 8 * bn:8 * bn + 8])
        assert np.array_equal(inner_partition(t, (4, 8), (bm, bn)).to_numpy(), tile.to_numpy())


def test_local_tile_int_coord_is_column_major_tile_index():
    t, ref = colmajor(8, 24)
    tile = local_tile(t, (4, 8), 3)          # rest mode (2, 3): index 3 is tile (1, 1)
    assert np.array_equal(tile.to_numpy(), ref[4:8, 8:16])


def test_outer_partition_takes_one_element_per_tile():
    t, ref = colmajor(8, 24)
    for m, n in itertools.product(range(4), range(8)):
        part = outer_partition(t, (4, 8), (m, n))
        assert part.shape == (2, 3)
        assert np.array_equal(part.to_numpy(), ref[m::4, n::8])
    assert np.array_equal(outer_partition(t, (4, 8), 5).to_numpy(), ref[1::4, 1::8])


def test_local_partition_docs_example():
    # CuTe docs: data (_16,_64), Layout<Shape<_2,_16>> threads: each thread gets (_8,_4)
    t, ref = colmajor(16, 64)
    thr = Layout((2, 16))
    seen = np.zeros((16, 64), dtype=int)
    for i in range(32):
        p = local_partition(t, thr, i)
        assert p.shape == (8, 4)
        m, n = i % 2, i // 2                       # column-major thread index
        assert np.array_equal(p.to_numpy(), ref[m::2, n::16])
        seen[m::2, n::16] += 1
    assert (seen == 1).all()


def test_local_partition_with_a_row_major_thread_layout():
    t, ref = rowmajor(8, 8)
    thr = Layout((2, 4), (4, 1))                   # thread i sits at (i // 4, i % 4)
    for i in range(8):
        assert np.array_equal(local_partition(t, thr, i).to_numpy(), ref[i // 4::2, i % 4::4])


def test_projections_docs_example():
    # CuTe docs: cta_tiler (32, 64, 4), coord (bx, by, _); Step<_1,X,_1> for A (M,K) gives (32, 4, k)
    assert dice((1, _, 1), (32, 64, 4)) == (32, 4)
    assert dice((_, 1, 1), (3, 5, _)) == (5, _)
    # C++ dice concatenates what each sub-projection keeps (filter_tuple in underscore.hpp): it flattens
    assert dice(((1, _), 1), ((2, 3), 4)) == (2, 4)
    mem = np.arange(64 * 16)
    A = make_tensor(mem, Layout((64, 16)))
    ref = mem.reshape(16, 64).T
    ctaA = local_tile(A, (32, 64, 4), (1, 0, _), (1, _, 1))
    assert ctaA.shape == (32, 4, 4)
    for k in range(4):
        assert np.array_equal(ctaA(_, _, k).to_numpy(), ref[32:64, 4 * k:4 * k + 4])
    # thread projection: Layout<(2,16,1),(16,1,0)>, Step<_1,X,_1> for A: (M/2, K/1)
    thr = Layout((2, 16, 1), (16, 1, 0))
    assert dice((1, _, 1), thr) == Layout((2, 1), (16, 0))
    for i in range(32):
        p = local_partition(A, thr, i, (1, _, 1))
        assert np.array_equal(p.to_numpy(), ref[(i // 16)::2, :])


def test_get_flat_coord_inverts_the_thread_layout():
    for lay in (Layout((2, 16)), Layout((2, 4), (4, 1)), Layout(((2, 2), 4), ((1, 8), 2))):
        for i in range(size(lay)):
            c = get_flat_coord(lay, i)
            modes = [Layout(lay.shape[k], lay.stride[k]) for k in range(2)]
            assert sum(modes[k](c[k]) for k in range(2)) == i


# ---- thread-value layouts ------------------------------------------------------------------------------
TV = Layout(((2, 4), (2, 2)), ((8, 1), (4, 16)))   # CuTe docs: (T8, V4) -> 4 x 8 tile


def test_tv_partition_docs_example():
    t, ref = rowmajor(4, 8)
    # by hand from the strides: thread (t0, t1) = (t % 2, t // 2), value (v0, v1) = (v % 2, v // 2);
    # index 8 t0 + t1 + 4 v0 + 16 v1 into the column-major 4 x 8 tile: row = index % 4, col = index // 4
    for thr in range(8):
        part = tv_partition(t, TV, thr)
        assert part.shape == ((2, 2),) and part.size == 4
        want = []
        for v in range(4):
            idx = 8 * (thr % 2) + thr // 2 + 4 * (v % 2) + 16 * (v // 2)
            want.append(ref[idx % 4, idx // 4])
        assert [part(v) for v in range(4)] == want
    # thread 0 holds row 0, columns 0, 1, 4, 5 (the docs' picture)
    assert [tv_partition(t, TV, 0)(v) for v in range(4)] == [0, 1, 4, 5]


def brute_owner(tv, M, N):
    T = size(tv, 0)
    th, va = -np.ones((M, N), int), -np.ones((M, N), int)
    for j in range(size(tv)):
        i = tv(j)
        if th[i % M, i // M] < 0:
            th[i % M, i // M], va[i % M, i // M] = j % T, j // T
    return th, va


@pytest.mark.parametrize("tv,M,N", [
    (TV, 4, 8),
    (Layout((32, 4), (1, 32)), 32, 4),            # thread t owns row t
    (Layout((32, 4), (4, 1)), 8, 16),             # thread t owns 4 consecutive (column-major) elements
    (Layout(((4, 8), 2), ((16, 1), 8)), 8, 8),    # an m16n8-style quad pattern, shrunk
])
def test_owner_table_against_brute_force(tv, M, N):
    th, va = owner_table(tv, (M, N))
    bt, bv = brute_owner(tv, M, N)
    assert np.array_equal(th, bt) and np.array_equal(va, bv)
    # and every (thread, value) named in the table maps back to its element
    for m, n in itertools.product(range(M), range(N)):
        assert tv(int(th[m, n]), int(va[m, n])) == m + M * n


def test_owner_table_rows_of_the_docs_example():
    th, va = owner_table(TV, (4, 8))
    assert th[0].tolist() == [0, 0, 1, 1, 0, 0, 1, 1]
    assert th[:, 0].tolist() == [0, 2, 4, 6]
    assert va[0].tolist() == [0, 1, 0, 1, 2, 3, 2, 3]
    inv = right_inverse(TV)
    assert all(TV(inv(i)) == i for i in range(32))


def test_tv_composition_is_a_tensor_of_thread_by_value():
    t, ref = rowmajor(4, 8)
    tv = composition(t, TV)
    assert tv.shape == TV.shape and tv.engine is t.engine
    vals = tv.to_numpy()                       # (8 threads, 4 values)
    assert vals.shape == (8, 4)
    assert sorted(vals.ravel().tolist()) == list(range(32))
