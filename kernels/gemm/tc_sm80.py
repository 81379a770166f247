"""Tensor cores, sm_80+: mma.m16n8k16 fed by ldmatrix from swizzled shared memory, which a multistage
cp.async pipeline fills.

One CTA computes a (BM, BN) tile of C = A @ B (f16 or bf16 in, f32 out) with WARPS_M x WARPS_N warps,
each a (BM / WARPS_M, BN / WARPS_N) warp tile of m16n8 accumulators held in registers. K is walked in
steps of BK through STAGES shared-memory buffers: while the tensor cores work on stage s, the copies of
the next STAGES - 1 k-tiles are already in flight (cp.async, 16 bytes a thread, bypassing registers).

Every index map comes from a cutelite layout (kernels.gemm.tiles): the swizzled shared tiles, the copy's
thread-value layout, the mma atom's C layout. Operand majorness is a compile-time choice: A is (M, K)
row-major ("K-major") or column-major, B (K, N) row-major ("N-major") or column-major; a K-major tile is
read with ldmatrix, an M/N-major one with ldmatrix.trans.
"""

import numpy as np
from numba import cuda

from ..intrinsics import (
    SMEM_ALIGN, cp_async_cg_16, cp_async_commit, cp_async_wait, mma_m16n8k16_f32_bf16, mma_m16n8k16_f32_f16,
)
from ..layout_codegen import layout_fn
from . import _jit
from .tiles import copy_tv, fragment_loaders, ldmatrix_tile, mma_c_fn, operand_tile, raster

u16, f32 = np.uint16, np.float32


def make_kernel(BM=128, BN=128, BK=32, WARPS_M=2, WARPS_N=4, STAGES=3, a_kmajor=True, b_kmajor=False,
                dtype="f16", group=8, min_blocks=2, prefetch=True):
    """Build the kernel k(A, B, C) for A (M, K), B (K, N) of uint16 bits (f16 or bf16), C (M, N) f32.
    M, N, K must be multiples of BM, BN, BK (kernels.gemm.matmul pads). Launch: grid (M/BM * N/BN,),
    block (32 * WARPS_M * WARPS_N,)."""
    THREADS = 32 * WARPS_M * WARPS_N
    WM, WN = BM // WARPS_M, BN // WARPS_N            # warp tile
    MT, NT = WM // 16, WN // 8                        # m16n8 tiles per warp
    mma = mma_m16n8k16_f32_f16 if dtype == "f16" else mma_m16n8k16_f32_bf16
    assert NT % 2 == 0 and BK % 16 == 0 and STAGES >= 2
    WAIT = STAGES - 2                                 # groups still in flight when a stage is needed
    A_R, A_C = operand_tile(BM, BK, a_kmajor)
    B_R, B_C = operand_tile(BN, BK, b_kmajor)
    A_SZ, B_SZ = A_R * A_C, B_R * B_C
    SA, SB, NACC = STAGES * A_SZ, STAGES * B_SZ, MT * NT * 4    # array sizes must be plain constants
    NFA, NFB = MT * 4, NT * 2
    assert not prefetch or BK % 32 == 0
    sA_at = layout_fn(ldmatrix_tile(A_R, A_C), by_mode=True, name="sA_at")
    sB_at = layout_fn(ldmatrix_tile(B_R, B_C), by_mode=True, name="sB_at")
    cpA = layout_fn(copy_tv(A_R, A_C, THREADS, 8), by_mode=True, name="cpA")
    cpB = layout_fn(copy_tv(B_R, B_C, THREADS, 8), by_mode=True, name="cpB")
    A_ITERS, B_ITERS = A_SZ // (8 * THREADS), B_SZ // (8 * THREADS)
    c_of = mma_c_fn("SM80_16x8x16_F32F16F16F32_TN")
    tile_of = _jit.device(raster)

    @_jit.device
    def load_stage(A, B, sA, sB, stage, m0, n0, k0, tid):
        """cp.async one (BM, BK) tile of A and one (BK, BN) tile of B into buffer `stage`."""
        lda, ldb = A.strides[0] // 2, B.strides[0] // 2
        for i in range(A_ITERS):
            idx = cpA(tid, 8 * i)
            r, c = idx % A_R, idx // A_R
            g = (m0 + r) * lda + k0 + c if a_kmajor else (k0 + r) * lda + m0 + c
            cp_async_cg_16(sA, stage * A_SZ + sA_at(r, c), A, g)
        for i in range(B_ITERS):
            idx = cpB(tid, 8 * i)
            r, c = idx % B_R, idx // B_R
            g = (n0 + r) * ldb + k0 + c if b_kmajor else (k0 + r) * ldb + n0 + c
            cp_async_cg_16(sB, stage * B_SZ + sB_at(r, c), B, g)

    a_frag, b_frag = fragment_loaders(sA_at, sB_at, a_kmajor, b_kmajor)

    @_jit.device
    def load_frags(sA, sB, st, kk, wm, wn, lane, fa, fb):
        """This warp's A and B fragments of k-step kk of stage st, into registers."""
        for mt in range(MT):
            a = a_frag(sA, st * A_SZ, wm + 16 * mt, kk, lane)
            for j in range(4):
                fa[4 * mt + j] = a[j]
        for np2 in range(NT // 2):
            b = b_frag(sB, st * B_SZ, wn + 16 * np2, kk, lane)
            for j in range(4):
                fb[4 * np2 + j] = b[j]

    @_jit.device
    def mma_step(fa, fb, acc):
        """MT x NT m16n8k16 mma: the warp tile's accumulators += its A fragments x its B fragments."""
        for mt in range(MT):
            for nt in range(NT):
                o = 4 * (NT * mt + nt)
                d = mma((fa[4 * mt], fa[4 * mt + 1], fa[4 * mt + 2], fa[4 * mt + 3]),
                        (fb[2 * nt], fb[2 * nt + 1]),
                        (acc[o], acc[o + 1], acc[o + 2], acc[o + 3]))
                for j in range(4):
                    acc[o + j] = d[j]

    @_jit.jit(launch_bounds=(THREADS, min_blocks))
    def gemm_tc_sm80(A, B, C):
        sA = cuda.shared.array(SA, u16, alignment=SMEM_ALIGN)
        sB = cuda.shared.array(SB, u16, alignment=SMEM_ALIGN)
        acc = cuda.local.array(NACC, f32)
        fa = cuda.local.array(NFA, np.uint32)
        fb = cuda.local.array(NFB, np.uint32)
        fa2 = cuda.local.array(NFA, np.uint32)
        fb2 = cuda.local.array(NFB, np.uint32)
        tid = cuda.threadIdx.x
        lane, warp = tid % 32, tid // 32
        wm, wn = (warp // WARPS_N) * WM, (warp % WARPS_N) * WN
        M, N = C.shape
        K = A.shape[1] if a_kmajor else A.shape[0]
        tm, tn = tile_of(cuda.blockIdx.x, M // BM, N // BN, group)
        m0, n0 = tm * BM, tn * BN
        for i in range(NACC):
            acc[i] = f32(0.0)
        KT = K // BK
        for s in range(STAGES - 1):                  # prologue: the first STAGES - 1 k-tiles in flight
            if s < KT:
                load_stage(A, B, sA, sB, s, m0, n0, s * BK, tid)
            cp_async_commit()
        for kt in range(KT):
            cp_async_wait(WAIT)                       # k-tile kt has landed (this thread's copies) ...
            cuda.syncthreads()                        # ... everyone's; and stage kt - 1 is free again
            nxt = kt + STAGES - 1
            if nxt < KT:
                load_stage(A, B, sA, sB, nxt % STAGES, m0, n0, nxt * BK, tid)
            cp_async_commit()
            st = kt % STAGES
            if prefetch:        # both k16 steps' fragments first, so their loads overlap the mma
                for kk in range(0, BK, 32):
                    load_frags(sA, sB, st, kk, wm, wn, lane, fa, fb)
                    load_frags(sA, sB, st, kk + 16, wm, wn, lane, fa2, fb2)
                    mma_step(fa, fb, acc)
                    mma_step(fa2, fb2, acc)
            else:
                for kk in range(0, BK, 16):
                    load_frags(sA, sB, st, kk, wm, wn, lane, fa, fb)
                    mma_step(fa, fb, acc)
        cp_async_wait(0)
        for mt in range(MT):
            for nt in range(NT):
                for j in range(4):
                    idx = c_of(lane, j)
                    C[m0 + wm + 16 * mt + idx % 16, n0 + wn + 8 * nt + idx // 16] = acc[4 * (NT * mt + nt) + j]

    gemm_tc_sm80.config = dict(BM=BM, BN=BN, BK=BK, threads=THREADS, stages=STAGES, a_kmajor=a_kmajor,
                               b_kmajor=b_kmajor, dtype=dtype, prefetch=prefetch)
    return gemm_tc_sm80


def launch(kernel, A, B, C):
    """Run `kernel` (from make_kernel) on A, B (uint16 bits, shapes multiples of the tile), C f32."""
    cfg = kernel.config
    M, N = C.shape
    kernel[(M // cfg["BM"]) * (N // cfg["BN"]), cfg["threads"]](A, B, C)
