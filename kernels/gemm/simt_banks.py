"""SIMT fp32, step 6 with conflict-free shared memory: the kernel of kernels.gemm.simt_vectorized, unchanged,
given other layouts for its two shared tiles. Step 6's row-major tiles have two 2-way conflicts, both found
by chapter 4's analyser (cutelite.bank_conflicts):

  * the transposed store of A: lanes 2r and 2r + 1 write rows j and 4 + j at column r, and rows 128 floats
    apart start in the same bank;
  * the ld.shared.v4 of B: the 8 lanes of a phase read 16-byte chunks 32 bytes apart in one row, so lanes
    l and l + 4 land 128 bytes apart, in the same banks.

Two ways out, each a layout and nothing else:

  PADDED    A^T (8,128):(132,1)                B (8,(32,4)):(144,(1,36))
            a row is 4 floats longer, so rows start 4 banks apart; B gets a 4-float gap after every 32
            floats, which moves the second 128 bytes of a row over by 4 banks.
  SWIZZLED  A^T Sw<3,2,5> o (8,128):(128,1)    B Sw<1,2,3> o (8,128):(128,1)
            A^T: the row's 3 bits XOR the 16-byte chunk index (cutelite.swizzle_for(128, 4));
            B: bit 5 of the offset (which 128-byte half of a 256-byte run) XORs the chunk's lowest bit.

Padding costs shared memory (7% more here) and a layout that is no longer a plain product; the swizzle costs
an XOR per address. `shared_cost` prices any pair with the analyser.
"""

from cutelite import Layout, Swizzle, composition
from cutelite.bank_conflicts import analyse

from . import simt_vectorized
from .simt_vectorized import BK, BM, BN, grid, warp_accesses  # noqa: F401  (grid: the step's launch shape)

PADDED = (Layout((BK, BM), (BM + 4, 1)), Layout((BK, (32, BN // 32)), (BN + 16, (1, 36))))
SWIZZLED = (composition(Swizzle(3, 2, 5), Layout((BK, BM), (BM, 1))),
            composition(Swizzle(1, 2, 3), Layout((BK, BN), (BN, 1))))
ROW_MAJOR = (simt_vectorized.ROW_MAJOR_At, simt_vectorized.ROW_MAJOR_B)


def shared_cost(a_tile, b_tile, warp=0):
    """Wavefronts per k-tile of warp `warp`'s shared-memory instructions with tiles `a_tile` (k, m) and
    `b_tile` (k, n): {what: (wavefronts, ideal)}, summed over the instructions of each kind (warp_accesses)."""
    tiles = {"A^T": a_tile, "B": b_tile}
    cost = {}
    for what, tile, access, store in warp_accesses(warp):
        r = analyse(tiles[tile], access, 4, store=store)
        w, i = cost.get(what, (0, 0))
        cost[what] = (w + r.wavefronts, i + r.ideal)
    return cost


gemm_simt_padded = simt_vectorized.make_kernel(*PADDED)
gemm_simt_swizzled = simt_vectorized.make_kernel(*SWIZZLED)
