"""Tensor cores, sm_80+, the lean rung: tc_sm80_large's 64x64 warp tiles in fewer registers, so that
more warps share an SM (the large rung's 245 registers allow 8; the tensor pipe waits on latency):

  * 32-bit shared addresses: a lane's addresses are uint32 (smem_addr), and fragments a constant apart
    share one register: ldmatrix's [reg + imm] operand (`address_classes` finds the constants).
  * B streamed: a pair of n-tiles is read (one ldmatrix.x4, 4 registers) just before its 8 mma.
  * copies: each thread's first cp.async source and destination, the others at constant steps.
"""

from numba import cuda, uint16

from ..intrinsics import (
    cp_async_cg_16_at, cp_async_commit, cp_async_wait, ldmatrix_x4_at, ldmatrix_x4_trans_at,
    mma_m16n8k16_f32_bf16, mma_m16n8k16_f32_f16, smem_addr,
)
from ..layout_codegen import layout_fn, layout_pyfunc
from . import _jit, unrolled
from .tc_sm80_large import check_c_layout, fragment_address, launch  # noqa: F401  (launch: the same)
from .tiles import copy_tv, ldmatrix_tile, operand_tile, raster

# three 128x128 CTAs an SM (12 warps of 64x64), 4 stages: 3 x 64 KB of shared memory
BEST = dict(BM=128, BN=128, WARPS_M=2, WARPS_N=2, STAGES=4, min_blocks=3)
u16 = uint16


def address_classes(addr, items, warp_starts, scale=2):
    """Group items (i, s) whose addresses addr(i, s, lane, w) are one constant apart for every lane and
    warp: -> (representatives, {item: (class, scale * constant)}): item's address = rep's + constant."""
    reps, where = [], {}
    for it in items:
        for c, r in enumerate(reps):
            d = {addr(*it, lane, w) - addr(*r, lane, w) for w in warp_starts for lane in range(32)}
            if len(d) == 1:
                where[it] = (c, scale * d.pop())
                break
        else:
            where[it] = (len(reps), 0)
            reps.append(it)
    return reps, where


def copy_steps(cp, at, rows, threads, count):
    """cp.async i of thread t goes to tile element (r0 + i DR, c0 + i DC), at shared offset at(r0, c0) +
    i DS: (DR, DC, DS), checked for every thread."""
    def rc(t, i):
        idx = cp(t, 8 * i)
        return idx % rows, idx // rows
    (r0, c0), (r1, c1) = rc(0, 0), rc(0, min(1, count - 1))
    DR, DC, DS = r1 - r0, c1 - c0, at(r1, c1) - at(r0, c0)
    for t in range(threads):
        r0, c0 = rc(t, 0)
        assert all(rc(t, i) == (r0 + i * DR, c0 + i * DC) and at(*rc(t, i)) == at(r0, c0) + i * DS
                   for i in range(count)), "no constant copy step"
    return DR, DC, DS


def make_kernel(BM=128, BN=128, BK=32, WARPS_M=2, WARPS_N=2, STAGES=4, a_kmajor=True, b_kmajor=False,
                dtype="f16", group=8, min_blocks=3):
    """k(A, B, C) as tc_sm80_large.make_kernel's; launch with tc_sm80_large.launch (k.config)."""
    THREADS = 32 * WARPS_M * WARPS_N
    WM, WN = BM // WARPS_M, BN // WARPS_N
    MT, NT, KSTEPS = WM // 16, WN // 8, BK // 16
    assert WM % 16 == 0 and WN % 16 == 0 and STAGES >= 2
    WAIT = STAGES - 2
    A_R, A_C = operand_tile(BM, BK, a_kmajor)
    B_R, B_C = operand_tile(BN, BK, b_kmajor)
    A_SZ, B_SZ = A_R * A_C, B_R * B_C
    B0 = 2 * STAGES * A_SZ                                   # bytes: B's stages follow A's
    SMEM = 2 * STAGES * (A_SZ + B_SZ)
    A_IT, B_IT = A_SZ // (8 * THREADS), B_SZ // (8 * THREADS)
    mma = mma_m16n8k16_f32_f16 if dtype == "f16" else mma_m16n8k16_f32_bf16

    a_tile, b_tile = ldmatrix_tile(A_R, A_C), ldmatrix_tile(B_R, B_C)
    sA_at, sB_at = layout_fn(a_tile, by_mode=True, name="sA_at"), layout_fn(b_tile, by_mode=True, name="sB_at")
    a_py, b_py = layout_pyfunc(a_tile, by_mode=True), layout_pyfunc(b_tile, by_mode=True)
    cpA = layout_fn(copy_tv(A_R, A_C, THREADS, 8), by_mode=True, name="cpA")
    cpB = layout_fn(copy_tv(B_R, B_C, THREADS, 8), by_mode=True, name="cpB")
    ADR, ADC, ADS = copy_steps(layout_pyfunc(copy_tv(A_R, A_C, THREADS, 8), by_mode=True), a_py, A_R, THREADS, A_IT)
    BDR, BDC, BDS = copy_steps(layout_pyfunc(copy_tv(B_R, B_C, THREADS, 8), by_mode=True), b_py, B_R, THREADS, B_IT)
    # fragment addresses: a few per lane (the representatives), the others a constant from one of them
    a_items = [(i, s) for s in range(KSTEPS) for i in range(MT)]
    b_items = [(j, s) for s in range(KSTEPS) for j in range(NT // 2)]
    a_reps, a_where = address_classes(fragment_address(a_py, a_kmajor, True), a_items,
                                      [WM * w for w in range(WARPS_M)])
    b_reps, b_where = address_classes(fragment_address(b_py, b_kmajor, False), b_items,
                                      [WN * w for w in range(WARPS_N)])
    ktile = unrolled.ktile_streamed(
        mma, ldmatrix_x4_at if a_kmajor else ldmatrix_x4_trans_at, ldmatrix_x4_trans_at if not b_kmajor
        else ldmatrix_x4_at, MT, NT, [[a_where[(i, s)] for i in range(MT)] for s in range(KSTEPS)],
        [[b_where[(j, s)] for j in range(NT // 2)] for s in range(KSTEPS)])
    reps_a = unrolled.at_each(_jit.device(fragment_address(sA_at, a_kmajor, True)), a_reps)
    reps_b = unrolled.at_each(_jit.device(fragment_address(sB_at, b_kmajor, False)), b_reps)
    shift_a, shift_b = unrolled.offsets(len(a_reps)), unrolled.offsets(len(b_reps))
    zeros = unrolled.zeros(4 * MT * NT)
    store_c = unrolled.store_c(MT, NT)
    tile_of = _jit.device(raster)
    check_c_layout("SM80_16x8x16_F32F16F16F32_TN")

    @_jit.device
    def load_stage(A, B, smem, da, db, ga, gb, lda, ldb, k0):
        """cp.async k-tile k0 of A and B: thread's first copies from A[ga], B[gb] (k0 = 0) to the shared
        addresses da, db (this stage); the others ADR rows, ADC columns, ADS elements on."""
        ka = k0 if a_kmajor else k0 * lda
        kb = k0 * ldb if not b_kmajor else k0
        for i in range(A_IT):
            cp_async_cg_16_at(smem, da + 2 * ADS * i, A, ga + ka + i * (ADR * lda + ADC))
        for i in range(B_IT):
            cp_async_cg_16_at(smem, db + 2 * BDS * i, B, gb + kb + i * (BDR * ldb + BDC))

    @_jit.jit(launch_bounds=(THREADS, min_blocks))
    def gemm_tc_sm80_lean(A, B, C):
        smem = cuda.shared.array(0, u16)
        s0 = smem_addr(smem, 0)
        tid = cuda.threadIdx.x
        lane, warp = tid % 32, tid // 32
        wm, wn = (warp // WARPS_N) * WM, (warp % WARPS_N) * WN
        ra, rb = reps_a(lane, wm), reps_b(lane, wn)          # this lane's fragment addresses (bytes)
        M, N = C.shape
        K = A.shape[1] if a_kmajor else A.shape[0]
        lda, ldb = A.strides[0] // 2, B.strides[0] // 2
        tm, tn = tile_of(cuda.blockIdx.x, M // BM, N // BN, group)
        m0, n0 = tm * BM, tn * BN
        ia, ib = cpA(tid, 0), cpB(tid, 0)                    # this thread's first copies
        ar, ac, br, bc = ia % A_R, ia // A_R, ib % B_R, ib // B_R
        ga = (m0 + ar) * lda + ac if a_kmajor else ar * lda + m0 + ac
        gb = (n0 + br) * ldb + bc if b_kmajor else br * ldb + n0 + bc
        da, db = s0 + 2 * sA_at(ar, ac), s0 + B0 + 2 * sB_at(br, bc)
        KT = K // BK
        for s in range(STAGES - 1):                          # prologue: STAGES - 1 k-tiles in flight
            if s < KT:
                load_stage(A, B, smem, da + 2 * A_SZ * s, db + 2 * B_SZ * s, ga, gb, lda, ldb, s * BK)
            cp_async_commit()
        acc = zeros()
        rd, wr = 0, STAGES - 1                               # the stage read now, the stage written next
        for kt in range(KT):
            cp_async_wait(WAIT)                              # k-tile kt has landed, and every warp is
            cuda.syncthreads()                               # done with stage wr (k-tile kt - 1)
            if kt + STAGES - 1 < KT:
                load_stage(A, B, smem, da + 2 * A_SZ * wr, db + 2 * B_SZ * wr, ga, gb, lda, ldb,
                           (kt + STAGES - 1) * BK)
            cp_async_commit()
            wr = wr + 1 if wr + 1 < STAGES else 0
            acc = ktile(smem, shift_a(s0 + 2 * A_SZ * rd, ra), shift_b(s0 + B0 + 2 * B_SZ * rd, rb), acc)
            rd = rd + 1 if rd + 1 < STAGES else 0
        cp_async_wait(0)
        store_c(C, m0 + wm + lane // 4, n0 + wn + 2 * (lane % 4), acc)

    gemm_tc_sm80_lean.config = dict(BM=BM, BN=BN, BK=BK, threads=THREADS, stages=STAGES, smem=SMEM,
                                    a_kmajor=a_kmajor, b_kmajor=b_kmajor, dtype=dtype, ready=set())
    return gemm_tc_sm80_lean
