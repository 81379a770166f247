"""Step 1 of chapter 8: wgmma alone, fed the Ampere way.

Every thread copies its share of each k-tile of A and B into the 128-byte-swizzled stages with 16-byte
cp.async (chapter 7's pipeline), and each consumer warpgroup runs the GMMA TiledMMA on descriptors of those
stages. Per k-tile: wait for this thread's copies, make them visible to wgmma's async proxy, barrier, start
the next copy, then fence, issue the k-tile's four wgmmas, commit them as one group and wait for it
(wait_group 0) before the stage can be overwritten. No producer, no mbarrier, no TMA: the next steps.
"""

from cutelite import _, size

from ..cutejit import (
    TileScheduler, assign, copy, cp_async_fence, cp_async_wait, fence_proxy_async, gemm, if_, kernel,
    local_tile, make_smem_tensor, range_, syncthreads, thread_idx, var, warpgroup_arrive, warpgroup_commit,
    warpgroup_wait,
)
from . import objects as hopper

__all__ = ["gemm_wgmma_cp_async", "make"]


@kernel
def gemm_wgmma_cp_async(mA, mB, mC, mma, g2s, sA_layout, sB_layout):
    tid = thread_idx()
    BM, BN, BK, stages = size(sA_layout, 0), size(sB_layout, 0), size(sA_layout, 1), size(sA_layout, 2)
    sched = TileScheduler((mC.shape[0] + BM - 1) // BM, (mC.shape[1] + BN - 1) // BN, group=8)
    m, n = sched.initial_work().coords
    gA = local_tile(mA, (BM, BK), (m, _))                 # (BM, BK, k)
    gB = local_tile(mB, (BN, BK), (n, _))
    gC = local_tile(mC, (BM, BN), (m, n))
    sA = make_smem_tensor(sA_layout.element_layout(), mA.dtype)    # (BM, BK, stages), swizzled
    sB = make_smem_tensor(sB_layout.element_layout(), mB.dtype)
    thr_copy = g2s.get_slice(tid)
    tAgA, tAsA = thr_copy.partition_S(gA), thr_copy.partition_D(sA)
    tBgB, tBsB = thr_copy.partition_S(gB), thr_copy.partition_D(sB)
    thr_mma = mma.get_slice(tid)
    tCrA = thr_mma.partition_fragment_A(sA)              # (1, MMA_M, MMA_K, stages): descriptors
    tCrB = thr_mma.partition_fragment_B(sB)
    acc = thr_mma.partition_fragment_C(gC)               # this warpgroup's 64 x BN accumulators

    def load(k, stage):
        copy(g2s, tAgA[_, _, _, k], tAsA[_, _, _, stage])
        copy(g2s, tBgB[_, _, _, k], tBsB[_, _, _, stage])

    k_tiles = gA.shape[2]
    for s in range(stages - 1):                          # prologue: stages - 1 k-tiles in flight
        with if_(s < k_tiles):
            load(s, s)
        cp_async_fence()
    read, write = var(0, "read"), var(stages - 1, "write")
    for kt in range_(k_tiles):
        cp_async_wait(stages - 2)                        # this thread's copies of k-tile kt landed,
        fence_proxy_async()                              # visible to the async proxy wgmma reads with,
        syncthreads()                                    # everyone's; and every wgmma of kt - 1 is done
        with if_(kt + stages - 1 < k_tiles):
            load(kt + stages - 1, write)
        cp_async_fence()
        assign(write, (write + 1) % stages)
        warpgroup_arrive(acc)
        gemm(mma, tCrA[_, _, _, read], tCrB[_, _, _, read], acc, accumulate=kt > 0)
        warpgroup_commit()
        warpgroup_wait(0, acc)                           # done reading the stage before it is refilled
        assign(read, (read + 1) % stages)
    copy(acc, thr_mma.partition_C(gC))                   # accumulators -> C


def make(BN=128, stages=4, consumers=2, dtype="float16"):
    """Step 1 for one configuration: a cutejit Kernel launched as kernel.launch(A, Bt, C)."""
    o = hopper.objects(64 * consumers, BN, stages, consumers, dtype)
    k = gemm_wgmma_cp_async.build(*hopper.operand_matrices(o), o.mma, o.g2s, o.sA, o.sB,
                                  threads=128 * consumers)
    return hopper.finish(k, o, step="cp.async + wgmma")
