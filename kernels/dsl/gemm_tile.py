"""Chapter 6's GEMM tile (kernels/tiled/mma.py, sm80 path) in the CuTe DSL: each CTA of 128 threads computes
a (32, 32) tile of C = A B, one 32-wide k-tile at a time, no pipeline. The same objects, the same body:

  * mma: SM80 16x8x16 (f16 in, f32 accumulators), 2 x 2 warps, permutation 32 x 32 x 16;
  * g2s_A / g2s_B: 16-byte cp.async (.cg), 8 halves a thread along the operand's contiguous mode;
  * s2r_A / s2r_B: ldmatrix made from the TiledMMA, LDSM_N for the K-major A, LDSM_T for the N-major B;
  * sA (32, 32) K-major, sB (32, 32) N-major (B is (K, N) row-major, seen as (N, K)).

    compiled = compile_gemm(A, B, C)       # A (M, K), B (K, N) f16 and C (M, N) f32 as DLPack tensors
    compiled(A, B, C, stream)              # M, N, K multiples of 32

`objects` builds the objects and `host` launches, as C++'s and the DSL's examples do; `kernel` is the
device code.
"""

import cutlass
import cutlass.cute as cute
from cutlass.memory import SmemAllocator

BM, BN, BK = 32, 32, 32
THREADS = 128


@cute.kernel
def kernel(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, mma: cute.TiledMma, g2s_A: cute.TiledCopy,
           g2s_B: cute.TiledCopy, s2r_A: cute.TiledCopy, s2r_B: cute.TiledCopy, sA_layout: cute.Layout,
           sB_layout: cute.Layout):
    tid, _, _ = cute.arch.thread_idx()
    bid, _, _ = cute.arch.block_idx()
    n_tiles = cute.size(mC, mode=[1]) // BN
    m, n = bid // n_tiles, bid % n_tiles                  # this CTA's tile of C
    gA = cute.local_tile(mA, (BM, BK), (m, None))         # (BM, BK, k)
    gB = cute.local_tile(mB, (BN, BK), (n, None))         # (BN, BK, k): B seen as (N, K)
    gC = cute.local_tile(mC, (BM, BN), (m, n))            # (BM, BN)
    smem = SmemAllocator()
    sA = smem.allocate_tensor(cutlass.Float16, sA_layout, 16)
    sB = smem.allocate_tensor(cutlass.Float16, sB_layout, 16)
    thr_g2s_A, thr_g2s_B = g2s_A.get_slice(tid), g2s_B.get_slice(tid)
    tAgA, tAsA = thr_g2s_A.partition_S(gA), thr_g2s_A.partition_D(sA)   # (CPY, CPY_M, CPY_K[, k])
    tBgB, tBsB = thr_g2s_B.partition_S(gB), thr_g2s_B.partition_D(sB)
    thr_mma = mma.get_slice(tid)
    tCrA = mma.make_fragment_A(thr_mma.partition_A(sA))  # (MMA, MMA_M, MMA_K) registers
    tCrB = mma.make_fragment_B(thr_mma.partition_B(sB))
    tCgC = thr_mma.partition_C(gC)
    tCrC = mma.make_fragment_C(tCgC)                      # (MMA, MMA_M, MMA_N) accumulators
    tCrC.fill(0.0)
    thr_s2r_A, thr_s2r_B = s2r_A.get_slice(tid), s2r_B.get_slice(tid)
    tXsA, tXrA = thr_s2r_A.partition_S(sA), thr_s2r_A.retile(tCrA)     # ldmatrix's view of sA and tCrA
    tXsB, tXrB = thr_s2r_B.partition_S(sB), thr_s2r_B.retile(tCrB)
    for k in range(cute.size(gA, mode=[2])):              # k-tiles, a run-time loop
        cute.copy(g2s_A, tAgA[None, None, None, k], tAsA)  # global -> shared (cp.async)
        cute.copy(g2s_B, tBgB[None, None, None, k], tBsB)
        cute.arch.cp_async_commit_group()
        cute.arch.cp_async_wait_group(0)                   # this thread's copies ...
        cute.arch.sync_threads()                           # ... and everyone's
        cute.copy(s2r_A, tXsA, tXrA)                       # shared -> registers, ldmatrix
        cute.copy(s2r_B, tXsB, tXrB)
        cute.gemm(mma, tCrC, tCrA, tCrB, tCrC)             # tCrC += tCrA @ tCrB
        cute.arch.sync_threads()                           # sA, sB are rewritten next
    cute.autovec_copy(tCrC, tCgC)                          # registers -> global


def objects():
    """The TiledMMA, TiledCopys and shared-memory layouts (kernels.tiled.make_gemm_objects("sm80")), built
    while the DSL traces `host`: (mma, g2s_A, g2s_B, s2r_A, s2r_B, sA_layout, sB_layout)."""
    op = cute.nvgpu.warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 16))
    mma = cute.make_tiled_mma(op, (2, 2, 1), permutation_mnk=(BM, BN, 16))
    g2s = cute.make_copy_atom(cute.nvgpu.cpasync.CopyG2SOp(cute.nvgpu.cpasync.LoadCacheMode.GLOBAL),
                              cutlass.Float16, num_bits_per_copy=128)
    return (mma,
            cute.make_tiled_copy_tv(g2s, cute.make_layout((32, 4), stride=(4, 1)), cute.make_layout((1, 8))),
            cute.make_tiled_copy_tv(g2s, cute.make_layout((4, 32), stride=(1, 4)), cute.make_layout((8, 1))),
            cute.make_tiled_copy_A(cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(False, 4), cutlass.Float16), mma),
            cute.make_tiled_copy_B(cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(True, 4), cutlass.Float16), mma),
            cute.make_layout((BM, BK), stride=(BK, 1)),
            cute.make_layout((BN, BK), stride=(1, BN)))


@cute.jit
def host(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream):
    mB = cute.make_tensor(mB.iterator, cute.select(mB.layout, mode=[1, 0]))   # (K, N) seen as (N, K)
    tiles = (cute.size(mC, mode=[0]) // BM) * (cute.size(mC, mode=[1]) // BN)
    kernel(mA, mB, mC, *objects()).launch(grid=[tiles, 1, 1], block=[THREADS, 1, 1], stream=stream)
