"""SIMT fp32, step 5: 2-D register blocking. 256 threads each compute an 8x8 block of a 128x128 tile:
per k, 8 values of A and 8 of B from shared memory feed 64 FMAs (outer product in registers).
"""

import numpy as np
from cutelite import Layout
from numba import cuda

from ..layout_codegen import layout_fn
from . import _jit

BM, BN, BK, TM, TN = 128, 128, 8, 8, 8
THREADS = (BM // TM) * (BN // TN)                                          # 256
SA, SB, NACC = BM * BK, BK * BN, TM * TN   # array sizes must be plain constants in the kernel
sA_at = layout_fn(Layout((BM, BK), (BK, 1)), by_mode=True, name="sA_at")   # (m, k)
sB_at = layout_fn(Layout((BK, BN), (BN, 1)), by_mode=True, name="sB_at")   # (k, n)


@_jit.jit()
def gemm_simt_blocking2d(A, B, C):
    sA = cuda.shared.array(SA, np.float32)
    sB = cuda.shared.array(SB, np.float32)
    acc = cuda.local.array(NACC, np.float32)
    a = cuda.local.array(TM, np.float32)
    b = cuda.local.array(TN, np.float32)
    t = cuda.threadIdx.x
    m0, n0 = cuda.blockIdx.y * BM, cuda.blockIdx.x * BN
    tm, tn = (t // (BN // TN)) * TM, (t % (BN // TN)) * TN
    for i in range(TM * TN):
        acc[i] = np.float32(0.0)
    for k0 in range(0, A.shape[1], BK):
        for r in range(4):                                     # 1024 elements of each tile, 4 a thread
            e = t + THREADS * r
            sA[sA_at(e // BK, e % BK)] = A[m0 + e // BK, k0 + e % BK]
            sB[sB_at(e // BN, e % BN)] = B[k0 + e // BN, n0 + e % BN]
        cuda.syncthreads()
        for k in range(BK):
            for i in range(TM):
                a[i] = sA[sA_at(tm + i, k)]
            for j in range(TN):
                b[j] = sB[sB_at(k, tn + j)]
            for i in range(TM):
                for j in range(TN):
                    acc[TN * i + j] += a[i] * b[j]
        cuda.syncthreads()
    for i in range(TM):
        for j in range(TN):
            C[m0 + tm + i, n0 + tn + j] = acc[TN * i + j]


grid = _jit.tile_grid(BM, BN, THREADS)
