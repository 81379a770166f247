"""SIMT fp32, step 4: 1-D register blocking. Each thread computes TM = 8 outputs of one column of a
64x64 tile: per k it loads one B value from shared memory and reuses it for 8 FMAs (step 3: 2 loads
per FMA; here 9 loads per 8 FMAs).
"""

import numpy as np
from cutelite import Layout
from numba import cuda

from ..layout_codegen import layout_fn
from . import _jit

BM, BN, BK, TM = 64, 64, 8, 8
THREADS = BM * BN // TM                                                   # 512
SA, SB = BM * BK, BK * BN           # array sizes must be plain constants in the kernel
sA_at = layout_fn(Layout((BM, BK), (BK, 1)), by_mode=True, name="sA_at")   # (m, k)
sB_at = layout_fn(Layout((BK, BN), (BN, 1)), by_mode=True, name="sB_at")   # (k, n)


@_jit.jit()
def gemm_simt_blocking1d(A, B, C):
    sA = cuda.shared.array(SA, np.float32)
    sB = cuda.shared.array(SB, np.float32)
    acc = cuda.local.array(TM, np.float32)
    t = cuda.threadIdx.x
    m0, n0 = cuda.blockIdx.y * BM, cuda.blockIdx.x * BN
    tn, tm = t % BN, (t // BN) * TM                 # this thread: column tn, rows tm .. tm + 7
    for i in range(TM):
        acc[i] = np.float32(0.0)
    for k0 in range(0, A.shape[1], BK):
        sA[sA_at(t // BK, t % BK)] = A[m0 + t // BK, k0 + t % BK]      # 512 threads, 512 elements each
        sB[sB_at(t // BN, t % BN)] = B[k0 + t // BN, n0 + t % BN]
        cuda.syncthreads()
        for k in range(BK):
            b = sB[sB_at(k, tn)]
            for i in range(TM):
                acc[i] += sA[sA_at(tm + i, k)] * b
        cuda.syncthreads()
    for i in range(TM):
        C[m0 + tm + i, n0 + tn] = acc[i]


grid = _jit.tile_grid(BM, BN, THREADS)
