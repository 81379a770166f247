"""Steps 2-5 of chapter 8: TMA loads on an mbarrier pipeline, a producer warpgroup, wgmma consumers.

Warpgroup 0 is the producer: one of its threads acquires a stage (waits until it is empty), announces its
bytes, and issues the TMA loads of A's and B's k-tile, which complete on the stage's "full" barrier. The
other warpgroups are consumers: each waits until a stage is full, issues its wgmmas on the stage's
descriptors, commits them as a group, and waits until at most one group is in flight (wait_group 1): the
group of the k-tile before is then done, so *its* stage is released. One group stays in flight while the
next stage is awaited, and the tensor cores never wait for a release.

The same body is four steps of the ladder, by its arguments:
  * the tile scheduler: one tile per block, or persistent (a block per SM walking tiles gridDim.x apart,
    the producer loading the next tile's stages while the consumers finish this one);
  * `regs`: setmaxnreg gives the producer's registers to the consumers (40 / 232 a thread);
  * `tma_store`: C leaves through shared memory and TMA stores (epilogue_tma) instead of st.global;
  * `split_k` (with tma_store, without epi): block row y of a grid of gridDim.y rows computes the y-th of
    gridDim.y equal runs of k-tiles and adds its partial C into C with TMA reduce-adds
    (cp.reduce.async.bulk.tensor .add), C zeroed before the launch on the same stream (kernels.hopper.gemm):
    no workspace, no second pass;
  * `stream_k` (persistent, with tma_store, without epi): the blocks compute the full waves' tiles whole and
    share the last part-full wave's k-tiles evenly (TileScheduler.runs); a block's piece of a tile is added
    into C with the same reduce-adds, C zeroed there before the launch (the box of those tiles);
  * `epi` (with tma_store): an Epilogue (kernels.cutejit.epilogue) computes C's values from the accumulators
    in registers, in C's type, before they leave (epilogue_tma).
"""

import contextlib

from cutelite import Layout, _, logical_divide, make_tiled_mma, size
from cutelite.gmma import make_gmma_atom

from ..cutejit import (
    NamedBarrier, PipelineState, PipelineTmaAsync, PipelineTmaStore, TileScheduler, block_idx, copy, elem_less,
    else_, epilogue, fence_proxy_async, gemm, grid_dim, if_, kernel, local_tile, make_identity_tensor,
    make_producer_start_state, make_smem_tensor, min_, prefetch_tensor_map, range_, setmaxnreg, thread_idx,
    tma_load, warpgroup_arrive, warpgroup_commit, warpgroup_wait,
)
from ..cutejit.tensor import RTensor
from ..cutejit.tiled import wrap
from . import objects as hopper

__all__ = ["gemm_warp_specialized", "setup", "consumers_after_producer", "produce", "epilogue_tma", "make"]


@kernel
def gemm_warp_specialized(mA, mB, mC, tmA, tmB, tmC, mma, sA_layout, sB_layout, sC_layout, regs, group,
                          persistent, tma_store_c, split_k, epi, mX, mBias, alpha, beta, stream_k):
    tid = thread_idx()
    BM, BN, BK, consumers, sA, sB, pipe, sched, k_tiles = setup(mA, mB, mC, tmA, tmB, mma, sA_layout, sB_layout,
                                                                group, persistent, stream_k)
    k_first = 0
    if split_k:                                          # this block row's run of k-tiles
        per_split = (k_tiles + grid_dim("y") - 1) // grid_dim("y")
        k_first = block_idx("y") * per_split
        k_tiles = min_(per_split, k_tiles - k_first)     # the host makes every run non-empty
    cA = local_tile(make_identity_tensor(mA.shape), (BM, BK), (_, _))   # (BM, BK, m, k): coordinates
    cB = local_tile(make_identity_tensor(mB.shape), (BN, BK), (_, _))
    with consumers_after_producer(tid, regs, pipe, sched, k_tiles, tmA, cA, sA, tmB, cB, sB, k_first):
        if tma_store_c:
            sC = make_smem_tensor(sC_layout.element_layout(), mC.dtype)    # (64, 128 bytes, 2 * consumers)
            store = PipelineTmaStore(sC, 2, (tid - 128) // 128, leader=(tid & 127) < 1)   # 2 buffers a warpgroup
            with if_(store.leader):
                prefetch_tensor_map(tmC)                 # the thread that will store C, before its first store
        thr_mma = mma.get_slice(tid - 128)
        tCrA = thr_mma.partition_fragment_A(sA)          # (1, MMA_M, MMA_K, stages): descriptors
        tCrB = thr_mma.partition_fragment_B(sB)
        state, release = PipelineState(pipe.stages), PipelineState(pipe.stages)
        for tile in sched.runs(k_tiles, k_first):        # each with its run of k-tiles
            m, n = tile.coords
            gC = local_tile(mC, (BM, BN), (m, n))
            acc = thr_mma.partition_fragment_C(gC)       # this warpgroup's 64 x BN accumulators
            for kt in range_(tile.k_tiles):
                pipe.consumer_wait(state)                # the stage is full
                warpgroup_arrive(acc)
                gemm(mma, tCrA[_, _, _, state.index], tCrB[_, _, _, state.index], acc, accumulate=kt > 0)
                warpgroup_commit()
                warpgroup_wait(1, acc)                   # k-tile kt - 1's wgmmas are done:
                with if_(kt > 0):
                    pipe.consumer_release(release)       # ... free its stage
                    release.advance()
                state.advance()
            warpgroup_wait(0, acc)
            pipe.consumer_release(release)               # the tile's last stage
            release.advance()
            if tma_store_c:
                add = True if split_k else tile.partial  # a partial sum: added into C
                epilogue_tma(tmC, mC, acc, store, m, n, BM, BN, consumers, add, epi, mX, mBias, alpha, beta)
            else:
                copy(acc, thr_mma.partition_C(gC))       # accumulators -> C
        if tma_store_c:
            store.producer_tail()                        # every store done before the block ends


def setup(mA, mB, mC, tmA, tmB, mma, sA_layout, sB_layout, group, persistent, stream_k=False):
    """(BM, BN, BK, consumers, sA, sB, pipe, sched, k_tiles): what a warp-specialized body (this one,
    kernels.hopper.fp8's) starts from: the tile, the consumer warpgroups, A's and B's stages in shared memory
    as the TMA writes them, the TMA pipeline, the tile scheduler (stream-K or not), and the k-tiles of K."""
    BM, BN, BK, stages = size(sA_layout, 0), size(sB_layout, 0), size(sA_layout, 1), size(sA_layout, 2)
    consumers = size(mma.thr_layout_vmnk) // 128
    sA = make_smem_tensor(sA_layout.element_layout(), mA.dtype)    # (BM, BK, stages), as the TMA writes it
    sB = make_smem_tensor(sB_layout.element_layout(), mB.dtype)
    pipe = PipelineTmaAsync(stages, tmA.spec.bytes + tmB.spec.bytes, consumers)
    sched = TileScheduler((mC.shape[0] + BM - 1) // BM, (mC.shape[1] + BN - 1) // BN, group, persistent,
                          stream_k=stream_k)
    k_tiles = (mA.shape[1] + BK - 1) // BK
    return BM, BN, BK, consumers, sA, sB, pipe, sched, k_tiles


@contextlib.contextmanager
def consumers_after_producer(tid, regs, pipe, sched, k_tiles, tmA, cA, sA, tmB, cB, sB, k_first=0):
    """The pipeline initialised, then warpgroup 0 as the producer (one thread loads every k-tile: produce);
    the with block is the consumers' branch (warpgroups 1..). regs: setmaxnreg's (producer's, consumers')
    registers a thread, or None."""
    pipe.init()
    with if_(tid < 128):                                 # warpgroup 0: the producer
        if regs:
            setmaxnreg(regs[0], grow=False)
        with if_(tid < 1):
            produce(pipe, sched, k_tiles, tmA, cA, sA, tmB, cB, sB, k_first)   # one thread loads every k-tile
    with else_():                                        # warpgroups 1..: the consumers
        if regs:
            setmaxnreg(regs[1], grow=True)
        yield


def produce(pipe, sched, k_tiles, tmA, cA, sA, tmB, cB, sB, k_first=0):
    """The producer's thread: for every k-tile of the block's tiles (each tile's run: sched.runs), in order,
    acquire a stage (wait until it is empty, announce its bytes), then TMA-load A's and B's k-tile into it.
    k_first: the first of the block's k_tiles (split-K), else 0."""
    prefetch_tensor_map(tmA)
    prefetch_tensor_map(tmB)
    state = make_producer_start_state(pipe.stages)
    for tile in sched.runs(k_tiles, k_first):
        m, n = tile.coords
        for kt in range_(tile.k_tiles):
            pipe.producer_acquire(state)                 # the stage is empty; announce its bytes
            k = kt + tile.k_first
            tma_load(tmA, cA[_, _, m, k], sA[_, _, state.index], *pipe.producer_barrier(state))
            tma_load(tmB, cB[_, _, n, k], sB[_, _, state.index], *pipe.producer_barrier(state))
            state.advance()


def epilogue_tma(tmC, mC, acc, store, m, n, BM, BN, consumers, add=False, epi=None, mX=None, mBias=None,
                 alpha=None, beta=None):
    """C leaves a consumer warpgroup in boxes of 64 rows of 128 bytes (64 x 32 float32): its threads write a
    box into its next staging buffer (st.shared), fence them for the async proxy, and one thread issues the
    box's TMA store; the store pipeline hands out a buffer once the store that last read it is done reading.
    add: the boxes are added to C (TMA reduce-add: split-K's partial sums) instead of stored. With an
    Epilogue `epi`, a box's values are first computed from its accumulators in registers (C and the bias
    read inside mC's bounds), in C's type."""
    tid = thread_idx()
    c = (tid - 128) // 128                               # this consumer warpgroup
    rows, cols = size(store.buffers.layout, 0), size(store.buffers.layout, 1)
    barrier = NamedBarrier(128, consumers, "epilogue_tma")   # one a consumer warpgroup
    box_mma = wrap(make_tiled_mma(make_gmma_atom("SM90_64x%dx16_F32F16F16_SS" % cols)))   # C of one box
    thr_box = box_mma.get_slice(tid & 127)
    per_box = cols // 2                                  # accumulator values of a thread in one box
    boxes = RTensor(logical_divide(acc.layout, Layout(per_box)), acc.regs, "float32", 32)   # (values, box)
    cC = local_tile(make_identity_tensor(mC.shape), (rows, cols), (_, _))
    row = m * (BM // rows) + c
    for b in range(BN // cols):
        box = (row, n * (BN // cols) + b)
        values = boxes[_, b]
        if epi is not None:                              # D = act(alpha acc + beta X + bias), before the wait
            inside = elem_less(thr_box.partition_C(cC[(_, _) + box]), mC.shape)
            values = epilogue(epi, values, thr_box.partition_C, (rows, cols), box, mX, mBias, alpha, beta, inside)
        buf = store.producer_acquire()                   # the store from this buffer has read it
        barrier.sync(c)
        copy(values, thr_box.partition_C(buf))
        fence_proxy_async()                              # the writes, before the TMA reads them
        barrier.sync(c)
        store.producer_commit(tmC, buf, cC[(_, _) + box], add=add)


def make(BN=256, stages=4, consumers=2, regs=None, group=1, persistent=False, tma_store=False, dtype="float16",
         majors=("K", "K"), split_k=False, epi=None, stream_k=False):
    """Steps 2-5 for one configuration: a cutejit Kernel launched as kernel.launch(A, Bt, C, mapA, mapB,
    mapC) (the tensor maps from encode_tensor_map and the objects' TensorMaps; mapC only read with
    tma_store). majors: which mode of A (M, K) and of Bt (N, K) is contiguous ("K" or "MN"). split_k (with
    tma_store): launched on a grid of (blocks, splits) into a zeroed C (see the module). stream_k (persistent,
    tma_store): launched on kernel.grid's blocks, C zeroed in the box of the last wave's tiles. epi: an
    Epilogue (kernels.cutejit.epilogue; tma_store, no split_k or stream_k), its run-time arguments launched
    after mapC."""
    if (split_k or stream_k) and not tma_store:
        raise ValueError("warp_specialized.make: split_k and stream_k add partial C through the TMA: they need "
                         "tma_store=True")
    if stream_k and (split_k or not persistent):
        raise ValueError("warp_specialized.make: stream_k=True shares the last wave among persistent blocks: it "
                         "needs persistent=True and split_k=False, got persistent=%r, split_k=%r"
                         % (persistent, split_k))
    if epi is not None and (split_k or stream_k or not tma_store):
        raise ValueError("warp_specialized.make: an epilogue needs tma_store=True, split_k=False and stream_k=False "
                         "(partial sums are not C), got tma_store=%r, split_k=%r, stream_k=%r"
                         % (tma_store, split_k, stream_k))
    out = epi.out if epi else "float32"
    o = hopper.objects(64 * consumers, BN, stages, consumers, dtype, majors=majors, out=out)
    k = gemm_warp_specialized.build(*hopper.operand_matrices(o, out), o.tmA, o.tmB, o.tmC, o.mma, o.sA, o.sB,
                                    o.sC, regs, group, persistent, tma_store, split_k, epi,
                                    *(epi.matrices() if epi else (None,) * 4), stream_k, threads=128 * (1 + consumers),
                                    max_registers=65536 // (128 * (1 + consumers)) // 8 * 8 if regs else None)
    return hopper.finish(k, o, regs=regs, group=group, persistent=persistent, tma_store=tma_store,
                         **(dict(split_k=True) if split_k else {}), **(dict(stream_k=True) if stream_k else {}),
                         **({"epi": epi} if epi else {}))
