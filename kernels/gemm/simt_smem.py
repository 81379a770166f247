"""SIMT fp32, step 3: shared-memory tiles. A 32x32 block of threads stages a 32x32 tile of A and one of
B in shared memory per k-step; each element loaded from global memory is then used 32 times.
"""

import numpy as np
from cutelite import Layout
from numba import cuda

from ..layout_codegen import layout_fn
from . import _jit

BM, BN, BK = 32, 32, 32
SA = SB = 32 * 32
THREADS = (32, 32)
s_at = layout_fn(Layout((32, 32), (32, 1)), by_mode=True, name="s_at")    # row-major 32x32 tile


@_jit.jit()
def gemm_simt_smem(A, B, C):
    sA = cuda.shared.array(SA, np.float32)
    sB = cuda.shared.array(SB, np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    i, j = cuda.blockIdx.y * BM + ty, cuda.blockIdx.x * BN + tx
    s = np.float32(0.0)
    for k0 in range(0, A.shape[1], BK):
        sA[s_at(ty, tx)] = A[i, k0 + tx]
        sB[s_at(ty, tx)] = B[k0 + ty, j]
        cuda.syncthreads()
        for k in range(BK):
            s += sA[s_at(ty, k)] * sB[s_at(k, tx)]
        cuda.syncthreads()
    C[i, j] = s


grid = _jit.tile_grid(BM, BN, THREADS)
