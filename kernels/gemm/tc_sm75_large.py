"""Tensor cores a T4 has (sm_75), the large rung: tc_sm80_large's tiles (64x64 warp tiles, accumulators and
fragments in registers through kernels.gemm.unrolled, per-lane fragment offsets fixed before the loop)
with tc_sm75's instructions only: mma.m16n8k8 (two per 16x16 fragment pair), ldmatrix, and the next
k-tile carried global -> registers (ld.global.v4, issued before the math) -> shared (st.shared.v4,
after it) into the second of two buffers; one barrier per k-tile.
"""

import numpy as np
from numba import cuda

from ..intrinsics import (
    SMEM_ALIGN, ld_global_v4_b32, ldmatrix_x4, ldmatrix_x4_trans, mma_m16n8k8_f32_f16, st_shared_v4_b32,
)
from ..layout_codegen import layout_fn, layout_pyfunc
from . import _jit, unrolled
from .tc_sm80_large import check_c_layout, fragment_address, step_rule
from .tiles import copy_tv, ldmatrix_tile, operand_tile, raster

u16 = np.uint16
# fastest on the H100 (benchmarks/gemm/RESULTS.md): two 128x128 CTAs an SM, 4 warps of 64x64 each
BEST = dict(BM=128, BN=128, WARPS_M=2, WARPS_N=2, min_blocks=2)


def make_kernel(BM=128, BN=256, BK=32, WARPS_M=2, WARPS_N=4, a_kmajor=True, b_kmajor=False, group=8,
                min_blocks=1):
    """k(A, B, C): A (M, K), B (K, N) f16 bits (uint16), C (M, N) f32; shapes multiples of the tile.
    Launch: grid (M/BM * N/BN,), block (32 * WARPS_M * WARPS_N,); static shared memory (2 buffers)."""
    THREADS = 32 * WARPS_M * WARPS_N
    WM, WN = BM // WARPS_M, BN // WARPS_N
    MT, NT, KSTEPS = WM // 16, WN // 8, BK // 16
    A_R, A_C = operand_tile(BM, BK, a_kmajor)
    B_R, B_C = operand_tile(BN, BK, b_kmajor)
    A_SZ, B_SZ = A_R * A_C, B_R * B_C
    SA, SB = 2 * A_SZ, 2 * B_SZ
    A_IT, B_IT = A_SZ // (8 * THREADS), B_SZ // (8 * THREADS)
    a_tile, b_tile = ldmatrix_tile(A_R, A_C), ldmatrix_tile(B_R, B_C)
    sA_at, sB_at = layout_fn(a_tile, by_mode=True, name="sA_at"), layout_fn(b_tile, by_mode=True, name="sB_at")
    cpA = layout_fn(copy_tv(A_R, A_C, THREADS, 8), by_mode=True, name="cpA")
    cpB = layout_fn(copy_tv(B_R, B_C, THREADS, 8), by_mode=True, name="cpB")
    addr_a = fragment_address(layout_pyfunc(a_tile, by_mode=True), a_kmajor, True)
    addr_b = fragment_address(layout_pyfunc(b_tile, by_mode=True), b_kmajor, False)
    AF, AD, AS, AE = step_rule(addr_a, MT, KSTEPS, [WM * w for w in range(WARPS_M)])
    BF, BD, BS, BE = step_rule(addr_b, NT // 2, KSTEPS, [WN * w for w in range(WARPS_N)])
    load_a = unrolled.load_frags(ldmatrix_x4 if a_kmajor else ldmatrix_x4_trans, MT, AF, AD, AS)
    load_b = unrolled.load_frags(ldmatrix_x4_trans if not b_kmajor else ldmatrix_x4, NT // 2, BF, BD, BS)
    mma_tile = unrolled.mma_tile(mma_m16n8k8_f32_f16, MT, NT, steps=2)    # k16 = two k8 slices
    zeros = unrolled.zeros(4 * MT * NT)
    store_c = unrolled.store_c(MT, NT)
    check_c_layout("SM75_16x8x8_F32F16F16F32_TN")
    tile_of = _jit.device(raster)
    frag_a = _jit.device(fragment_address(sA_at, a_kmajor, True))
    frag_b = _jit.device(fragment_address(sB_at, b_kmajor, False))

    @_jit.device
    def a_vec(A, m0, k0, tid, i):
        """(global offset, shared offset) of this thread's i-th 16-byte vector of A's k-tile at k0."""
        idx = cpA(tid, 8 * i)
        r, c = idx % A_R, idx // A_R
        return ((m0 + r) * (A.strides[0] // 2) + k0 + c if a_kmajor else (k0 + r) * (A.strides[0] // 2) + m0 + c,
                sA_at(r, c))

    @_jit.device
    def b_vec(B, n0, k0, tid, i):
        idx = cpB(tid, 8 * i)
        r, c = idx % B_R, idx // B_R
        return ((n0 + r) * (B.strides[0] // 2) + k0 + c if b_kmajor else (k0 + r) * (B.strides[0] // 2) + n0 + c,
                sB_at(r, c))

    fetch_src = ["def fetch(A, B, m0, n0, k0, tid):"]      # ld.global.v4 of the whole k-tile, registers
    stash_src = ["def stash(sA, sB, abuf, bbuf, tid, v):"]   # ... then st.shared.v4 of them
    for i in range(A_IT):
        fetch_src.append("    a%d = ld(A, a_vec(A, m0, k0, tid, %d)[0])" % (i, i))
        stash_src.append("    st(sA, abuf + a_vec(sA, 0, 0, tid, %d)[1], (v[%d], v[%d], v[%d], v[%d]))"
                         % ((i,) + tuple(range(4 * i, 4 * i + 4))))
    for i in range(B_IT):
        fetch_src.append("    b%d = ld(B, b_vec(B, n0, k0, tid, %d)[0])" % (i, i))
        o = 4 * (A_IT + i)
        stash_src.append("    st(sB, bbuf + b_vec(sB, 0, 0, tid, %d)[1], (v[%d], v[%d], v[%d], v[%d]))"
                         % ((i,) + tuple(range(o, o + 4))))
    fetch_src.append("    return " + unrolled._tuple(["%s%d[%d]" % (x, i, j) for x, n in (("a", A_IT), ("b", B_IT))
                                                       for i in range(n) for j in range(4)]))
    env = dict(ld=ld_global_v4_b32, st=st_shared_v4_b32, a_vec=a_vec, b_vec=b_vec)
    fetch = unrolled._compile("\n".join(fetch_src) + "\n", "fetch", env)
    stash = unrolled._compile("\n".join(stash_src) + "\n", "stash", env)

    @_jit.jit(launch_bounds=(THREADS, min_blocks))
    def gemm_tc_sm75_large(A, B, C):
        sA = cuda.shared.array(SA, u16, alignment=SMEM_ALIGN)
        sB = cuda.shared.array(SB, u16, alignment=SMEM_ALIGN)
        tid = cuda.threadIdx.x
        lane, warp = tid % 32, tid // 32
        wm, wn = (warp // WARPS_N) * WM, (warp % WARPS_N) * WN
        fa0, fb0 = frag_a(0, 0, lane, wm), frag_b(0, 0, lane, wn)      # this lane's first fragments
        M, N = C.shape
        K = A.shape[1] if a_kmajor else A.shape[0]
        tm, tn = tile_of(cuda.blockIdx.x, M // BM, N // BN, group)
        m0, n0 = tm * BM, tn * BN
        KT = K // BK
        stash(sA, sB, 0, 0, tid, fetch(A, B, m0, n0, 0, tid))
        cuda.syncthreads()
        acc = zeros()
        for kt in range(KT):
            buf = kt % 2
            if kt + 1 < KT:
                v = fetch(A, B, m0, n0, (kt + 1) * BK, tid)         # in flight during the math below
            for s in range(KSTEPS):
                fa = load_a(sA, buf * A_SZ, fa0, AE * s)
                fb = load_b(sB, buf * B_SZ, fb0, BE * s)
                acc = mma_tile(fa, fb, acc)
            if kt + 1 < KT:
                stash(sA, sB, (1 - buf) * A_SZ, (1 - buf) * B_SZ, tid, v)
            cuda.syncthreads()
        store_c(C, m0 + wm + lane // 4, n0 + wn + 2 * (lane % 4), acc)

    gemm_tc_sm75_large.config = dict(BM=BM, BN=BN, BK=BK, threads=THREADS, stages=2, a_kmajor=a_kmajor,
                                     b_kmajor=b_kmajor, dtype="f16")
    return gemm_tc_sm75_large
