"""A TiledMMA as a kernel: one CTA's (32, 32) tile of C = A @ B on tensor cores, every index taken from
cutelite's TiledMMA and TiledCopy objects (CuTe's sgemm_sm80 structure, one K-loop, one stage).

    import kernels; kernels.setup()
    from kernels.tiled_mma import run_warp_gemm, make_gemm_objects
    C = run_warp_gemm(A, B, path="sm75")     # A (M, K), B (K, N) float16; M, N, K multiples of 32 -> f32
    C = run_warp_gemm(A, B, path="sm80")     # sm_80+: cp.async global->shared, mma m16n8k16

`make_gemm_objects(path)` returns the objects (a GemmObjects) the kernel is compiled from:
  * mma = make_tiled_mma(atom, Layout((2, 2, 1)), (32, 32, 16)): 4 warps in a 2x2 grid of atoms
    (sm75: SM75_16x8x8_F32F16F16F32_TN, T4-legal; sm80: SM80_16x8x16_F32F16F16F32_TN);
  * s2r_A = make_tiled_copy_A(SM75_U32x4_LDSM_N, mma): sA is K-major (A row-major), ldmatrix;
    s2r_B = make_tiled_copy_B(SM75_U16x8_LDSM_T, mma): sB is N-major (B row-major (K, N)), ldmatrix.trans;
  * g2s_A / g2s_B: make_tiled_copy of 128-bit atoms (UniversalCopy<uint128_t>: ld.global.v4 + st.shared.v4
    on sm75, SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>: cp.async on sm80), 8 halves per thread per copy.
In CuTe's terms the kernel does, per k-tile: copy(g2s, gA, sA); copy(s2r_A, partition_S(sA),
retile_D(tCrA)); gemm(mma, tCrA, tCrB, tCrC); and at the end copy tCrC to partition_C(gC). Here each of
those tensors is its layout compiled by kernels.layout_fn: shared-memory offsets come from tidfrg_S,
register slots from partition_fragment_A/B/C and retile_D. B is viewed as CuTe does, (N, K).
Import after kernels.setup().
"""

import functools
from dataclasses import dataclass

import numpy as np
from numba import cuda

from cutelite import (
    Layout, group, make_copy_atom, make_tiled_copy, make_tiled_copy_A, make_tiled_copy_B, make_tiled_mma, size,
)

from .intrinsics import (
    SMEM_ALIGN, cp_async_cg_16, cp_async_commit, cp_async_wait, ld_global_v4_b32, ldmatrix_x2,
    ldmatrix_x2_trans, ldmatrix_x4, ldmatrix_x4_trans, mma_m16n8k8_f32_f16, mma_m16n8k16_f32_f16,
    st_shared_v4_b32,
)
from .layout_codegen import layout_fn, layout_pyfunc
from .timing import gpu_time_ms

BM, BN, BK = 32, 32, 32
THREADS = 128
u16, u32, f32 = np.uint16, np.uint32, np.float32

PATHS = {   # path -> (MMA atom, global->shared copy op, mma intrinsic)
    "sm75": ("SM75_16x8x8_F32F16F16F32_TN", "UniversalCopy<uint128_t>", mma_m16n8k8_f32_f16),
    "sm80": ("SM80_16x8x16_F32F16F16F32_TN", "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", mma_m16n8k16_f32_f16),
}
LDSM = {"SM75_U32x2_LDSM_N": ldmatrix_x2, "SM75_U32x4_LDSM_N": ldmatrix_x4,
        "SM75_U16x4_LDSM_T": ldmatrix_x2_trans, "SM75_U16x8_LDSM_T": ldmatrix_x4_trans}


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
    atom, g2s_op, _ = PATHS[path]
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


def global_tiles(K, N):
    """(gA, gB, gC): the CTA's tiles inside row-major A (M, K), B (K, N) seen as (N, K), C (M, N)."""
    return Layout((BM, BK), (K, 1)), Layout((BN, BK), (1, N)), Layout((BM, BN), (N, 1))


def by_thread(tiled_copy, tile):
    """tiled_copy.tidfrg_S(tile) as (thread, value, rest) -> offset (rest modes grouped into one)."""
    return group(tiled_copy.tidfrg_S(tile), 2)


def register_pairs(layout, what):
    """Check that values 2j, 2j+1 of mode 0 of a fragment layout sit in one 32-bit register (even index,
    then the next one) for every coordinate of the other modes: f16 pairs travel packed."""
    f = layout_pyfunc(layout, by_mode=True)
    rest = [size(layout, i) for i in range(1, len(layout.shape))]
    for v in range(0, size(layout, 0), 2):
        for c in np.ndindex(*rest):
            o = f(v, *c)
            if o % 2 or f(v + 1, *c) != o + 1:
                raise ValueError("%s: values %d, %d of %s are not one packed register" % (what, v, v + 1, layout))


def _contiguous(tiled_copy, *tiles):
    """Each atom's values are consecutive 16-byte-aligned halves in every tile (else no 128-bit copy)."""
    V = tiled_copy.atom_num_val
    for tile in tiles:
        f = by_thread(tiled_copy, tile)
        g = layout_pyfunc(f, by_mode=True)
        for t in range(size(f, 0)):
            for a in range(0, size(f, 1), V):
                for r in range(size(f, 2)):
                    o = g(t, a, r)
                    if o % 8 or any(g(t, a + v, r) != o + v for v in range(V)):
                        raise ValueError("%r: values of one atom are not 16 contiguous bytes in %s"
                                         % (tiled_copy.atom, tile))


def _operand(n, at):
    """A device function reading an mma operand of n registers from a packed fragment through `at`
    (a compiled fragment layout (value, i, k) -> half index)."""
    dev = cuda.jit(device=True, inline="always")
    if n == 1:
        return dev(lambda f, i, k: (f[at(0, i, k) // 2],))
    if n == 2:
        return dev(lambda f, i, k: (f[at(0, i, k) // 2], f[at(2, i, k) // 2]))
    return dev(lambda f, i, k: (f[at(0, i, k) // 2], f[at(2, i, k) // 2],
                                f[at(4, i, k) // 2], f[at(6, i, k) // 2]))


@functools.lru_cache(maxsize=None)
def make_gemm_kernel(path, K, N):
    """k(A, B, C) for flat arrays: A (M*K) and B (K*N) uint16 bits of f16, C (M*N) float32.
    Launch: grid (N / 32, M / 32), block 128."""
    o = make_gemm_objects(path)
    mma_op = PATHS[path][2]
    gA, gB, gC = global_tiles(K, N)
    thr = o.mma.get_slice(0)
    tCrA, tCrB = thr.partition_fragment_A(o.sA), thr.partition_fragment_B(o.sB)
    tCrC = thr.partition_fragment_C(gC)
    for lay, what in ((tCrA, "tCrA"), (tCrB, "tCrB"), (o.s2r_A.retile(tCrA), "retile_D(tCrA)"),
                      (o.s2r_B.retile(tCrB), "retile_D(tCrB)")):
        register_pairs(lay, what)
    _contiguous(o.g2s_A, gA, o.sA)
    _contiguous(o.g2s_B, gB, o.sB)
    # the thread index must be the flat coordinate of the MMA's thread mode, as for make_layout((32,2,2,1))
    assert o.mma.thr_layout_vmnk == Layout((32, 2, 2, 1), (1, 32, 64, 0))

    # global -> shared: (thread, value, rest) -> offset, source and destination
    gA_at, sA_at = (layout_fn(by_thread(o.g2s_A, x), by_mode=True) for x in (gA, o.sA))
    gB_at, sB_at = (layout_fn(by_thread(o.g2s_B, x), by_mode=True) for x in (gB, o.sB))
    NGA, RGA = size(by_thread(o.g2s_A, gA), 1), size(by_thread(o.g2s_A, gA), 2)
    NGB, RGB = size(by_thread(o.g2s_B, gB), 1), size(by_thread(o.g2s_B, gB), 2)
    # shared -> registers: ldmatrix row addresses (partition_S) and register slots (retile_D)
    ldA, ldB = LDSM[o.s2r_A.atom.op], LDSM[o.s2r_B.atom.op]
    lA_src, lB_src = layout_fn(by_thread(o.s2r_A, o.sA), by_mode=True), layout_fn(by_thread(o.s2r_B, o.sB), by_mode=True)
    lA_dst = layout_fn(group(o.s2r_A.retile(tCrA), 1), by_mode=True)    # (value, rest) -> half in tCrA
    lB_dst = layout_fn(group(o.s2r_B.retile(tCrB), 1), by_mode=True)
    VA, VB = o.s2r_A.atom_num_val, o.s2r_B.atom_num_val              # halves one ldmatrix gives a thread
    NLA, RLA = size(by_thread(o.s2r_A, o.sA), 1), size(by_thread(o.s2r_A, o.sA), 2)
    NLB, RLB = size(by_thread(o.s2r_B, o.sB), 1), size(by_thread(o.s2r_B, o.sB), 2)
    # the MMA: fragment layouts (value, i, k) -> register half, and C through partition_C
    rA = _operand(size(o.mma.atom.LayoutA_TV, 1) // 2, layout_fn(tCrA, by_mode=True))
    rB = _operand(size(o.mma.atom.LayoutB_TV, 1) // 2, layout_fn(tCrB, by_mode=True))
    c_at = layout_fn(tCrC, by_mode=True)
    gC_at = layout_fn(group(o.mma.thrfrg_C(gC), 1), by_mode=True)       # (thread, fragment index) -> C
    MM, MN, MK = size(tCrA, 1), size(tCrB, 1), size(tCrA, 2)
    FA, FB, FC = size(tCrA) // 2, size(tCrB) // 2, size(tCrC)
    SA, SB = size(o.sA), size(o.sB)
    dev = cuda.jit(device=True, inline="always")

    if path == "sm80":
        @dev
        def global_to_shared(A, B, sA, sB, a0, b0, t):
            for r in range(RGA):
                for v in range(0, NGA, 8):
                    cp_async_cg_16(sA, sA_at(t, v, r), A, a0 + gA_at(t, v, r))
            for r in range(RGB):
                for v in range(0, NGB, 8):
                    cp_async_cg_16(sB, sB_at(t, v, r), B, b0 + gB_at(t, v, r))
            cp_async_commit()
            cp_async_wait(0)
    else:
        @dev
        def global_to_shared(A, B, sA, sB, a0, b0, t):
            for r in range(RGA):
                for v in range(0, NGA, 8):
                    st_shared_v4_b32(sA, sA_at(t, v, r), ld_global_v4_b32(A, a0 + gA_at(t, v, r)))
            for r in range(RGB):
                for v in range(0, NGB, 8):
                    st_shared_v4_b32(sB, sB_at(t, v, r), ld_global_v4_b32(B, b0 + gB_at(t, v, r)))

    @cuda.jit
    def tiled_mma_gemm(A, B, C):
        sA = cuda.shared.array(SA, u16, alignment=SMEM_ALIGN)
        sB = cuda.shared.array(SB, u16, alignment=SMEM_ALIGN)
        fa = cuda.local.array(FA, u32)          # tCrA, f16 pairs
        fb = cuda.local.array(FB, u32)          # tCrB
        acc = cuda.local.array(FC, f32)         # tCrC
        t = cuda.threadIdx.x
        m0, n0 = cuda.blockIdx.y * BM, cuda.blockIdx.x * BN
        for i in range(FC):
            acc[i] = f32(0.0)
        for k0 in range(0, K, BK):
            global_to_shared(A, B, sA, sB, m0 * K + k0, k0 * N + n0, t)
            cuda.syncthreads()
            for r in range(RLA):                # copy(s2r_A, partition_S(sA), retile_D(tCrA))
                for v in range(0, NLA, VA):
                    regs = ldA(sA, lA_src(t, v, r))
                    for j in range(VA // 2):
                        fa[lA_dst(v + 2 * j, r) // 2] = regs[j]
            for r in range(RLB):
                for v in range(0, NLB, VB):
                    regs = ldB(sB, lB_src(t, v, r))
                    for j in range(VB // 2):
                        fb[lB_dst(v + 2 * j, r) // 2] = regs[j]
            for k in range(MK):                 # gemm(mma, tCrA, tCrB, tCrC)
                for m in range(MM):
                    for n in range(MN):
                        d = mma_op(rA(fa, m, k), rB(fb, n, k),
                                   (acc[c_at(0, m, n)], acc[c_at(1, m, n)], acc[c_at(2, m, n)], acc[c_at(3, m, n)]))
                        for j in range(4):
                            acc[c_at(j, m, n)] = d[j]
            cuda.syncthreads()
        for i in range(FC):                     # copy(tCrC, partition_C(gC))
            C[m0 * N + n0 + gC_at(t, i)] = acc[i]

    tiled_mma_gemm.objects = o
    return tiled_mma_gemm


def run_warp_gemm(A, B, path="sm80", reps=0):
    """C = A @ B (f32) by the TiledMMA kernel; A (M, K), B (K, N) float16, sides multiples of 32.
    Returns C, or (C, median ms of `reps` launches) when reps > 0. C is poisoned (NaN) before the launch."""
    A, B = np.ascontiguousarray(A, np.float16), np.ascontiguousarray(B, np.float16)
    (M, K), (K2, N) = A.shape, B.shape
    if K != K2 or M % BM or N % BN or K % BK:
        raise ValueError("run_warp_gemm: need A (M, K), B (K, N) with M, N, K multiples of 32; got %s, %s"
                         % (A.shape, B.shape))
    k = make_gemm_kernel(path, K, N)
    dA, dB = cuda.to_device(A.view(u16).reshape(-1)), cuda.to_device(B.view(u16).reshape(-1))
    dC = cuda.to_device(np.full(M * N, np.nan, f32))
    grid = (N // BN, M // BM)
    k[grid, THREADS](dA, dB, dC)
    C = dC.copy_to_host().reshape(M, N)
    if not reps:
        return C
    return C, gpu_time_ms(lambda: k[grid, THREADS](dA, dB, dC), reps)
