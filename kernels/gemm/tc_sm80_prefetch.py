"""Tensor cores, sm_80+, with k-block register prefetch: tc_sm80's cp.async pipeline, and the fragments of
k-block kb + 1 read from shared memory while the mma of k-block kb run (CUTLASS's sgemm_sm80.cu has this
structure).

In tc_sm80 every ldmatrix is followed by the mma that needs its registers, so a warp waits for shared
memory at each k-block. Here the fragments are double-buffered in registers (tCrA holds every k-block of
the tile): the reads for k-block kb + 1 are issued before the mma of kb, and the first k-block of the next
k-tile is read at the end of this one, right after the barrier that makes it visible. The pipeline's
bookkeeping moves accordingly: a k-tile's copies are issued at its first k-block, the wait and barrier
for the next one at its last.
"""

from cutelite import _, size

from ..cutejit import (
    TileScheduler, assign, copy, cp_async_fence, cp_async_wait, epilogue, fill, gemm, if_, kernel, local_tile,
    make_smem_tensor, range_, syncthreads, thread_idx, var,
)
from . import tensorcore

BEST = dict(BM=128, BN=128, BK=32, stages=4, warps=(2, 2), min_blocks=2)


@kernel
def gemm_tc_sm80_prefetch(mA, mB, mC, mma, g2s_A, g2s_B, s2r_A, s2r_B, sA_layout, sB_layout, stages, edges,
                          epi, mX, mBias, alpha, beta):
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
    tCrA = thr_mma.partition_fragment_A(sA[_, _, 0])     # (MMA, MMA_M, MMA_K): every k-block's registers
    tCrB = thr_mma.partition_fragment_B(sB[_, _, 0])
    tCrC = thr_mma.partition_fragment_C(gC)
    fill(tCrC, 0.0)
    s2r_a, s2r_b = s2r_A.get_slice(tid), s2r_B.get_slice(tid)
    tXsA, tXrA = s2r_a.partition_S(sA), s2r_a.retile_D(tCrA)
    tXsB, tXrB = s2r_b.partition_S(sB), s2r_b.retile_D(tCrB)
    pA = tensorcore.edge_guard(g2s_a.partition_S, mA, (BM, BK), (m, _)) if edges else None  # A's copies inside A
    pB = tensorcore.edge_guard(g2s_b.partition_S, mB, (BN, BK), (n, _)) if edges else None

    def load(k, stage):
        copy(g2s_A, tAgA[_, _, _, k], tAsA[_, _, _, stage], pred=pA and pA(k))
        copy(g2s_B, tBgB[_, _, _, k], tBsB[_, _, _, stage], pred=pB and pB(k))

    def read_fragments(kb, stage):                       # ldmatrix: k-block kb of a stage into registers
        copy(s2r_A, tXsA[_, _, kb, stage], tXrA[_, _, kb])
        copy(s2r_B, tXsB[_, _, kb, stage], tXrB[_, _, kb])

    k_tiles, k_blocks = gA.shape[2], size(tCrA.layout, 2)
    if k_blocks < 2:
        raise ValueError("gemm_tc_sm80_prefetch: BK must hold two k-blocks or more, got %d" % BK)
    for s in range(stages - 1):                          # prologue: stages - 1 k-tiles in flight
        with if_(s < k_tiles):
            load(s, s)
        cp_async_fence()
    read, write = var(0, "read"), var(stages - 1, "write")
    cp_async_wait(stages - 2)
    syncthreads()
    read_fragments(0, read)                              # k-block 0 of k-tile 0
    for kt in range_(k_tiles):
        for kb in range(k_blocks):
            if kb == k_blocks - 1:                       # the next k-tile: wait for it, then read its
                assign(read, (read + 1) % stages)        # k-block 0 below (the barrier also frees a stage)
                cp_async_wait(stages - 2)
                syncthreads()
            read_fragments((kb + 1) % k_blocks, read)    # k-block kb + 1, in flight during the mma of kb
            if kb == 0:                                  # refill the stage freed by the last barrier
                with if_(kt + stages - 1 < k_tiles):
                    load(kt + stages - 1, write)
                cp_async_fence()
                assign(write, (write + 1) % stages)
            gemm(mma, tCrA[_, _, kb], tCrB[_, _, kb], tCrC)
    pC = tensorcore.edge_guard(thr_mma.partition_C, mC, (BM, BN), (m, n))() if edges else None
    if epi is not None:                                  # D = act(alpha C + beta X + bias), in D's type
        tCrC = epilogue(epi, tCrC, thr_mma.partition_C, (BM, BN), (m, n), mX, mBias, alpha, beta, pred=pC)
    copy(tCrC, thr_mma.partition_C(gC), pred=pC)


def make(BM=128, BN=128, BK=32, stages=4, warps=(2, 2), dtype="float16", majors=("K", "MN"),
         min_blocks=2, edges=False, epi=None):
    """As tc_sm80.make: a Kernel with .launch(A, B, C), .source, .config, .tile, .objects. epi: an Epilogue
    (kernels.cutejit.epilogue), launched as .launch(A, B, D, *its run-time arguments); None: C = A @ B."""
    o = tensorcore.objects(BM, BN, BK, stages, warps, "sm80", dtype, majors)
    k = gemm_tc_sm80_prefetch.build(*tensorcore.operand_matrices(o, epi), o.mma, o.g2s_A,
                                    o.g2s_B, o.s2r_A, o.s2r_B, o.sA, o.sB, stages, edges,
                                    *tensorcore.epilogue_arguments(epi), threads=o.threads, min_blocks=min_blocks)
    return tensorcore.finish(k, o, edges=edges, **({"epi": epi} if epi else {}))
