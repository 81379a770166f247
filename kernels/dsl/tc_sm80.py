"""Chapter 7's best tensor-core kernel (kernels/gemm/tc_sm80.py, its BEST configuration) in the CuTe DSL:
128 x 128 x 32 CTA tiles, 2 x 2 warps of SM80 16x8x16 (f16 in, f32 accumulators), a cp.async pipeline of
4 shared-memory stages, swizzled shared memory read by ldmatrix, CTAs rastered in groups of 8 tile rows,
two CTAs per SM. A (M, K) and B (K, N) f16 row-major, C (M, N) f32; M, N multiples of 128, K of 32.

`objects` builds the objects exactly as kernels.gemm.tensorcore.objects builds them with cutelite; the
kernel body is tc_sm80's, line for line. One difference of idiom: the DSL allocates shared memory with
the swizzle on its pointer (`allocate_tensor(..., swizzle=...)`), where it acts on byte addresses, while
cutelite composes it into the layout, on element offsets (Sw<2,3,3> o _0 o layout on halves is Sw<2,4,3> on
bytes); the addresses are the same.
"""

import cutlass
import cutlass.cute as cute
from cutlass.memory import SmemAllocator

BM, BN, BK, STAGES, WARPS, MIN_BLOCKS = 128, 128, 32, 4, (2, 2), 2
THREADS = 32 * WARPS[0] * WARPS[1]


@cute.jit
def raster(bid, num_m, num_n, group: cutlass.Constexpr = 8):
    """CTA bid -> its tile (m, n), `group` tile rows at a time, column by column (TileScheduler.coords)."""
    per_group = group * num_n
    first_m = (bid // per_group) * group
    rows = cutlass.min(num_m - first_m, group)
    return first_m + (bid % per_group) % rows, (bid % per_group) // rows


@cute.kernel
def kernel(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, mma: cute.TiledMma, g2s_A: cute.TiledCopy,
           g2s_B: cute.TiledCopy, s2r_A: cute.TiledCopy, s2r_B: cute.TiledCopy, sA_layout: cute.Layout,
           sB_layout: cute.Layout, sA_swizzle: cute.Swizzle, sB_swizzle: cute.Swizzle):
    tid, _, _ = cute.arch.thread_idx()
    bid, _, _ = cute.arch.block_idx()
    m, n = raster(bid, cute.size(mC, mode=[0]) // BM, cute.size(mC, mode=[1]) // BN)
    gA = cute.local_tile(mA, (BM, BK), (m, None))        # (BM, BK, k)
    gB = cute.local_tile(mB, (BN, BK), (n, None))        # (BN, BK, k)
    gC = cute.local_tile(mC, (BM, BN), (m, n))           # (BM, BN)
    smem = SmemAllocator()
    sA = smem.allocate_tensor(cutlass.Float16, sA_layout, 16, sA_swizzle)    # (BM, BK, stages)
    sB = smem.allocate_tensor(cutlass.Float16, sB_layout, 16, sB_swizzle)
    g2s_a, g2s_b = g2s_A.get_slice(tid), g2s_B.get_slice(tid)
    tAgA, tAsA = g2s_a.partition_S(gA), g2s_a.partition_D(sA)     # (CPY, CPY_M, CPY_K, k | stages)
    tBgB, tBsB = g2s_b.partition_S(gB), g2s_b.partition_D(sB)
    thr_mma = mma.get_slice(tid)
    tCrA = mma.make_fragment_A(thr_mma.partition_A(sA[None, None, 0]))    # (MMA, MMA_M, MMA_K) registers
    tCrB = mma.make_fragment_B(thr_mma.partition_B(sB[None, None, 0]))
    tCgC = thr_mma.partition_C(gC)
    tCrC = mma.make_fragment_C(tCgC)                     # (MMA, MMA_M, MMA_N) accumulators
    tCrC.fill(0.0)
    s2r_a, s2r_b = s2r_A.get_slice(tid), s2r_B.get_slice(tid)
    tXsA, tXrA = s2r_a.partition_S(sA), s2r_a.retile(tCrA)          # ldmatrix sources, tCrA seen as its dsts
    tXsB, tXrB = s2r_b.partition_S(sB), s2r_b.retile(tCrB)

    k_tiles = cute.size(gA, mode=[2])
    for s in cutlass.range_constexpr(STAGES - 1):         # prologue: stages - 1 k-tiles in flight
        if s < k_tiles:
            cute.copy(g2s_A, tAgA[None, None, None, s], tAsA[None, None, None, s])
            cute.copy(g2s_B, tBgB[None, None, None, s], tBsB[None, None, None, s])
        cute.arch.cp_async_commit_group()
    read, write = cutlass.Int32(0), cutlass.Int32(STAGES - 1)
    for kt in range(k_tiles):
        cute.arch.cp_async_wait_group(STAGES - 2)         # k-tile kt has landed (this thread's copies) ...
        cute.arch.sync_threads()                          # ... everyone's; and stage `write` is free again
        if kt + STAGES - 1 < k_tiles:
            cute.copy(g2s_A, tAgA[None, None, None, kt + STAGES - 1], tAsA[None, None, None, write])
            cute.copy(g2s_B, tBgB[None, None, None, kt + STAGES - 1], tBsB[None, None, None, write])
        cute.arch.cp_async_commit_group()
        write = (write + 1) % STAGES
        for kb in cutlass.range_constexpr(cute.size(tCrA, mode=[2])):     # k-blocks of the tile, unrolled
            cute.copy(s2r_A, tXsA[None, None, kb, read], tXrA[None, None, kb])
            cute.copy(s2r_B, tXsB[None, None, kb, read], tXrB[None, None, kb])
            cute.gemm(mma, tCrC, tCrA[None, None, kb], tCrB[None, None, kb], tCrC)
        read = (read + 1) % STAGES
    cute.autovec_copy(tCrC, tCgC)                         # accumulators -> C


def _g2s(atom, mn, k_major):
    """THREADS copy an (mn, BK) tile, 8 halves a thread and call, along the contiguous mode (tensorcore._g2s)."""
    if k_major:
        along = BK // 8
        return cute.make_tiled_copy_tv(atom, cute.make_layout((THREADS // along, along), stride=(along, 1)),
                                       cute.make_layout((1, 8)))
    along = mn // 8
    return cute.make_tiled_copy_tv(atom, cute.make_layout((along, THREADS // along), stride=(1, along)),
                                   cute.make_layout((8, 1)))


def objects():
    """The objects of kernels.gemm.tensorcore.objects(**tc_sm80.BEST), built while the DSL traces `host`:
    (mma, g2s_A, g2s_B, s2r_A, s2r_B, sA_layout, sB_layout, sA_swizzle, sB_swizzle)."""
    op = cute.nvgpu.warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 16))
    mma = cute.make_tiled_mma(op, (WARPS[0], WARPS[1], 1), permutation_mnk=(16 * WARPS[0], 16 * WARPS[1], 16))
    cp_async = cute.make_copy_atom(cute.nvgpu.cpasync.CopyG2SOp(cute.nvgpu.cpasync.LoadCacheMode.GLOBAL),
                                   cutlass.Float16, num_bits_per_copy=128)
    s2r_A = cute.make_tiled_copy_A(cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(False, 4), cutlass.Float16), mma)
    s2r_B = cute.make_tiled_copy_B(cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(True, 4), cutlass.Float16), mma)
    # tensorcore.swizzle_atom: K-major rows of 32 halves are Sw<2,3,3>, N-major 64 x 8 blocks Sw<3,3,3>, on
    # element offsets; on the pointer the swizzle acts on byte addresses: Sw<2,4,3> and Sw<3,4,3> (chapter 4)
    sA_layout = cute.tile_to_shape(cute.make_layout((8, BK), stride=(BK, 1)), (BM, BK, STAGES), (0, 1, 2))
    sB_layout = cute.tile_to_shape(cute.make_layout((64, 8), stride=(1, 64)), (BN, BK, STAGES), (0, 1, 2))
    return (mma, _g2s(cp_async, BM, True), _g2s(cp_async, BN, False), s2r_A, s2r_B, sA_layout, sB_layout,
            cute.make_swizzle(2, 4, 3), cute.make_swizzle(3, 4, 3))


@cute.jit
def host(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream):
    mB = cute.make_tensor(mB.iterator, cute.select(mB.layout, mode=[1, 0]))   # (K, N) seen as (N, K): N-major
    tiles = (cute.size(mC, mode=[0]) // BM) * (cute.size(mC, mode=[1]) // BN)
    # launch bounds (THREADS, MIN_BLOCKS) as the Numba kernel's; carveout -1 is "no preference", as there
    kernel(mA, mB, mC, *objects()).launch(
        grid=[tiles, 1, 1], block=[THREADS, 1, 1], max_number_threads=[THREADS, 1, 1],
        min_blocks_per_mp=MIN_BLOCKS, preferred_smem_carveout=-1, stream=stream)
