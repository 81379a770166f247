"""Step 6 of chapter 8: ping-pong consumers, so that C's store never stops the tensor cores.

The cooperative kernel's two consumer warpgroups split each tile's rows and store C together, while the
tensor cores wait. Here each consumer computes whole tiles, taking the block's tiles in turn (consumer c
the tiles j = c, c + 2, ...): while one runs tile j's main loop, the other stores tile j - 1. The producer
loads the tiles in order, so consumer c's pipeline state starts c tiles in and skips the other's tile
after each of its own. A PipelineOrder keeps the main loops in turn, on two named barriers: before its tile
j >= 1 a consumer waits (bar.sync) until the other, done issuing tile j - 1, arrives (bar.arrive). Without
that order a consumer could wait on a "full" barrier two phases early, where the parity test passes wrongly.
"""

from cutelite import _, size

from ..cutejit import (
    PipelineOrder, PipelineState, PipelineTmaAsync, TileScheduler, copy, else_, gemm, grid_dim, if_, kernel,
    local_tile, make_identity_tensor, make_smem_tensor, range_, setmaxnreg, thread_idx, warpgroup_arrive,
    warpgroup_commit, warpgroup_wait,
)
from . import objects as hopper
from .warp_specialized import produce

__all__ = ["gemm_pingpong", "make"]


@kernel
def gemm_pingpong(mA, mB, mC, tmA, tmB, mma, sA_layout, sB_layout, regs, group):
    tid = thread_idx()
    BM, BN, BK, stages = size(sA_layout, 0), size(sB_layout, 0), size(sA_layout, 1), size(sA_layout, 2)
    sA = make_smem_tensor(sA_layout.element_layout(), mA.dtype)
    sB = make_smem_tensor(sB_layout.element_layout(), mB.dtype)
    pipe = PipelineTmaAsync(stages, tmA.spec.bytes + tmB.spec.bytes, 1)   # one consumer reads a stage
    sched = TileScheduler((mC.shape[0] + BM - 1) // BM, (mC.shape[1] + BN - 1) // BN, group, persistent=True)
    k_tiles = (mA.shape[1] + BK - 1) // BK
    cA = local_tile(make_identity_tensor(mA.shape), (BM, BK), (_, _))
    cB = local_tile(make_identity_tensor(mB.shape), (BN, BK), (_, _))
    pipe.init()
    with if_(tid < 128):                                 # warpgroup 0: the producer, every tile in order
        setmaxnreg(regs[0], grow=False)
        with if_(tid < 1):
            produce(pipe, sched, k_tiles, tmA, cA, sA, tmB, cB, sB)
    with else_():                                        # warpgroups 1 and 2: tiles in turn
        setmaxnreg(regs[1], grow=True)
        c = (tid - 128) // 128
        thr_mma = mma.get_slice(tid & 127)
        tCrA = thr_mma.partition_fragment_A(sA)          # (1, BM / 64, MMA_K, stages): descriptors
        tCrB = thr_mma.partition_fragment_B(sB)
        order = PipelineOrder(2, c, 128)                 # the consumers' main loops take turns
        state, release = PipelineState(stages), PipelineState(stages)
        order.first_turn(k_tiles, state, release)        # consumer 1 starts at the block's second tile
        for tile in sched.tiles(first=c, step=2):
            m, n = tile.coords
            with if_(tile.index >= grid_dim()):          # tile j >= 1: the other consumer has issued j - 1
                order.wait()
            gC = local_tile(mC, (BM, BN), (m, n))
            acc = thr_mma.partition_fragment_C(gC)       # BM / 64 accumulators of 64 x BN
            for kt in range_(k_tiles):
                pipe.consumer_wait(state)
                warpgroup_arrive(acc)
                gemm(mma, tCrA[_, _, _, state.index], tCrB[_, _, _, state.index], acc, accumulate=kt > 0)
                warpgroup_commit()
                warpgroup_wait(1, acc)
                with if_(kt > 0):
                    pipe.consumer_release(release)
                    release.advance()
                state.advance()
            with if_(tile.index + grid_dim() < sched.count()):   # the other consumer may start tile j + 1
                order.arrive()
            warpgroup_wait(0, acc)
            pipe.consumer_release(release)
            release.advance()
            order.next_turn(k_tiles, state, release)     # skip the other consumer's tile
            copy(acc, thr_mma.partition_C(gC))           # stored while the other consumer computes


def make(BM=64, BN=256, stages=4, regs=(40, 232), group=16, dtype="float16"):
    """Step 6 for one configuration: a cutejit Kernel launched as kernel.launch(A, Bt, C, mapA, mapB)."""
    o = hopper.objects(BM, BN, stages, 2, dtype, pingpong=True)
    k = gemm_pingpong.build(*hopper.operand_matrices(o), o.tmA, o.tmB, o.mma, o.sA, o.sB, regs, group,
                            threads=384, max_registers=65536 // 384 // 8 * 8)
    return hopper.finish(k, o, regs=regs, group=group, persistent=True, pingpong=True)
