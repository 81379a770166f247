"""Chapter 6's kernels (kernels.tiled) in Numba's CUDA simulator, against NumPy, and the objects they are
built from."""

import numpy as np
import pytest

from cutelite import size, thr_size, tile_shape
from kernels import tiled

pytestmark = pytest.mark.numba("simulator")


# ---- the copy ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("bits,path", [(128, "ldg"), (128, "cp.async"), (32, "ldg")])
def test_tiled_copy_copies_every_element(bits, path):
    src = np.random.default_rng(bits).standard_normal((64, 128)).astype(np.float32)
    out, ms = tiled.run_tiled_copy(src, bits, path)      # run_tiled_copy poisons its output with NaN first
    assert ms is None
    np.testing.assert_array_equal(out, src)


@pytest.mark.parametrize("bits,instruction", [(128, "ld_global_v4_f32"), (32, "ld_global_v1_f32")])
def test_the_atom_picks_the_instruction(bits, instruction):
    """One load per atom call: 16 per thread of 4 floats, or 32 of 1 (a 64x64 tile, 128 threads)."""
    k = tiled.make_copy_kernel(bits)
    calls = sum(line.count(instruction + "(") for line in k.source.splitlines())
    assert calls == 64 * 64 // 128 // (bits // 32)
    with pytest.raises(ValueError):
        tiled.make_copy(64)
    with pytest.raises(ValueError, match="multiples of"):
        tiled.run_tiled_copy(np.zeros((64, 96), np.float32))


# ---- the TiledMMA GEMM --------------------------------------------------------------------------------
@pytest.mark.parametrize("path", ["sm75", "sm80"])
@pytest.mark.parametrize("M,N,K", [(32, 32, 32), (32, 64, 64)])
def test_warp_gemm_against_numpy(path, M, N, K):
    rng = np.random.default_rng(M + N + K)
    A = rng.standard_normal((M, K)).astype(np.float16)
    B = rng.standard_normal((K, N)).astype(np.float16)
    C = tiled.run_warp_gemm(A, B, path)                  # poisoned with NaN before the launch
    want = A.astype(np.float64) @ B.astype(np.float64)
    np.testing.assert_allclose(C, want, rtol=0, atol=1e-4 * max(1.0, np.abs(want).max()))


def test_warp_gemm_refuses_bad_shapes():
    with pytest.raises(ValueError, match="multiples of 32"):
        tiled.run_warp_gemm(np.zeros((32, 16), np.float16), np.zeros((16, 32), np.float16))
    with pytest.raises(ValueError, match="path must be one of"):
        tiled.make_gemm_objects("sm70")


@pytest.mark.parametrize("path", ["sm75", "sm80"])
def test_gemm_objects_and_instruction_counts(path):
    o = tiled.make_gemm_objects(path)
    assert o.mma.atom.name == tiled.mma.PATHS[path][0]
    assert thr_size(o.mma) == tiled.mma.THREADS and tile_shape(o.mma) == (32, 32, 16)
    assert o.s2r_A.atom.op == "SM75_U32x4_LDSM_N" and o.s2r_B.atom.op == "SM75_U16x8_LDSM_T"
    assert o.g2s_A.tiler == (32, 32) and o.g2s_B.tiler == (32, 32)
    src = tiled.make_gemm_kernel(path).source
    # a (32, 32, 32) k-tile: per thread one 16-byte copy of A and one of B (1024 halves, 128 threads); per
    # warp 2 ldmatrix.x4 of A (its 16x32 block) and 2 of B; its 16x16 of C over K = 32: 4 m16n8k16 or 8 m16n8k8
    copies = "cp_async_cg_16(" if path == "sm80" else "ld_global_v4_b32("
    assert src.count(copies) == 2
    assert src.count("ldmatrix_x4(") == 2 and src.count("ldmatrix_x4_trans(") == 2
    assert src.count("mma_m16n8k") == (4 if path == "sm80" else 8)
    assert size(o.mma.get_slice(0).partition_fragment_C(o.sA)) == 8
