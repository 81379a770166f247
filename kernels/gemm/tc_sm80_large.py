"""Tensor cores, sm_80+, the large rung: tc_sm80's pipeline (cp.async stages, swizzled tiles, ldmatrix,
mma.m16n8k16) with the changes that let the tensor cores run most of the time:

  * 64x64 warp tiles (32 mma per k-step for 8 ldmatrix.x4: half the shared-memory reads per mma of the
    64x32 tile) in a 128x256 CTA tile. The 128 accumulators and the fragments are tuples handled by
    straight-line code (kernels.gemm.unrolled), so they stay in registers.
  * fragments double buffered: k-step s + 1 is read from shared memory while the mma of k-step s run;
    across k-tiles too (the first k-step of the next tile is read during the last mma of this one).
  * one barrier per k-tile, and the addresses of the loop worked out once: each lane keeps the offset
    of its first fragment; the others are constants away from it, by addition or by an XOR inside the
    swizzled 128-byte rows (checked for every lane when the kernel is built).
  * the stages in dynamic shared memory (above 48 KB; kernels.gemm._jit.allow_dynamic_shared).
"""

from cutelite import make_mma_atom
from numba import cuda, uint16

from ..intrinsics import (
    cp_async_cg_16, cp_async_commit, cp_async_wait, ldmatrix_x4, ldmatrix_x4_trans, mma_m16n8k16_f32_bf16,
    mma_m16n8k16_f32_f16,
)
from ..layout_codegen import layout_fn, layout_pyfunc
from . import _jit, unrolled
from .tiles import copy_tv, ldmatrix_tile, operand_tile, raster

# fastest on the H100 (benchmarks/gemm/RESULTS.md): two 128x128 CTAs an SM, 4 warps of 64x64 each, 4 stages
BEST = dict(BM=128, BN=128, WARPS_M=2, WARPS_N=2, STAGES=4, min_blocks=2, dbuf=False)
u16 = uint16  # a Numba type: the simulator needs one for dynamic shared arrays


def fragment_address(at, kmajor, is_a):
    """(i, s, lane, w0) -> element offset in the operand tile of the ldmatrix.x4 row that `lane` points
    at, for 16x16 fragment i of a warp whose tile starts at w0 (m or n), k-step s (k = 16 s). `at`: the
    tile's layout as a Python function (row, col). Same matrices as kernels.gemm.tiles.fragment_loaders."""
    def addr(i, s, lane, w0):
        mn, k = w0 + 16 * i, 16 * s
        if is_a and kmajor:
            return at(mn + lane % 16, k + 8 * (lane // 16))
        if is_a:
            return at(k + lane % 8 + 8 * (lane // 16), mn + 8 * ((lane // 8) % 2))
        if kmajor:
            return at(mn + lane % 8 + 8 * (lane // 16), k + 8 * ((lane // 8) % 2))
        return at(k + lane % 16, mn + 8 * (lane // 16))
    return addr


def _apply(op, x, y):
    return x + y if op == "+" else x ^ y


def step_rule(addr, n, steps, warp_starts):
    """(fop, D, sop, E) with addr(i, s, lane, w) == (addr(0, 0, lane, w) fop D i) sop E s for every
    fragment i < n, k-step s < steps, lane and warp start w; fop, sop in "+", "^". Raises if none."""
    a0 = addr(0, 0, 0, warp_starts[0])
    for fop in "+^":
        for sop in "+^":
            D = (addr(1, 0, 0, warp_starts[0]) - a0 if fop == "+" else addr(1, 0, 0, warp_starts[0]) ^ a0) \
                if n > 1 else 0
            E = (addr(0, 1, 0, warp_starts[0]) - a0 if sop == "+" else addr(0, 1, 0, warp_starts[0]) ^ a0) \
                if steps > 1 else 0
            if all(addr(i, s, lane, w) == _apply(sop, _apply(fop, addr(0, 0, lane, w), D * i), E * s)
                   for w in warp_starts for lane in range(32) for i in range(n) for s in range(steps)):
                return fop, D, sop, E
    raise ValueError("no constant step between this tile's fragment addresses")


def check_c_layout(atom_name):
    """unrolled.store_c writes value j of lane l at (l // 4 + 8 (j // 2), 2 (l % 4) + j % 2): the atom's C."""
    c = make_mma_atom(atom_name).LayoutC_TV
    assert all(c(l, j) == l // 4 + 8 * (j // 2) + 16 * (2 * (l % 4) + j % 2) for l in range(32) for j in range(4))


def make_kernel(BM=128, BN=256, BK=32, WARPS_M=2, WARPS_N=4, STAGES=3, a_kmajor=True, b_kmajor=False,
                dtype="f16", group=8, min_blocks=1, dbuf=True):
    """k(A, B, C) for A (M, K), B (K, N) uint16 bits (f16 or bf16), C (M, N) f32; M, N, K multiples of
    BM, BN, BK. Launch with launch(k, A, B, C) (grid, block and dynamic shared memory from k.config)."""
    THREADS = 32 * WARPS_M * WARPS_N
    WM, WN = BM // WARPS_M, BN // WARPS_N
    MT, NT, KSTEPS = WM // 16, WN // 8, BK // 16
    assert WM % 16 == 0 and WN % 16 == 0 and KSTEPS % 2 == 0 and STAGES >= 2
    WAIT = STAGES - 2
    A_R, A_C = operand_tile(BM, BK, a_kmajor)
    B_R, B_C = operand_tile(BN, BK, b_kmajor)
    A_SZ, B_SZ = A_R * A_C, B_R * B_C
    B0 = STAGES * A_SZ                                   # B's stages follow A's in the one shared array
    SMEM = 2 * STAGES * (A_SZ + B_SZ)
    A_IT, B_IT = A_SZ // (8 * THREADS), B_SZ // (8 * THREADS)
    mma = mma_m16n8k16_f32_f16 if dtype == "f16" else mma_m16n8k16_f32_bf16

    a_tile, b_tile = ldmatrix_tile(A_R, A_C), ldmatrix_tile(B_R, B_C)
    sA_at, sB_at = layout_fn(a_tile, by_mode=True, name="sA_at"), layout_fn(b_tile, by_mode=True, name="sB_at")
    cpA = layout_fn(copy_tv(A_R, A_C, THREADS, 8), by_mode=True, name="cpA")
    cpB = layout_fn(copy_tv(B_R, B_C, THREADS, 8), by_mode=True, name="cpB")
    # every lane's fragment offsets from its first one: constants (checked here, for all lanes and warps)
    addr_a = fragment_address(layout_pyfunc(a_tile, by_mode=True), a_kmajor, True)
    addr_b = fragment_address(layout_pyfunc(b_tile, by_mode=True), b_kmajor, False)
    AF, AD, AS, AE = step_rule(addr_a, MT, KSTEPS, [WM * w for w in range(WARPS_M)])
    BF, BD, BS, BE = step_rule(addr_b, NT // 2, KSTEPS, [WN * w for w in range(WARPS_N)])
    load_a = unrolled.load_frags(ldmatrix_x4 if a_kmajor else ldmatrix_x4_trans, MT, AF, AD, AS)
    load_b = unrolled.load_frags(ldmatrix_x4_trans if not b_kmajor else ldmatrix_x4, NT // 2, BF, BD, BS)
    mma_tile = unrolled.mma_tile(mma, MT, NT)
    ktile = unrolled.ktile(load_a, load_b, mma_tile, KSTEPS, AE, BE)
    zeros = unrolled.zeros(4 * MT * NT)
    store_c = unrolled.store_c(MT, NT)
    tile_of = _jit.device(raster)
    frag_a = _jit.device(fragment_address(sA_at, a_kmajor, True))
    frag_b = _jit.device(fragment_address(sB_at, b_kmajor, False))
    check_c_layout("SM80_16x8x16_F32F16F16F32_TN")

    @_jit.device
    def load_stage(A, B, smem, stage, m0, n0, k0, tid):
        """cp.async the (BM, BK) tile of A and the (BK, BN) tile of B at k0 into buffer `stage`."""
        lda, ldb = A.strides[0] // 2, B.strides[0] // 2
        for i in range(A_IT):
            idx = cpA(tid, 8 * i)
            r, c = idx % A_R, idx // A_R
            g = (m0 + r) * lda + k0 + c if a_kmajor else (k0 + r) * lda + m0 + c
            cp_async_cg_16(smem, stage * A_SZ + sA_at(r, c), A, g)
        for i in range(B_IT):
            idx = cpB(tid, 8 * i)
            r, c = idx % B_R, idx // B_R
            g = (n0 + r) * ldb + k0 + c if b_kmajor else (k0 + r) * ldb + n0 + c
            cp_async_cg_16(smem, B0 + stage * B_SZ + sB_at(r, c), B, g)

    @_jit.jit(launch_bounds=(THREADS, min_blocks))
    def gemm_tc_sm80_large(A, B, C):
        smem = cuda.shared.array(0, u16)
        tid = cuda.threadIdx.x
        lane, warp = tid % 32, tid // 32
        wm, wn = (warp // WARPS_N) * WM, (warp % WARPS_N) * WN
        fa0, fb0 = frag_a(0, 0, lane, wm), frag_b(0, 0, lane, wn)      # this lane's first fragments
        M, N = C.shape
        K = A.shape[1] if a_kmajor else A.shape[0]
        tm, tn = tile_of(cuda.blockIdx.x, M // BM, N // BN, group)
        m0, n0 = tm * BM, tn * BN
        KT = K // BK
        for s in range(STAGES - 1):                     # prologue: STAGES - 1 k-tiles in flight
            if s < KT:
                load_stage(A, B, smem, s, m0, n0, s * BK, tid)
            cp_async_commit()
        cp_async_wait(WAIT)
        cuda.syncthreads()
        acc = zeros()
        rd, wr = 0, STAGES - 1                          # the stage read now, the stage written next
        if not dbuf:                                    # plain loop: read k-step s, then its mma
            for kt in range(KT):
                if kt > 0:
                    cp_async_wait(WAIT)                 # k-tile kt has landed, and every warp is
                    cuda.syncthreads()                  # done with stage wr (k-tile kt - 1)
                if kt + STAGES - 1 < KT:
                    load_stage(A, B, smem, wr, m0, n0, (kt + STAGES - 1) * BK, tid)
                cp_async_commit()
                wr = wr + 1 if wr + 1 < STAGES else 0
                acc = ktile(smem, rd * A_SZ, B0 + rd * B_SZ, fa0, fb0, acc)
                rd = rd + 1 if rd + 1 < STAGES else 0
        else:
            fa = load_a(smem, 0, fa0, 0)                # k-step 0 of k-tile 0
            fb = load_b(smem, B0, fb0, 0)
            for kt in range(KT):
                for s in range(0, KSTEPS, 2):           # two k-steps, two fragment buffers
                    fa2 = load_a(smem, rd * A_SZ, fa0, AE * (s + 1))
                    fb2 = load_b(smem, B0 + rd * B_SZ, fb0, BE * (s + 1))
                    if s == 0:                          # refill the stage freed at the last barrier
                        if kt + STAGES - 1 < KT:
                            load_stage(A, B, smem, wr, m0, n0, (kt + STAGES - 1) * BK, tid)
                        cp_async_commit()
                        wr = wr + 1 if wr + 1 < STAGES else 0
                    acc = mma_tile(fa, fb, acc)
                    if s + 2 < KSTEPS:
                        fa = load_a(smem, rd * A_SZ, fa0, AE * (s + 2))
                        fb = load_b(smem, B0 + rd * B_SZ, fb0, BE * (s + 2))
                    else:                               # next k-tile: wait for it, read its k-step 0
                        cp_async_wait(WAIT)
                        cuda.syncthreads()              # also: every warp is done with stage wr
                        rd = rd + 1 if rd + 1 < STAGES else 0
                        fa = load_a(smem, rd * A_SZ, fa0, 0)
                        fb = load_b(smem, B0 + rd * B_SZ, fb0, 0)
                    acc = mma_tile(fa2, fb2, acc)
        cp_async_wait(0)
        store_c(C, m0 + wm + lane // 4, n0 + wn + 2 * (lane % 4), acc)

    gemm_tc_sm80_large.config = dict(BM=BM, BN=BN, BK=BK, threads=THREADS, stages=STAGES, smem=SMEM,
                                     a_kmajor=a_kmajor, b_kmajor=b_kmajor, dtype=dtype, ready=set())
    return gemm_tc_sm80_large


def launch(kernel, A, B, C, stream=0):
    """Run `kernel` (from make_kernel) on A, B (uint16 bits, shapes multiples of the tile), C f32."""
    cfg = kernel.config
    M, N = C.shape
    key = tuple(str(getattr(x, "dtype", "")) + str(getattr(x, "strides", "")) for x in (A, B, C))
    if key not in cfg["ready"]:
        _jit.allow_dynamic_shared(kernel, (A, B, C), cfg["smem"])
        cfg["ready"].add(key)
    kernel[(M // cfg["BM"]) * (N // cfg["BN"]), cfg["threads"], stream, cfg["smem"]](A, B, C)
