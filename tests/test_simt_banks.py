"""The conflict-free SIMT rung (kernels.gemm.simt_banks): rung 6's shared-memory accesses priced by the bank
analyser for the row-major, padded and swizzled tiles, against counts worked out by hand; the vector check
on layouts; in the simulator, both kernels against NumPy."""
import numpy as np
import pytest

from cutelite import Layout, Swizzle, composition
from kernels.gemm import simt_banks, simt_vectorized

pytestmark = pytest.mark.numba("simulator")


@pytest.mark.parametrize("warp", range(8))
def test_row_major_tiles_cost_what_the_hand_count_says(warp):
    # By hand: the A^T store puts lanes 2r and 2r+1 in rows j and 4+j, column r: 512 bytes apart, same bank,
    # so each of the 4 stores takes 2 wavefronts. The B load's quarter-warp reads chunks 32 bytes apart:
    # 8 x 16 bytes over 256 bytes, lanes l and l+4 in the same 4 banks: 2 wavefronts a phase, 4 phases,
    # 16 loads per k-tile -> 128 for an ideal 64. A's loads are two addresses a warp (paired: 2 phases).
    cost = simt_banks.shared_cost(*simt_banks.ROW_MAJOR, warp=warp)
    assert cost == {"A^T store (scalar)": (8, 4), "B store (v4)": (4, 4),
                    "A^T load (v4)": (32, 32), "B load (v4)": (128, 64)}


@pytest.mark.parametrize("name", ["PADDED", "SWIZZLED"])
@pytest.mark.parametrize("warp", range(8))
def test_padded_and_swizzled_tiles_are_conflict_free(name, warp):
    cost = simt_banks.shared_cost(*getattr(simt_banks, name), warp=warp)
    assert all(w == i for w, i in cost.values()), cost
    assert sum(i for _, i in cost.values()) == 104


def test_layouts_are_bijections_onto_their_tiles():
    for sAt, sB in (simt_banks.PADDED, simt_banks.SWIZZLED):
        for lay, n in ((sAt, 128), (sB, 128)):
            offs = {int(lay(k, c)) for k in range(8) for c in range(n)}
            assert len(offs) == 8 * n


def test_a_layout_that_splits_a_vector_is_refused():
    split = composition(Swizzle(1, 0, 3), Layout((8, 128), (128, 1)))   # swaps floats inside a 16-byte vector
    with pytest.raises(ValueError, match="not one aligned 16-byte vector"):
        simt_vectorized.make_kernel(split, simt_vectorized.ROW_MAJOR_B)
    with pytest.raises(ValueError, match="the B tile"):
        simt_vectorized.make_kernel(simt_vectorized.ROW_MAJOR_At, Layout((8, 128), (130, 1)))


@pytest.mark.parametrize("kernel", ["gemm_simt_padded", "gemm_simt_swizzled"])
def test_kernels_match_numpy(kernel):
    rng = np.random.default_rng(11)
    M, N, K = 128, 128, 16
    A, B = rng.standard_normal((M, K)).astype(np.float32), rng.standard_normal((K, N)).astype(np.float32)
    C = np.full((M, N), np.nan, np.float32)
    grid, block = simt_banks.grid(M, N)
    getattr(simt_banks, kernel)[grid, block](A, B, C)
    want = A.astype(np.float64) @ B.astype(np.float64)
    assert np.all(np.isfinite(C))
    assert np.max(np.abs(C - want)) < 1e-4 * np.max(np.abs(want))
