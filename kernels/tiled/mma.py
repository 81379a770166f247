"""Chapter 6's TiledMMA as a kernel: each CTA computes a (32, 32) tile of C = A @ B on tensor cores, every
index taken from cutelite's TiledMMA and TiledCopys, written with the CuTe layer (kernels.cutejit). One
k-tile at a time, no pipeline: the smallest complete CuTe GEMM (chapter 7 makes it fast).

    import kernels; kernels.setup()
    from kernels.tiled import run_warp_gemm, make_gemm_objects
    C = run_warp_gemm(A, B, path="sm75")     # A (M, K), B (K, N) float16; M, N, K multiples of 32 -> f32
    C = run_warp_gemm(A, B, path="sm80")     # sm_80+: cp.async global -> shared, mma m16n8k16

`make_gemm_objects(path)` returns the objects (a GemmObjects) the kernel is built from:
  * mma = make_tiled_mma(atom, Layout((2, 2, 1)), (32, 32, 16)): 4 warps in a 2x2 grid of atoms
    (sm75: SM75_16x8x8_F32F16F16F32_TN, T4-legal; sm80: SM80_16x8x16_F32F16F16F32_TN);
  * s2r_A = make_tiled_copy_A(SM75_U32x4_LDSM_N, mma): sA is K-major (A row-major), ldmatrix;
    s2r_B = make_tiled_copy_B(SM75_U16x8_LDSM_T, mma): sB is N-major (B row-major (K, N)), ldmatrix.trans;
  * g2s_A / g2s_B: make_tiled_copy of 128-bit atoms (UniversalCopy<uint128_t>: ld.global.v4 + st.shared.v4
    on sm75, SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>: cp.async on sm80), 8 halves per thread per copy.
B is seen as CuTe sees it, (N, K). Import after kernels.setup().
"""

import functools
from dataclasses import dataclass

import numpy as np
from numba import cuda

from cutelite import (Layout, Major, _, make_copy_atom, make_tiled_copy, make_tiled_copy_A, make_tiled_copy_B,
                      make_tiled_mma)

from ..cutejit import (
    Matrix, block_idx, copy, cp_async_fence, cp_async_wait, fill, gemm, kernel, local_tile, make_smem_tensor,
    range_, syncthreads, thread_idx,
)
from ..timing import gpu_time_ms

__all__ = ["BM", "BN", "BK", "THREADS", "PATHS", "GemmObjects", "make_gemm_objects", "gemm_tile",
           "make_gemm_kernel", "run_warp_gemm"]

BM, BN, BK = 32, 32, 32
THREADS = 128
PATHS = {   # path -> (MMA atom, global -> shared copy op)
    "sm75": ("SM75_16x8x8_F32F16F16F32_TN", "UniversalCopy<uint128_t>"),
    "sm80": ("SM80_16x8x16_F32F16F16F32_TN", "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>"),
}


@dataclass
class GemmObjects:
    mma: object      # TiledMMA
    s2r_A: object    # TiledCopy, shared -> registers (ldmatrix)
    s2r_B: object
    g2s_A: object    # TiledCopy, global -> shared (128-bit)
    g2s_B: object
    sA: Layout       # (BM, BK), K-major
    sB: Layout       # (BN, BK), N-major


def make_gemm_objects(path="sm80", ldsm_A="SM75_U32x4_LDSM_N", ldsm_B="SM75_U16x8_LDSM_T"):
    """The TiledMMA and TiledCopys of the kernel for `path` ("sm75" or "sm80")."""
    if path not in PATHS:
        raise ValueError("make_gemm_objects: path must be one of %s, got %r" % (", ".join(PATHS), path))
    atom, g2s_op = PATHS[path]
    mma = make_tiled_mma(atom, Layout((2, 2, 1)), (BM, BN, 16))
    g2s = make_copy_atom(g2s_op, "half_t")
    return GemmObjects(
        mma,
        make_tiled_copy_A(make_copy_atom(ldsm_A, "half_t"), mma),
        make_tiled_copy_B(make_copy_atom(ldsm_B, "half_t"), mma),
        make_tiled_copy(g2s, Layout((32, 4), (4, 1)), Layout((1, 8))),    # A: 4 threads x 8 halves along k
        make_tiled_copy(g2s, Layout((4, 32), (1, 4)), Layout((8, 1))),    # B: 4 threads x 8 halves along n
        Layout((BM, BK), (BK, 1)),
        Layout((BN, BK), (1, BN)))


@kernel
def gemm_tile(mA, mB, mC, mma, g2s_A, g2s_B, s2r_A, s2r_B, sA_layout, sB_layout, asynchronous):
    tid, bid = thread_idx(), block_idx()
    n_tiles = mC.shape[1] // BN
    m, n = bid // n_tiles, bid % n_tiles                # this CTA's tile of C
    gA = local_tile(mA, (BM, BK), (m, _))               # (BM, BK, k): row m of A's tiles
    gB = local_tile(mB, (BN, BK), (n, _))               # (BN, BK, k): B seen as (N, K)
    gC = local_tile(mC, (BM, BN), (m, n))               # (BM, BN)
    sA = make_smem_tensor(sA_layout, "float16")         # (BM, BK)
    sB = make_smem_tensor(sB_layout, "float16")         # (BN, BK)
    thr_g2s_A, thr_g2s_B = g2s_A.get_slice(tid), g2s_B.get_slice(tid)
    tAgA, tAsA = thr_g2s_A.partition_S(gA), thr_g2s_A.partition_D(sA)   # (CPY, CPY_M, CPY_K[, k])
    tBgB, tBsB = thr_g2s_B.partition_S(gB), thr_g2s_B.partition_D(sB)
    thr_mma = mma.get_slice(tid)
    tCrA = thr_mma.partition_fragment_A(sA)             # (MMA, MMA_M, MMA_K) registers
    tCrB = thr_mma.partition_fragment_B(sB)             # (MMA, MMA_N, MMA_K)
    tCrC = thr_mma.partition_fragment_C(gC)             # (MMA, MMA_M, MMA_N) accumulators
    fill(tCrC, 0.0)
    thr_s2r_A, thr_s2r_B = s2r_A.get_slice(tid), s2r_B.get_slice(tid)
    tXsA, tXrA = thr_s2r_A.partition_S(sA), thr_s2r_A.retile_D(tCrA)   # ldmatrix's view of sA and tCrA
    tXsB, tXrB = thr_s2r_B.partition_S(sB), thr_s2r_B.retile_D(tCrB)
    for k in range_(gA.shape[2]):                       # k-tiles, a run-time loop
        copy(g2s_A, tAgA[_, _, _, k], tAsA)             # global -> shared
        copy(g2s_B, tBgB[_, _, _, k], tBsB)
        if asynchronous:                                # cp.async: wait for this thread's copies
            cp_async_fence()
            cp_async_wait(0)
        syncthreads()                                   # ... and everyone's
        copy(s2r_A, tXsA, tXrA)                         # shared -> registers, ldmatrix
        copy(s2r_B, tXsB, tXrB)
        gemm(mma, tCrA, tCrB, tCrC)                     # tCrC += tCrA @ tCrB, one mma per (k, m, n)
        syncthreads()                                   # sA, sB are rewritten next
    copy(tCrC, thr_mma.partition_C(gC))                 # registers -> global


@functools.lru_cache(maxsize=None)
def make_gemm_kernel(path):
    """The built kernel k: k.launch(A, B, C) for A (M, K), B (K, N) as uint16 bits of f16 (row-major), C
    (M, N) float32, sides multiples of 32. k.objects: the GemmObjects."""
    o = make_gemm_objects(path)
    k = gemm_tile.build(Matrix("float16"), Matrix("float16", Major.MN, transposed=True), Matrix("float32"),
                        o.mma, o.g2s_A, o.g2s_B, o.s2r_A, o.s2r_B, o.sA, o.sB, path == "sm80", threads=THREADS)
    k.objects = o
    k.grid = lambda A, B, C: (C.shape[0] // BM) * (C.shape[1] // BN)
    return k


def run_warp_gemm(A, B, path="sm80", reps=0):
    """C = A @ B (f32) by the TiledMMA kernel; A (M, K), B (K, N) float16, sides multiples of 32.
    Returns C, or (C, median ms of `reps` launches) when reps > 0. C is poisoned (NaN) before the launch."""
    A, B = np.ascontiguousarray(A, np.float16), np.ascontiguousarray(B, np.float16)
    (M, K), (K2, N) = A.shape, B.shape
    if K != K2 or M % BM or N % BN or K % BK:
        raise ValueError("run_warp_gemm: need A (M, K), B (K, N) with M, N, K multiples of 32; got %s, %s"
                         % (A.shape, B.shape))
    k = make_gemm_kernel(path)
    dA, dB = cuda.to_device(A.view(np.uint16)), cuda.to_device(B.view(np.uint16))
    dC = cuda.to_device(np.full((M, N), np.nan, np.float32))
    k.launch(dA, dB, dC)
    C = dC.copy_to_host()
    if not reps:
        return C
    return C, gpu_time_ms(lambda: k.launch(dA, dB, dC), reps)
