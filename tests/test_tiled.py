"""TiledMMA / TiledCopy: the seed article's C++ printouts, and the properties every tiling must have.

Expected text comes from C++ CuTe's printouts quoted in ../shared/seeds/000_* (SM80_16x8x16, 2x2x1 atoms,
permutation 32x32x16, LDSM_T copies; thread 0) and from compiled C++ (tests/test_tiled_oracle.py); the
properties (coverage, partitions reproduce the tile, retile_D lines a copy up with the MMA's fragment)
are checked with NumPy over every thread.
"""
from collections import Counter

import numpy as np
import pytest

from cutelite import (
    Layout, Swizzle, composition, make_copy_atom, make_mma_atom, make_tensor, make_tiled_copy,
    make_tiled_copy_A, make_tiled_copy_B, make_tiled_copy_C, make_tiled_mma, size, tile_shape,
)
from cutelite.int_tuple import fmt

SEED_ATOM = "SM80_16x8x16_F16F16F16F16_TN"


def seed_mma():
    return make_tiled_mma(make_mma_atom(SEED_ATOM), Layout((2, 2, 1)), (32, 32, 16))


def seed_tensors():
    # 128x32 A, 128x32 B (N x K), 128x128 C, all column-major, as in the seed
    return (make_tensor(Layout((128, 32), (1, 128)), dtype=np.float16),
            make_tensor(Layout((128, 32), (1, 128)), dtype=np.float16),
            make_tensor(Layout((128, 128), (1, 128)), dtype=np.float16))


def test_seed_tiled_mma_print():
    assert str(seed_mma()) == (
        "TiledMMA\n"
        "  ThrLayoutVMNK:  (_32,_2,_2,_1):(_1,_32,_64,_0)\n"
        "  PermutationMNK: (_32,_32,_16)\n"
        "MMA_Atom\n"
        "  ThrID:      _32:_1\n"
        "  Shape_MNK:  (_16,_8,_16)\n"
        "  LayoutA_TV: ((_4,_8),(_2,_2,_2)):((_32,_1),(_16,_8,_128))\n"
        "  LayoutB_TV: ((_4,_8),(_2,_2)):((_16,_1),(_8,_64))\n"
        "  LayoutC_TV: ((_4,_8),(_2,_2)):((_32,_1),(_16,_8))\n")
    assert size(seed_mma()) == 128 and tile_shape(seed_mma()) == (32, 32, 16)


def test_seed_partitions_and_fragments():
    thr = seed_mma().get_slice(0)
    sA, sB, sC = seed_tensors()
    assert str(thr.partition_A(sA).layout) == "((_2,_2,_2),_4,_2):((_128,_8,_1024),_32,_2048)"
    assert str(thr.partition_B(sB).layout) == "((_2,_2),_8,_2):((_128,_1024),_16,_2048)"
    assert str(thr.partition_C(sC).layout) == "((_2,_2),_4,_8):((_128,_8),_32,_2048)"
    assert str(thr.partition_fragment_A(sA).layout) == "((_2,_2,_2),_4,_2):((_1,_2,_4),_8,_32)"
    assert str(thr.partition_fragment_B(sB).layout) == "((_2,_2),_8,_2):((_1,_2),_4,_32)"
    assert str(thr.partition_fragment_C(sC).layout) == "((_2,_2),_4,_8):((_1,_2),_4,_16)"


def test_seed_copy_atom_and_tiled_copies():
    atom = make_copy_atom("SM75_U16x8_LDSM_T", "half_t")
    atom_text = ("Copy_Atom\n"
                 "  ThrID:        _32:_1\n"
                 "  ValLayoutSrc: (_32,_8):(_8,_1)\n"
                 "  ValLayoutDst: ((_4,_8),(_1,_2,_4)):((_16,_1),(_1,_8,_64))\n"
                 "  ValLayoutRef: ((_4,_8),(_1,_2,_4)):((_16,_1),(_1,_8,_64))\n"
                 "  ValueType:    16b\n")
    assert str(atom) == atom_text
    mma = seed_mma()
    assert str(make_tiled_copy_A(atom, mma)) == (
        "TiledCopy\n"
        "  Tiler_MN:       (_32,_16)\n"
        "  TiledLayout_TV: ((_4,_8,_2,_2),((_2,_2,_2),(_1,_1))):((_64,_1,_16,_0),((_32,_8,_256),(_0,_0)))\n"
        + atom_text)
    assert str(make_tiled_copy_B(atom, mma)) == (
        "TiledCopy\n"
        "  Tiler_MN:       (_32,_16)\n"
        "  TiledLayout_TV: ((_4,_8,_2,_2),((_2,_2),(_2,_1))):((_64,_1,_0,_8),((_32,_256),(_16,_0)))\n"
        + atom_text)


def test_seed_partition_S_and_retile_D():
    mma, atom = seed_mma(), make_copy_atom("SM75_U16x8_LDSM_T", "half_t")
    sA, sB, _sC = seed_tensors()
    thr = mma.get_slice(0)
    for make, s, frag in ((make_tiled_copy_A, sA, thr.partition_fragment_A(sA)),
                          (make_tiled_copy_B, sB, thr.partition_fragment_B(sB))):
        cpy = make(atom, mma).get_slice(0)
        assert str(cpy.partition_S(s).layout) == "((_8,_1),_4,_2):((_1,_0),_32,_2048)"
        assert str(cpy.retile_D(frag).layout) == "((_8,_1),_4,_2):((_1,_0),_8,_32)"


# ---- properties over every thread -------------------------------------------------------------------------
CONFIGS = [
    (SEED_ATOM, Layout((2, 2, 1)), (32, 32, 16)),
    (SEED_ATOM, Layout((2, 2, 1)), (32, Layout((4, 4, 2), (1, 8, 4)), 16)),
    ("SM80_16x8x8_F16F16F16F16_TN", Layout((2, 1, 1)), None),
    ("SM70_8x8x4_F32F16F16F32_NT", Layout((2, 2, 1)), None),
    ("SM75_16x8x8_F32F16F16F32_TN", Layout((1, 2, 2)), (16, 32, 16)),
    ("UniversalFMA<float,float,float,float>", Layout((8, 8, 1)), None),
]


def tv_image(tv, threads=None):
    return Counter(int(tv(t, v)) for t in range(threads or size(tv, 0)) for v in range(size(tv, 1)))


@pytest.mark.parametrize("atom,layout,perm", CONFIGS)
def test_tv_layouts_cover_their_tiles(atom, layout, perm):
    mma = make_tiled_mma(make_mma_atom(atom), layout, perm)
    M, N, K = tile_shape(mma)
    thr = mma.get_thr_layout_vmnk()
    # C is not split over K: the threads of the first K slice (K is the outermost thread mode) own it once
    c = tv_image(mma.get_layoutC_TV(), size(mma) // size(thr, 3))
    assert sorted(c) == list(range(M * N)) and set(c.values()) == {1}
    a = tv_image(mma.get_layoutA_TV())          # every A element, once per thread in N
    assert sorted(a) == list(range(M * K)) and set(a.values()) == {size(thr, 2)}
    b = tv_image(mma.get_layoutB_TV())          # every B element, once per thread in M
    assert sorted(b) == list(range(N * K)) and set(b.values()) == {size(thr, 1)}


@pytest.mark.parametrize("atom,layout,perm", CONFIGS)
def test_partitions_of_all_threads_reproduce_the_tile(atom, layout, perm):
    mma = make_tiled_mma(make_mma_atom(atom), layout, perm)
    M, N, K = tile_shape(mma)
    thr = mma.get_thr_layout_vmnk()
    tensors = {"A": (2 * M, 2 * K, size(thr, 2)), "B": (2 * N, 2 * K, size(thr, 1)), "C": (2 * M, 2 * N, size(thr, 3))}
    for op, (rows, cols, times) in tensors.items():
        t = make_tensor(np.arange(rows * cols, dtype=np.float64), Layout((rows, cols), (cols, 1)))
        seen = Counter()
        for i in range(size(mma)):
            part = getattr(mma.get_slice(i), "partition_" + op)(t)
            seen.update(part.to_numpy().ravel().astype(int).tolist())
        assert sorted(seen) == list(range(rows * cols)), op
        assert set(seen.values()) == {times}, op


@pytest.mark.parametrize("swizzle", [None, Swizzle(3, 3, 3)])
@pytest.mark.parametrize("op_name,operand", [("SM75_U16x8_LDSM_T", "A"), ("SM75_U32x4_LDSM_N", "A"),
                                             ("SM75_U16x4_LDSM_T", "B"), ("UniversalCopy<uint32_t>", "C")])
def test_retile_D_lines_the_copy_up_with_the_fragment(swizzle, op_name, operand):
    """A copy into retile_D(frag) fills frag exactly as partition_X(s) reads s: value j of retile_D receives
    element j of partition_D (the atom moves data between its threads: partition_S holds, per warp, the
    same elements in the source's order, which is partition_D's for a one-thread copy)."""
    mma = make_tiled_mma(make_mma_atom(SEED_ATOM), Layout((2, 2, 1)), (32, Layout((4, 4, 2), (1, 8, 4)), 16))
    M, N, K = tile_shape(mma)
    rows, cols = {"A": (2 * M, 2 * K), "B": (2 * N, 2 * K), "C": (2 * M, 2 * N)}[operand]
    lay = Layout((rows, cols), (cols, 1))
    lay = composition(swizzle, lay) if swizzle else lay
    s = make_tensor(np.arange(rows * cols, dtype=np.float64) + 1, lay)
    make = {"A": make_tiled_copy_A, "B": make_tiled_copy_B, "C": make_tiled_copy_C}[operand]
    tiled = make(make_copy_atom(op_name, "half_t" if operand != "C" else "float"), mma)
    for i in (0, 1, 37, 127):
        thr = mma.get_slice(i)
        frag = getattr(thr, "partition_fragment_" + operand)(s)
        src, dst = tiled.get_slice(i).partition_D(s), tiled.get_slice(i).retile_D(frag)
        assert size(src) == size(dst) == size(frag)
        for j in range(size(src)):
            dst[j] = src(j)
        want = getattr(thr, "partition_" + operand)(s).to_numpy()
        np.testing.assert_array_equal(frag.to_numpy(), want)
    warp = tiled.atom_num_thr
    for w in range(0, size(tiled), warp):
        held = [tiled.get_slice(w + t) for t in range(warp)]
        by_src = {v for h in held for v in h.partition_S(s).to_numpy().ravel()}   # ldmatrix .x1/.x2:
        by_dst = {v for h in held for v in h.partition_D(s).to_numpy().ravel()}   # some lanes repeat rows
        assert by_src == by_dst


def test_make_tiled_copy_seed_003():
    """The GEMM article's 128-bit copy: 16x4 threads (4 along the row), 4x1 values each."""
    tc = make_tiled_copy(make_copy_atom("UniversalCopy<uint128_t>", "float"), Layout((16, 4), (4, 1)), Layout((4, 1)))
    assert fmt(tc.tiler) == "(_64,_4)" and size(tc) == 64
    g = make_tensor(np.arange(64 * 64, dtype=np.float32), Layout((64, 64), (64, 1)))
    seen = Counter()
    for i in range(64):
        seen.update(tc.get_slice(i).partition_S(g).to_numpy().ravel().astype(int).tolist())
    assert sorted(seen) == list(range(64 * 64)) and set(seen.values()) == {1}


# ---- errors -------------------------------------------------------------------------------------------
def test_errors_name_the_operation_and_values():
    atom = make_mma_atom(SEED_ATOM)
    with pytest.raises(ValueError, match="rank-3 AtomLayoutMNK"):
        make_tiled_mma(atom, Layout((2, 2, 1, 1)))
    with pytest.raises(ValueError, match="not a multiple of the atoms' M extent 32"):
        make_tiled_mma(atom, Layout((2, 2, 1)), (48, 32, 16))
    with pytest.raises(ValueError, match="unknown atom"):
        make_mma_atom("SM80_16x8x16_NOPE")
    with pytest.raises(ValueError, match="unknown copy op .*known: UniversalCopy<T>"):
        make_copy_atom("SM75_U64x9_LDSM", "half_t")
    with pytest.raises(ValueError, match="unknown value type"):
        make_copy_atom("SM75_U16x8_LDSM_T", "half")
    with pytest.raises(TypeError, match="make_tiled_mma: atom must be an MMA_Atom"):
        make_tiled_mma(42)
    with pytest.raises(TypeError, match="make_tiled_copy_A: expected a TiledMMA"):
        make_tiled_copy_A(make_copy_atom("SM75_U16x8_LDSM_T", "half_t"), "mma")
    mma = make_tiled_mma(atom, Layout((2, 2, 1)), (32, 32, 16))
    with pytest.raises(ValueError, match="too few vals"):   # a 128-bit copy per thread, 2 halves each
        make_tiled_copy(make_copy_atom("UniversalCopy<uint128_t>", "half_t"), Layout((32, 4)), Layout((2, 1)))
    with pytest.raises(TypeError, match="TiledMMA.get_slice: thread index must be an int"):
        mma.get_slice(-1)
    with pytest.raises(TypeError, match="TiledCopy.get_slice: thread index must be an int >= 0"):
        make_tiled_copy(make_copy_atom("UniversalCopy<uint32_t>", "float"), Layout((16, 4))).get_slice(-1)
    with pytest.raises(TypeError, match="partition_A: expected a Tensor or a Layout"):
        mma.get_slice(0).partition_A(np.zeros(4))


def test_no_fragment_of_a_run_time_shape():
    """C++ static_asserts "Dynamic owning tensors not supported": registers need a static shape."""
    from cutelite import dyn
    mma = make_tiled_mma(make_mma_atom(SEED_ATOM), Layout((2, 2, 1)))
    g = make_tensor(Layout((dyn(64), 32), (dyn(32), 1)), dtype=np.float16)
    # C++ (compiled): a (64,32):(32,1) tile with run-time 64 and 32
    assert str(mma.get_slice(0).partition_A(g).layout) == "((_2,_2,_2),2,_2):((_1,256,_8),1024,_16)"
    with pytest.raises(ValueError, match="Dynamic owning tensors not supported"):
        mma.get_slice(0).partition_fragment_A(g)
