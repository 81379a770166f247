"""SIMT fp32, rung 6: rung 5 with 128-bit accesses. Global loads are ld.global.v4 (4 floats a thread:
one load per thread per tile); A is stored transposed (k rows of BM) so that a thread's 8 values of A,
like its 8 of B, are two ld.shared.v4 each; C is written with st.global.v4.
"""

import numpy as np
from cutelite import Layout
from numba import cuda

from ..intrinsics import ld_global_v4_f32, ld_shared_v4_f32, st_global_v4_f32, st_shared_v4_f32
from ..layout_codegen import layout_fn
from . import _jit

BM, BN, BK, TM, TN = 128, 128, 8, 8, 8
THREADS = 256
sAt_at = layout_fn(Layout((BK, BM), (BM, 1)), by_mode=True, name="sAt_at")   # A^T tile: (k, m)
sB_at = layout_fn(Layout((BK, BN), (BN, 1)), by_mode=True, name="sB_at")     # (k, n)


@_jit.jit()
def gemm_simt_vectorized(A, B, C):
    sA = cuda.shared.array(BK * BM, np.float32)
    sB = cuda.shared.array(BK * BN, np.float32)
    acc = cuda.local.array(TM * TN, np.float32)
    a = cuda.local.array(TM, np.float32)
    b = cuda.local.array(TN, np.float32)
    t = cuda.threadIdx.x
    M, N = C.shape
    K = A.shape[1]
    m0, n0 = cuda.blockIdx.y * BM, cuda.blockIdx.x * BN
    tm, tn = (t // (BN // TN)) * TM, (t % (BN // TN)) * TN
    ar, ak = t // 2, 4 * (t % 2)                    # A: row ar, k ak..ak+3
    br, bc = t // 32, 4 * (t % 32)                  # B: row br, n bc..bc+3
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
            st_global_v4_f32(C, (m0 + tm + i) * N + n0 + tn + 4 * h, (acc[o], acc[o + 1], acc[o + 2], acc[o + 3]))


def grid(M, N):
    return (N // BN, M // BM), THREADS
