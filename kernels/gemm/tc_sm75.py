"""Tensor cores a T4 has (sm_75): mma.m16n8k8 and ldmatrix from swizzled shared memory; no cp.async,
so the next k-tile travels global -> registers (ld.global.v4, issued before the math on this one) ->
shared (st.shared.v4, after it): double buffering through registers.

Same tiles, layouts and fragment loaders as kernels.gemm.tc_sm80; one ldmatrix.x4 of A feeds two k8 steps.
Every instruction here is T4-legal (tests prove it with ptxas -arch=sm_75).
"""

import numpy as np
from numba import cuda

from ..intrinsics import SMEM_ALIGN, ld_global_v4_b32, mma_m16n8k8_f32_f16, st_shared_v4_b32
from ..layout_codegen import layout_fn
from . import _jit
from .tiles import copy_tv, fragment_loaders, ldmatrix_tile, mma_c_fn, operand_tile, raster

u16, u32, f32 = np.uint16, np.uint32, np.float32


def make_kernel(BM=128, BN=128, BK=32, WARPS_M=2, WARPS_N=4, a_kmajor=True, b_kmajor=False, group=8,
                min_blocks=2):
    """k(A, B, C): A (M, K), B (K, N) f16 bits (uint16), C (M, N) f32; shapes multiples of the tile."""
    THREADS = 32 * WARPS_M * WARPS_N
    WM, WN = BM // WARPS_M, BN // WARPS_N
    MT, NT = WM // 16, WN // 8
    A_R, A_C = operand_tile(BM, BK, a_kmajor)
    B_R, B_C = operand_tile(BN, BK, b_kmajor)
    A_SZ, B_SZ = A_R * A_C, B_R * B_C
    SA, SB, NACC, NFA, NFB = 2 * A_SZ, 2 * B_SZ, MT * NT * 4, MT * 4, NT * 2
    A_IT, B_IT = A_SZ // (8 * THREADS), B_SZ // (8 * THREADS)
    NREG = 4 * (A_IT + B_IT)
    sA_at = layout_fn(ldmatrix_tile(A_R, A_C), by_mode=True, name="sA_at")
    sB_at = layout_fn(ldmatrix_tile(B_R, B_C), by_mode=True, name="sB_at")
    cpA = layout_fn(copy_tv(A_R, A_C, THREADS, 8), by_mode=True, name="cpA")
    cpB = layout_fn(copy_tv(B_R, B_C, THREADS, 8), by_mode=True, name="cpB")
    a_frag, b_frag = fragment_loaders(sA_at, sB_at, a_kmajor, b_kmajor)
    c_of = mma_c_fn("SM75_16x8x8_F32F16F16F32_TN")
    tile_of = _jit.device(raster)

    @_jit.device
    def gmem_offsets(A, B, m0, n0, k0, tid, i, is_a):
        """Global element offset of this thread's i-th 16-byte vector of the A (or B) k-tile at k0,
        and where it goes in the shared tile."""
        if is_a:
            idx = cpA(tid, 8 * i)
            r, c = idx % A_R, idx // A_R
            g = (m0 + r) * (A.strides[0] // 2) + k0 + c if a_kmajor else (k0 + r) * (A.strides[0] // 2) + m0 + c
            return g, sA_at(r, c)
        idx = cpB(tid, 8 * i)
        r, c = idx % B_R, idx // B_R
        g = (n0 + r) * (B.strides[0] // 2) + k0 + c if b_kmajor else (k0 + r) * (B.strides[0] // 2) + n0 + c
        return g, sB_at(r, c)

    @_jit.device
    def fetch(A, B, regs, m0, n0, k0, tid):
        """ld.global.v4 the k-tile at k0 into this thread's registers."""
        for i in range(A_IT):
            v = ld_global_v4_b32(A, gmem_offsets(A, B, m0, n0, k0, tid, i, True)[0])
            for j in range(4):
                regs[4 * i + j] = v[j]
        for i in range(B_IT):
            v = ld_global_v4_b32(B, gmem_offsets(A, B, m0, n0, k0, tid, i, False)[0])
            for j in range(4):
                regs[4 * (A_IT + i) + j] = v[j]

    @_jit.device
    def stash(A, B, regs, sA, sB, buf, tid):
        """st.shared.v4 the registers into shared buffer `buf`."""
        for i in range(A_IT):
            o = gmem_offsets(A, B, 0, 0, 0, tid, i, True)[1]
            st_shared_v4_b32(sA, buf * A_SZ + o,
                             (regs[4 * i], regs[4 * i + 1], regs[4 * i + 2], regs[4 * i + 3]))
        for i in range(B_IT):
            o = gmem_offsets(A, B, 0, 0, 0, tid, i, False)[1]
            r = 4 * (A_IT + i)
            st_shared_v4_b32(sB, buf * B_SZ + o, (regs[r], regs[r + 1], regs[r + 2], regs[r + 3]))

    @_jit.jit(launch_bounds=(THREADS, min_blocks))
    def gemm_tc_sm75(A, B, C):
        sA = cuda.shared.array(SA, u16, alignment=SMEM_ALIGN)
        sB = cuda.shared.array(SB, u16, alignment=SMEM_ALIGN)
        acc = cuda.local.array(NACC, f32)
        fa = cuda.local.array(NFA, u32)
        fb = cuda.local.array(NFB, u32)
        regs = cuda.local.array(NREG, u32)
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
        fetch(A, B, regs, m0, n0, 0, tid)
        stash(A, B, regs, sA, sB, 0, tid)
        cuda.syncthreads()
        for kt in range(KT):
            buf = kt % 2
            if kt + 1 < KT:
                fetch(A, B, regs, m0, n0, (kt + 1) * BK, tid)   # in flight during the math below
            for kk in range(0, BK, 16):
                for mt in range(MT):
                    a = a_frag(sA, buf * A_SZ, wm + 16 * mt, kk, lane)
                    for j in range(4):
                        fa[4 * mt + j] = a[j]
                for np2 in range(NT // 2):
                    b = b_frag(sB, buf * B_SZ, wn + 16 * np2, kk, lane)
                    for j in range(4):
                        fb[4 * np2 + j] = b[j]
                for h in range(2):                               # two k8 steps per 16x16 fragment
                    for mt in range(MT):
                        for nt in range(NT):
                            o = 4 * (NT * mt + nt)
                            d = mma_m16n8k8_f32_f16((fa[4 * mt + 2 * h], fa[4 * mt + 2 * h + 1]),
                                                    (fb[2 * nt + h],),
                                                    (acc[o], acc[o + 1], acc[o + 2], acc[o + 3]))
                            for j in range(4):
                                acc[o + j] = d[j]
            if kt + 1 < KT:
                stash(A, B, regs, sA, sB, 1 - buf, tid)
            cuda.syncthreads()
        for mt in range(MT):
            for nt in range(NT):
                for j in range(4):
                    idx = c_of(lane, j)
                    C[m0 + wm + 16 * mt + idx % 16, n0 + wn + 8 * nt + idx // 16] = acc[4 * (NT * mt + nt) + j]

    gemm_tc_sm75.config = dict(BM=BM, BN=BN, BK=BK, threads=THREADS, stages=2, a_kmajor=a_kmajor,
                               b_kmajor=b_kmajor, dtype="f16")
    return gemm_tc_sm75
