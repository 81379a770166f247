"""SIMT fp32, step 7: 128x128x8 CTA tiles, 8x8 outputs per thread, 128-bit loads everywhere,
two shared buffers (the next k-tile is fetched into registers while this one is multiplied), and warp
tiling: each warp owns a 64x32 block of C and its lanes a 4x8 grid of 4x4 quads (two of them per
direction, 32 and 16 apart), so one 16-byte shared load serves 8 (A) or 4 (B) distinct addresses per
warp: broadcast, no bank conflict.

A tile is stored transposed in shared memory (k rows of BM), so a thread's 4 consecutive m are one
ld.shared.v4. Index maps: cutelite layouts (the C tile's thread-value layout says which quad a thread
owns; the shared tiles are plain row-major layouts).
"""

import numpy as np
from cutelite import Layout
from numba import cuda

from ..instructions import ld_global_v4_f32, ld_shared_v4_f32, st_global_v4_f32, st_shared_v4_f32
from ..layout_codegen import layout_fn
from . import _jit

f32 = np.float32
BM, BN, BK, THREADS = 128, 128, 8, 256
SA, SB = 2 * BK * BM, 2 * BK * BN   # two buffers each; array sizes must be plain constants

# (thread, value) -> m + BM * n of the C tile. thread = (ln 4, lm 8, wn 4, wm 2): lane = ln + 4 lm,
# warp = wn + 4 wm; value = (i 4, mh 2, j 4, nh 2): quad row i, m half, quad column j, n half.
C_TV = Layout(((4, 8, 4, 2), (4, 2, 4, 2)),
              ((4 * BM, 4, 32 * BM, 64), (1, 32, BM, 16 * BM)))
c_at = layout_fn(C_TV, by_mode=True, name="c_at")
sAt_at = layout_fn(Layout((BK, BM), (BM, 1)), by_mode=True, name="sAt_at")   # A^T tile: (k, m)
sB_at = layout_fn(Layout((BK, BN), (BN, 1)), by_mode=True, name="sB_at")     # B tile: (k, n)


@_jit.jit(launch_bounds=(THREADS, 2))
def gemm_simt_warptile(A, B, C):
    """C (M, N) = A (M, K) @ B (K, N), f32, row-major; M, N multiples of 128, K of 8."""
    sA = cuda.shared.array(SA, f32)
    sB = cuda.shared.array(SB, f32)
    acc = cuda.local.array(64, f32)
    a = cuda.local.array(8, f32)
    b = cuda.local.array(8, f32)
    t = cuda.threadIdx.x
    M, N = C.shape
    K = A.shape[1]
    m0, n0 = cuda.blockIdx.y * BM, cuda.blockIdx.x * BN
    base = c_at(t, 0)
    tm, tn = base % BM, base // BM                    # this thread's first output of the tile
    ar, ak = t // 2, 4 * (t % 2)                      # the float4 of A and of B this thread copies
    br, bc = t // 32, 4 * (t % 32)
    for i in range(64):
        acc[i] = f32(0.0)
    va = ld_global_v4_f32(A, (m0 + ar) * K + ak)
    vb = ld_global_v4_f32(B, br * N + n0 + bc)
    for kt in range(K // BK):
        buf = kt % 2
        for j in range(4):                            # A goes in transposed: 4 scalar stores
            sA[buf * BK * BM + sAt_at(ak + j, ar)] = va[j]
        st_shared_v4_f32(sB, buf * BK * BN + sB_at(br, bc), vb)
        cuda.syncthreads()
        if kt + 1 < K // BK:                          # next k-tile into registers, during the math
            va = ld_global_v4_f32(A, (m0 + ar) * K + (kt + 1) * BK + ak)
            vb = ld_global_v4_f32(B, ((kt + 1) * BK + br) * N + n0 + bc)
        for k in range(BK):
            for h in range(2):
                x = ld_shared_v4_f32(sA, buf * BK * BM + sAt_at(k, tm + 32 * h))
                y = ld_shared_v4_f32(sB, buf * BK * BN + sB_at(k, tn + 16 * h))
                for j in range(4):
                    a[4 * h + j] = x[j]
                    b[4 * h + j] = y[j]
            for i in range(8):
                for j in range(8):
                    acc[8 * i + j] += a[i] * b[j]
        # one barrier per k-tile is enough: the next iteration writes the other buffer
    for i in range(8):
        r = m0 + tm + (i % 4) + 32 * (i // 4)
        for h in range(2):
            st_global_v4_f32(C, r * N + n0 + tn + 16 * h,
                             (acc[8 * i + 4 * h], acc[8 * i + 4 * h + 1], acc[8 * i + 4 * h + 2],
                              acc[8 * i + 4 * h + 3]))


grid = _jit.tile_grid(BM, BN, THREADS)
