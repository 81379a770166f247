"""Tensor cores a T4 has (sm_75): ldmatrix and mma.m16n8k8, written with the CuTe layer. No cp.async on
sm_75, so the next k-tile travels global -> registers -> shared: its 16-byte loads (UniversalCopy of
128 bits: ld.global.v4) are issued before the math on this k-tile and stored (st.shared.v4) after it, into
the other of two shared-memory buffers; one barrier per k-tile. The k-block fragments are read one ahead,
as in tc_sm80_prefetch (one ldmatrix.x4 holds two k8 blocks of the mma). Every instruction here is T4-legal (tests assemble it with ptxas -arch=sm_75).
"""

from cutelite import _, size

from ..cutejit import (
    TileScheduler, assign, copy, epilogue, fill, gemm, if_, kernel, local_tile, make_fragment_like,
    make_smem_tensor, range_, syncthreads, thread_idx, var,
)
from . import tensorcore

BEST = dict(BM=128, BN=128, BK=32, warps=(2, 2), min_blocks=2)


@kernel
def gemm_tc_sm75(mA, mB, mC, mma, g2r_A, g2r_B, s2r_A, s2r_B, sA_layout, sB_layout, edges, epi, mX, mBias,
                 alpha, beta):
    tid = thread_idx()
    BM, BN, BK = size(sA_layout, 0), size(sB_layout, 0), size(sA_layout, 1)
    sched = TileScheduler((mC.shape[0] + BM - 1) // BM, (mC.shape[1] + BN - 1) // BN, group=8)
    m, n = sched.initial_work().coords                    # this CTA's tile, in grouped raster order
    gA = local_tile(mA, (BM, BK), (m, _))                 # (BM, BK, k)
    gB = local_tile(mB, (BN, BK), (n, _))
    gC = local_tile(mC, (BM, BN), (m, n))
    sA = make_smem_tensor(sA_layout, mA.dtype)            # (BM, BK, 2): two buffers
    sB = make_smem_tensor(sB_layout, mB.dtype)
    g2r_a, g2r_b = g2r_A.get_slice(tid), g2r_B.get_slice(tid)
    tAgA, tAsA = g2r_a.partition_S(gA), g2r_a.partition_D(sA)     # (CPY, CPY_M, CPY_K, k | 2)
    tBgB, tBsB = g2r_b.partition_S(gB), g2r_b.partition_D(sB)
    tArA = make_fragment_like(tAsA[_, _, _, 0], name="rgA")      # one k-tile's share, in registers
    tBrB = make_fragment_like(tBsB[_, _, _, 0], name="rgB")
    thr_mma = mma.get_slice(tid)
    tCrA = thr_mma.partition_fragment_A(sA[_, _, 0])
    tCrB = thr_mma.partition_fragment_B(sB[_, _, 0])
    tCrC = thr_mma.partition_fragment_C(gC)
    fill(tCrC, 0.0)
    s2r_a, s2r_b = s2r_A.get_slice(tid), s2r_B.get_slice(tid)
    tXsA, tXrA = s2r_a.partition_S(sA), s2r_a.retile_D(tCrA)
    tXsB, tXrB = s2r_b.partition_S(sB), s2r_b.retile_D(tCrB)
    pA = tensorcore.edge_guard(g2r_a.partition_S, mA, (BM, BK), (m, _)) if edges else None  # A's copies inside A
    pB = tensorcore.edge_guard(g2r_b.partition_S, mB, (BN, BK), (n, _)) if edges else None

    def fetch(k):                                        # global -> registers (ld.global.v4)
        copy(g2r_A, tAgA[_, _, _, k], tArA, pred=pA and pA(k))
        copy(g2r_B, tBgB[_, _, _, k], tBrB, pred=pB and pB(k))

    def stash(buf):                                      # registers -> shared (st.shared.v4)
        copy(tArA, tAsA[_, _, _, buf])
        copy(tBrB, tBsB[_, _, _, buf])

    def read_fragments(kb, buf):                         # one ldmatrix.x4 reads two k8 blocks
        copy(s2r_A, tXsA[_, _, kb, buf], tXrA[_, _, kb])
        copy(s2r_B, tXsB[_, _, kb, buf], tXrB[_, _, kb])

    k_tiles, k_blocks = gA.shape[2], size(tXrA.layout, 2)
    per = size(tCrA.layout, 2) // k_blocks                # mma k-blocks (k8) per copy k-block (k16)
    fetch(0)
    stash(0)
    syncthreads()
    buf = var(0, "buf")
    read_fragments(0, buf)
    for kt in range_(k_tiles):
        with if_(kt + 1 < k_tiles):
            fetch(kt + 1)                                # in flight during the math below
        for kb in range(k_blocks):
            if kb == k_blocks - 1:                       # k-tile kt + 1 into the other buffer, then read it
                with if_(kt + 1 < k_tiles):
                    stash(1 - buf)
                syncthreads()
                assign(buf, 1 - buf)
            read_fragments((kb + 1) % k_blocks, buf)
            for j in range(per * kb, per * (kb + 1)):
                gemm(mma, tCrA[_, _, j], tCrB[_, _, j], tCrC)
    pC = tensorcore.edge_guard(thr_mma.partition_C, mC, (BM, BN), (m, n))() if edges else None
    if epi is not None:                                  # D = act(alpha C + beta X + bias), in D's type
        tCrC = epilogue(epi, tCrC, thr_mma.partition_C, (BM, BN), (m, n), mX, mBias, alpha, beta, pred=pC)
    copy(tCrC, thr_mma.partition_C(gC), pred=pC)


def make(BM=128, BN=128, BK=32, warps=(2, 2), dtype="float16", majors=("K", "MN"), min_blocks=2,
         edges=False, epi=None):
    """As tc_sm80_prefetch.make, with the T4's instructions (f16 only: bf16 mma needs sm_80)."""
    o = tensorcore.objects(BM, BN, BK, 2, warps, "sm75", dtype, majors)
    k = gemm_tc_sm75.build(*tensorcore.operand_matrices(o, epi), o.mma, o.g2s_A, o.g2s_B,
                           o.s2r_A, o.s2r_B, o.sA, o.sB, edges, *tensorcore.epilogue_arguments(epi),
                           threads=o.threads, min_blocks=min_blocks)
    return tensorcore.finish(k, o, edges=edges, **({"epi": epi} if epi else {}))
