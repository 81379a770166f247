"""SIMT fp32, step 6: step 5 with 128-bit accesses. Global loads are ld.global.v4 (4 floats a thread:
one load per thread per tile); A is stored transposed (k rows of BM) so that a thread's 8 values of A,
like its 8 of B, are two ld.shared.v4 each; C is written with st.global.v4.

The two shared tiles are cutelite layouts, (k, m) for A^T and (k, n) for B: `make_kernel(a_tile, b_tile)` builds
the kernel for any pair that keeps 4 consecutive m (or n) in one aligned 16-byte vector. Step 6 uses the
plain row-major tiles; the next step (kernels.gemm.simt_banks) changes only these two layouts.
"""

import numpy as np
from cutelite import Layout, cosize
from numba import cuda

from ..instructions import ld_global_v4_f32, ld_shared_v4_f32, st_global_v4_f32, st_shared_v4_f32
from ..layout_codegen import layout_fn
from . import _jit

BM, BN, BK, TM, TN = 128, 128, 8, 8, 8
THREADS = 256
NACC = TM * TN
ROW_MAJOR_At = Layout((BK, BM), (BM, 1))   # A^T tile: (k, m)
ROW_MAJOR_B = Layout((BK, BN), (BN, 1))    # B tile: (k, n)


def check_vectors(layout, what):
    """Raise ValueError unless `layout` (k, mn) puts every 4 consecutive mn starting at a multiple of 4 at
    4 consecutive offsets starting at a multiple of 4 (one aligned ld/st.shared.v4)."""
    rows, cols = BK, (BM if what == "A^T" else BN)
    for k in range(rows):
        for c in range(0, cols, 4):
            offs = [int(layout(k, c + j)) for j in range(4)]
            if offs[0] % 4 or offs != list(range(offs[0], offs[0] + 4)):
                raise ValueError("simt_vectorized: the %s tile %s puts (%d, %d..%d) at offsets %s, not one "
                                 "aligned 16-byte vector" % (what, layout, k, c, c + 3, offs))


@_jit.device
def thread_coords(t):
    """Thread t's first output (tm, tn) of the C tile, and the float4s it copies: A at (row ar, k ak),
    B at (row br, n bc)."""
    return (t // (BN // TN)) * TM, (t % (BN // TN)) * TN, t // 2, 4 * (t % 2), t // 32, 4 * (t % 32)


def warp_accesses(warp=0):
    """The shared-memory instructions warp `warp` issues per k-tile, in the kernel's order, as
    (what, tile, access, store): tile is "A^T" or "B", access[lane] the (k, mn) coordinates that lane
    touches (cutelite.bank_conflicts.analyse's argument)."""
    c = [thread_coords.py_func(32 * warp + lane) for lane in range(32)]
    out = [("A^T store (scalar)", "A^T", [(ak + j, ar) for _, _, ar, ak, _, _ in c], True)
           for j in range(4)]
    out.append(("B store (v4)", "B", [[(br, bc + q) for q in range(4)] for *_, br, bc in c], True))
    for k in range(BK):
        for h in range(2):
            out.append(("A^T load (v4)", "A^T", [[(k, tm + 4 * h + q) for q in range(4)] for tm, *_ in c], False))
            out.append(("B load (v4)", "B", [[(k, tn + 4 * h + q) for q in range(4)] for _, tn, *_ in c], False))
    return out


def make_kernel(a_tile=ROW_MAJOR_At, b_tile=ROW_MAJOR_B):
    """The step-6 kernel with its shared tiles laid out by `a_tile` (k, m) and `b_tile` (k, n)."""
    check_vectors(a_tile, "A^T")
    check_vectors(b_tile, "B")
    SA, SB = cosize(a_tile), cosize(b_tile)   # array sizes: plain ints, constants to the kernel
    sAt_at = layout_fn(a_tile, by_mode=True, name="sAt_at")
    sB_at = layout_fn(b_tile, by_mode=True, name="sB_at")

    @_jit.jit()
    def gemm_simt_vectorized(A, B, C):
        sA = cuda.shared.array(SA, np.float32)
        sB = cuda.shared.array(SB, np.float32)
        acc = cuda.local.array(NACC, np.float32)
        a = cuda.local.array(TM, np.float32)
        b = cuda.local.array(TN, np.float32)
        t = cuda.threadIdx.x
        M, N = C.shape
        K = A.shape[1]
        m0, n0 = cuda.blockIdx.y * BM, cuda.blockIdx.x * BN
        tm, tn, ar, ak, br, bc = thread_coords(t)
        for i in range(TM * TN):
            acc[i] = np.float32(0.0)
        for k0 in range(0, K, BK):
            va = ld_global_v4_f32(A, (m0 + ar) * K + k0 + ak)
            for j in range(4):
                sA[sAt_at(ak + j, ar)] = va[j]
            st_shared_v4_f32(sB, sB_at(br, bc), ld_global_v4_f32(B, (k0 + br) * N + n0 + bc))
            cuda.syncthreads()
            for k in range(BK):
                for h in range(2):
                    x = ld_shared_v4_f32(sA, sAt_at(k, tm + 4 * h))
                    y = ld_shared_v4_f32(sB, sB_at(k, tn + 4 * h))
                    for j in range(4):
                        a[4 * h + j] = x[j]
                        b[4 * h + j] = y[j]
                for i in range(TM):
                    for j in range(TN):
                        acc[TN * i + j] += a[i] * b[j]
            cuda.syncthreads()
        for i in range(TM):
            for h in range(2):
                o = TN * i + 4 * h
                st_global_v4_f32(C, (m0 + tm + i) * N + n0 + tn + 4 * h,
                                 (acc[o], acc[o + 1], acc[o + 2], acc[o + 3]))

    gemm_simt_vectorized.layouts = (a_tile, b_tile)
    return gemm_simt_vectorized


gemm_simt_vectorized = make_kernel()


grid = _jit.tile_grid(BM, BN, THREADS)
