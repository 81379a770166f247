"""Tensor cores, sm_80+: a cp.async pipeline of `stages` shared-memory buffers feeding ldmatrix and
mma.m16n8k16, written with the CuTe layer (kernels.cutejit) from the objects of kernels.gemm.tensorcore.

While the tensor cores work on k-tile kt, the copies of the next stages - 1 k-tiles are already in flight:
cp.async moves 16 bytes from global to shared memory without passing through registers and completes in
the background; `cp_async_wait(stages - 2)` waits until k-tile kt has landed. Each k-block's fragments are
read from shared memory just before its mma (the next step, tc_sm80_prefetch, reads them one k-block
ahead). `edges=True` predicates every copy with an identity tensor, so M, N and K need not be multiples of
the tile (their unit-stride extents must still be multiples of 8 elements: 16-byte rows).
"""

from cutelite import _, size

from ..cutejit import (
    TileScheduler, assign, copy, cp_async_fence, cp_async_wait, fill, gemm, if_, kernel, local_tile,
    make_smem_tensor, range_, syncthreads, thread_idx, var,
)
from . import tensorcore

BEST = dict(BM=128, BN=128, BK=32, stages=4, warps=(2, 2), min_blocks=2)


@kernel
def gemm_tc_sm80(mA, mB, mC, mma, g2s_A, g2s_B, s2r_A, s2r_B, sA_layout, sB_layout, stages, edges):
    tid = thread_idx()
    BM, BN, BK = size(sA_layout, 0), size(sB_layout, 0), size(sA_layout, 1)
    sched = TileScheduler((mC.shape[0] + BM - 1) // BM, (mC.shape[1] + BN - 1) // BN, group=8)
    m, n = sched.initial_work().coords                    # this CTA's tile, in grouped raster order
    gA = local_tile(mA, (BM, BK), (m, _))                 # (BM, BK, k)
    gB = local_tile(mB, (BN, BK), (n, _))                 # (BN, BK, k)
    gC = local_tile(mC, (BM, BN), (m, n))                 # (BM, BN)
    sA = make_smem_tensor(sA_layout, mA.dtype)            # (BM, BK, stages)
    sB = make_smem_tensor(sB_layout, mB.dtype)
    g2s_a, g2s_b = g2s_A.get_slice(tid), g2s_B.get_slice(tid)
    tAgA, tAsA = g2s_a.partition_S(gA), g2s_a.partition_D(sA)     # (CPY, CPY_M, CPY_K, k | stages)
    tBgB, tBsB = g2s_b.partition_S(gB), g2s_b.partition_D(sB)
    thr_mma = mma.get_slice(tid)
    tCrA = thr_mma.partition_fragment_A(sA[_, _, 0])     # (MMA, MMA_M, MMA_K) registers
    tCrB = thr_mma.partition_fragment_B(sB[_, _, 0])
    tCrC = thr_mma.partition_fragment_C(gC)              # (MMA, MMA_M, MMA_N) accumulators
    fill(tCrC, 0.0)
    s2r_a, s2r_b = s2r_A.get_slice(tid), s2r_B.get_slice(tid)
    tXsA, tXrA = s2r_a.partition_S(sA), s2r_a.retile_D(tCrA)       # ldmatrix sources, tCrA seen as its dsts
    tXsB, tXrB = s2r_b.partition_S(sB), s2r_b.retile_D(tCrB)
    pA = tensorcore.edge_guard(g2s_a.partition_S, mA, (BM, BK), (m, _)) if edges else None  # A's copies inside A
    pB = tensorcore.edge_guard(g2s_b.partition_S, mB, (BN, BK), (n, _)) if edges else None

    def load(k, stage):                                  # k-tile k of A and B into a stage, one group
        copy(g2s_A, tAgA[_, _, _, k], tAsA[_, _, _, stage], pred=pA and pA(k))
        copy(g2s_B, tBgB[_, _, _, k], tBsB[_, _, _, stage], pred=pB and pB(k))

    k_tiles = gA.shape[2]
    for s in range(stages - 1):                          # prologue: stages - 1 k-tiles in flight
        with if_(s < k_tiles):
            load(s, s)
        cp_async_fence()
    read, write = var(0, "read"), var(stages - 1, "write")
    for kt in range_(k_tiles):
        cp_async_wait(stages - 2)                        # k-tile kt has landed (this thread's copies) ...
        syncthreads()                                    # ... everyone's; and stage `write` is free again
        with if_(kt + stages - 1 < k_tiles):
            load(kt + stages - 1, write)
        cp_async_fence()
        assign(write, (write + 1) % stages)
        for kb in range(size(tCrA.layout, 2)):           # k-blocks of the tile, unrolled
            copy(s2r_A, tXsA[_, _, kb, read], tXrA[_, _, kb])
            copy(s2r_B, tXsB[_, _, kb, read], tXrB[_, _, kb])
            gemm(mma, tCrA[_, _, kb], tCrB[_, _, kb], tCrC)
        assign(read, (read + 1) % stages)
    tCgC = thr_mma.partition_C(gC)
    pC = tensorcore.edge_guard(thr_mma.partition_C, mC, (BM, BN), (m, n))() if edges else None
    copy(tCrC, tCgC, pred=pC)                            # accumulators -> C


def make(BM=128, BN=128, BK=32, stages=3, warps=(2, 2), dtype="float16", majors=("K", "MN"),
         min_blocks=2, edges=False):
    """The kernel for one configuration: a cutejit Kernel with .launch(grid, A, B^T view, C), .source, and
    .config / .tile / .objects. A (M, K) and B (K, N) hold f16 (or bf16) bits as uint16, C (M, N) float32."""
    o = tensorcore.objects(BM, BN, BK, stages, warps, "sm80", dtype, majors)
    k = gemm_tc_sm80.build(*tensorcore.operand_matrices(o), o.mma, o.g2s_A, o.g2s_B,
                           o.s2r_A, o.s2r_B, o.sA, o.sB, stages, edges, threads=o.threads, min_blocks=min_blocks)
    return tensorcore.finish(k, o, edges=edges)
