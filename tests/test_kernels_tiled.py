"""kernels.tiled_copy and kernels.tiled_mma in Numba's CUDA simulator, against NumPy, and the maps the
kernels compile against cutelite's own per-thread partitions. Reruns itself in a simulator process when
numba is already in GPU mode here (see kernels._testing)."""

import numpy as np
import pytest

from kernels._testing import numba_mode, run_in_subprocess

IN_PROCESS = numba_mode(simulator=True)
here = pytest.mark.skipif(not IN_PROCESS, reason="ran in a subprocess")


@pytest.mark.skipif(IN_PROCESS, reason="ran in this process")
def test_tiled_suite_in_subprocess():
    rc, out = run_in_subprocess(__file__, simulator=True)
    assert rc == 0, out[-4000:]


if IN_PROCESS:
    from cutelite import Layout, cosize, make_tensor, size, thr_size, tile_shape
    from kernels import layout_pyfunc
    from kernels import tiled_copy as TC
    from kernels import tiled_mma as TM


def offsets(layout):
    """A Tensor over arange(cosize): what a partition of it holds are the offsets themselves."""
    return make_tensor(np.arange(cosize(layout)), layout)


# ---- the copy ------------------------------------------------------------------------------------------
@here
@pytest.mark.parametrize("bits,path", [(128, "ldg"), (128, "cp.async"), (32, "ldg")])
def test_tiled_copy_copies_every_element(bits, path):
    src = np.random.default_rng(bits).standard_normal((64, 128)).astype(np.float32)
    out, ms = TC.run_tiled_copy(src, bits, path)      # run_tiled_copy poisons its output with NaN first
    assert ms is None
    assert np.isfinite(out).all()
    np.testing.assert_array_equal(out, src)


@here
def test_copy_atoms_and_vector_width():
    gmem, smem = TC.tile_layouts(128)
    t128, t32 = TC.make_copy(128), TC.make_copy(32)
    assert t128.atom_num_val == 4 and t32.atom_num_val == 1
    assert TC.vector_width(t128, gmem, smem) == 4 and TC.vector_width(t32, gmem, smem) == 1
    # a row stride of 130 floats: rows start off 16-byte boundaries, so no 128-bit access is allowed
    assert TC.vector_width(t128, Layout(TC.TILE, (130, 1))) == 1
    with pytest.raises(ValueError, match="not contiguous"):
        TC.make_copy_kernel(128, 130)
    with pytest.raises(ValueError):
        TC.make_copy(64)


@here
@pytest.mark.parametrize("bits", [128, 32])
def test_copy_map_is_partition_S_of_each_thread(bits):
    """thread_maps(tc, tile)(t, i) == tc.get_slice(t).partition_S(tile)(i), and it covers the tile once."""
    tc = TC.make_copy(bits)
    gmem, _ = TC.tile_layouts(96)
    f = TC.thread_maps(tc, gmem)
    g = layout_pyfunc(f, by_mode=True)
    per = size(f, 1) * size(f, 2)
    seen = []
    for t in range(TC.THREADS):
        part = tc.get_slice(t).partition_S(offsets(gmem))
        got = [g(t, i % size(f, 1), i // size(f, 1)) for i in range(per)]
        assert got == [int(part(i)) for i in range(per)]
        seen += got
    want = sorted(r * 96 + c for r in range(64) for c in range(64))
    assert sorted(seen) == want


# ---- the TiledMMA GEMM --------------------------------------------------------------------------------
@here
@pytest.mark.parametrize("path", ["sm75", "sm80"])
@pytest.mark.parametrize("M,N,K", [(32, 32, 32), (32, 64, 64)])
def test_warp_gemm_against_numpy(path, M, N, K):
    rng = np.random.default_rng(M + N + K)
    A = rng.standard_normal((M, K)).astype(np.float16)
    B = rng.standard_normal((K, N)).astype(np.float16)
    C = TM.run_warp_gemm(A, B, path)                   # poisoned with NaN before the launch
    assert np.isfinite(C).all()
    want = A.astype(np.float64) @ B.astype(np.float64)
    np.testing.assert_allclose(C, want, rtol=0, atol=1e-4 * max(1.0, np.abs(want).max()))


@here
def test_warp_gemm_refuses_bad_shapes():
    with pytest.raises(ValueError, match="multiples of 32"):
        TM.run_warp_gemm(np.zeros((32, 16), np.float16), np.zeros((16, 32), np.float16))


@here
@pytest.mark.parametrize("path", ["sm75", "sm80"])
def test_gemm_objects(path):
    o = TM.make_gemm_objects(path)
    assert o.mma.atom.name == TM.PATHS[path][0]
    assert thr_size(o.mma) == TM.THREADS and tile_shape(o.mma) == (32, 32, 16)
    assert o.s2r_A.atom.op == "SM75_U32x4_LDSM_N" and o.s2r_B.atom.op == "SM75_U16x8_LDSM_T"
    assert o.s2r_A.atom_num_val == 8 and o.s2r_B.atom_num_val == 8          # 4 registers per ldmatrix.x4
    assert o.g2s_A.tiler == (32, 32) and o.g2s_B.tiler == (32, 32)
    t = o.mma.get_slice(5)
    tCrA, tCrB = t.partition_fragment_A(o.sA), t.partition_fragment_B(o.sB)
    TM.register_pairs(tCrA, "tCrA")
    TM.register_pairs(o.s2r_A.retile(tCrA), "retile_D(tCrA)")
    TM.register_pairs(o.s2r_B.retile(tCrB), "retile_D(tCrB)")
    with pytest.raises(ValueError, match="packed register"):
        TM.register_pairs(Layout((2, 2), (2, 1)), "strided")


@here
@pytest.mark.parametrize("path", ["sm75", "sm80"])
def test_gemm_maps_are_each_threads_partitions(path):
    """The kernel's (thread, ...) maps equal each thread's partition_C(gC) and partition_S(sA/sB)."""
    o = TM.make_gemm_objects(path)
    _, _, gC = TM.global_tiles(64, 64)
    from cutelite import group
    c_map = layout_pyfunc(group(o.mma.thrfrg_C(gC), 1), by_mode=True)
    a_map = layout_pyfunc(TM.by_thread(o.s2r_A, o.sA), by_mode=True)
    fa = TM.by_thread(o.s2r_A, o.sA)
    covered = set()
    for t in range(TM.THREADS):
        thr = o.mma.get_slice(t)
        pC = thr.partition_C(offsets(gC))
        got = [c_map(t, i) for i in range(pC.size)]
        assert got == [int(pC(i)) for i in range(pC.size)]
        covered.update(got)
        pS = o.s2r_A.get_slice(t).partition_S(offsets(o.sA))
        assert [a_map(t, i % size(fa, 1), i // size(fa, 1)) for i in range(pS.size)] == \
            [int(pS(i)) for i in range(pS.size)]
    assert covered == {m * 64 + n for m in range(32) for n in range(32)}
