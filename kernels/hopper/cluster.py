"""Chapter 8's persistent kernel in clusters, with TMA multicast: the blocks of a cluster share their tiles.

A cluster of cm x cn blocks computes cm x cn adjacent tiles of C at a time (the tile scheduler hands out
cluster-shaped work). The cn blocks of a cluster row need the same k-tile of A, the cm blocks of a column the
same k-tile of B: instead of each loading it from L2, each loads a 1/cn slice of A's tile (1/cm of B's) and
the TMA multicasts the slice into the shared memory of every block that shares it, completing its bytes on
each one's full barrier. So:
  * each stage's full barrier still expects the bytes of the whole tiles (the slices come from several blocks);
  * a block's stage is written by the blocks of its cluster row and column, so it is free only when all of
    their consumers are done with it: lane j of each consumer warp arrives on the empty barrier of the j-th of
    those blocks (a remote arrival: mapa, mbarrier.arrive.shared::cluster), each empty barrier counting them;
  * the barriers' inits are fenced for the cluster and every block meets on a cluster barrier before any
    remote arrival or multicast; before a block ends its producer waits until every stage is empty once more,
    so that no other block still arrives on its barriers.
Launched with a cluster shape through the driver (kernels.runtime.prepared_launch: cuLaunchKernelEx).
Numba's simulator runs one block at a time, so it runs the 1 x 1 cluster only.
"""

from cutelite import Layout, _, multicast_mask, size

from ..cutejit import (
    PipelineState, PipelineTmaAsync, PipelineTmaStore, Sym, TileScheduler, copy, else_, encode_tensor_map, gemm, if_,
    kernel, local_tile, make_identity_tensor, make_producer_start_state, make_smem_tensor, prefetch_tensor_map, range_,
    setmaxnreg, thread_idx, tma_load_multicast, warpgroup_arrive, warpgroup_commit, warpgroup_wait,
)
from ..expr import src
from ..runtime import max_active_clusters
from . import objects as hopper
from .warp_specialized import epilogue_tma

__all__ = ["gemm_cluster", "produce_multicast", "release_targets", "make", "launcher", "l2_bytes", "CLUSTERS"]

CLUSTERS = ((1, 1), (2, 1), (1, 2))     # the shapes the chapter and the tests run


@kernel
def gemm_cluster(mA, mB, mC, tmA, tmB, tmC, mma, sA_layout, sB_layout, sC_layout, regs, group, cluster,
                 tma_store_c=True):
    tid = thread_idx()
    BM, BN, BK, stages = size(sA_layout, 0), size(sB_layout, 0), size(sA_layout, 1), size(sA_layout, 2)
    consumers = size(mma.thr_layout_vmnk) // 128
    sA = make_smem_tensor(sA_layout.element_layout(), mA.dtype)
    sB = make_smem_tensor(sB_layout.element_layout(), mB.dtype)
    pipe = PipelineTmaAsync(stages, tmA.spec.bytes + tmB.spec.bytes, consumers, cluster)   # whole tiles' bytes
    sched = TileScheduler((mC.shape[0] + BM - 1) // BM, (mC.shape[1] + BN - 1) // BN, group, True, cluster)
    i, j = sched.block_in_cluster()                      # this block's place in its cluster
    k_tiles = (mA.shape[1] + BK - 1) // BK
    cA = local_tile(make_identity_tensor(mA.shape), (BM, BK), (_, _))
    cB = local_tile(make_identity_tensor(mB.shape), (BN, BK), (_, _))
    pipe.init()                                          # cluster-wide: inits fenced, a cluster barrier
    with if_(tid < 128):                                 # warpgroup 0: the producer
        setmaxnreg(regs[0], grow=False)
        with if_(tid < 1):
            produce_multicast(pipe, sched, k_tiles, tmA, cA, sA, tmB, cB, sB, i, j, cluster)
    with else_():                                        # warpgroups 1..: the consumers
        setmaxnreg(regs[1], grow=True)
        if tma_store_c:
            sC = make_smem_tensor(sC_layout.element_layout(), "float32")
            store = PipelineTmaStore(sC, 2, (tid - 128) // 128, leader=(tid & 127) < 1)
            with if_(store.leader):
                prefetch_tensor_map(tmC)
        thr_mma = mma.get_slice(tid - 128)
        tCrA = thr_mma.partition_fragment_A(sA)
        tCrB = thr_mma.partition_fragment_B(sB)
        state, release = PipelineState(stages), PipelineState(stages)
        targets = release_targets(cluster, i, j)
        for tile in sched.tiles():
            m, n = tile.coords
            gC = local_tile(mC, (BM, BN), (m, n))
            acc = thr_mma.partition_fragment_C(gC)
            for kt in range_(k_tiles):
                pipe.consumer_wait(state)                # every slice of the stage has landed
                warpgroup_arrive(acc)
                gemm(mma, tCrA[_, _, _, state.index], tCrB[_, _, _, state.index], acc, accumulate=kt > 0)
                warpgroup_commit()
                warpgroup_wait(1, acc)
                with if_(kt > 0):
                    _release(pipe, release, targets)     # k-tile kt - 1's stage, in every block that wrote it
                    release.advance()
                state.advance()
            warpgroup_wait(0, acc)
            _release(pipe, release, targets)
            release.advance()
            if tma_store_c:
                epilogue_tma(tmC, mC, acc, store, m, n, BM, BN, consumers)   # tiles past C's edge: clipped
            else:
                copy(acc, thr_mma.partition_C(gC))
        if tma_store_c:
            store.producer_tail()


def produce_multicast(pipe, sched, k_tiles, tmA, cA, sA, tmB, cB, sB, i, j, cluster):
    """The producer's thread of block (i, j): for every k-tile, acquire a stage, then load slice j of A's tile
    (A is shared along N) multicast to the blocks of its cluster row, and slice i of B's multicast to its
    column. The masks are cutelite's (C++ create_tma_multicast_mask) for block (0, 0), moved to this block:
    its row's ranks are (0, 0)'s plus i, its column's plus cm j. Ends with the producer's tail."""
    prefetch_tensor_map(tmA)
    prefetch_tensor_map(tmB)
    cm = cluster[0]
    mask_a = Sym("(%d << %s)" % (multicast_mask(Layout(cluster), (0, 0), 1), src(i)))
    mask_b = Sym("(%d << (%d * %s))" % (multicast_mask(Layout(cluster), (0, 0), 0), cm, src(j)))
    state = make_producer_start_state(pipe.stages)
    for tile in sched.tiles():
        m, n = tile.coords
        for kt in range_(k_tiles):
            pipe.producer_acquire(state)                 # empty in every block it writes; announce the bytes
            tma_load_multicast(tmA, cA[_, _, m, kt], sA[_, _, state.index], *pipe.producer_barrier(state), j, mask_a)
            tma_load_multicast(tmB, cB[_, _, n, kt], sB[_, _, state.index], *pipe.producer_barrier(state), i, mask_b)
            state.advance()
    pipe.producer_tail(state)


def release_targets(cluster, i, j):
    """lane -> the rank of the block that consumer lane `lane` releases a stage in: lanes 0 .. cm - 1 the blocks
    (lane, j) of this block's column, lanes cm .. cm + cn - 2 the blocks (i, n) of its row, n != j. Ranks are
    m + cm n (cutelite's Layout(cluster)). None for a cluster of one block."""
    cm, cn = cluster
    if cm * cn == 1:
        return None

    def rank(lane):
        column = "%s + %d * %s" % (src(lane), cm, src(j))
        if cn == 1:
            return Sym("(%s)" % column)
        n = "(%s - %d)" % (src(lane), cm)
        row = "%s + %d * (%s + (%s >= %s))" % (src(i), cm, n, n, src(j))
        return Sym("((%s) if %s < %d else (%s))" % (column, src(lane), cm, row))
    return rank


def _release(pipe, state, targets):
    if targets is None:
        pipe.consumer_release(state)
    else:
        pipe.consumer_release_cluster(state, targets)


def make(cluster=(2, 1), BN=256, stages=4, consumers=2, regs=(40, 232), group=16, dtype="float16",
         majors=("K", "K"), tma_store=True, overrides=None):
    """The cluster kernel for one configuration, launched as kernel.launch(A, Bt, C, mapA, mapB, mapC) (the
    maps from encode_tensor_map and the objects' TensorMaps, A's and B's multicast ones) on a grid of whole
    clusters, at most one block per SM: kernel.cluster is the launch's cluster shape (blocks along x).
    tma_store=False: C leaves by st.global (what Numba's simulator, through HopperModel, can run)."""
    if not isinstance(cluster, tuple) or len(cluster) != 2 or cluster[0] * cluster[1] > 8 or min(cluster) < 1:
        raise ValueError("cluster.make: cluster must be (CTAs along M, CTAs along N) of at most 8 CTAs (a portable "
                         "cluster size), got %r" % (cluster,))
    o = hopper.objects(64 * consumers, BN, stages, consumers, dtype, majors=majors, cluster=cluster)
    k = gemm_cluster.build(*hopper.operand_matrices(o), o.tmA, o.tmB, o.tmC, o.mma, o.sA, o.sB, o.sC, regs, group,
                           cluster, tma_store, threads=128 * (1 + consumers),
                           max_registers=65536 // (128 * (1 + consumers)) // 8 * 8, overrides=overrides)
    k = hopper.finish(k, o, regs=regs, group=group, persistent=True, tma_store=tma_store, cluster=cluster)
    ctas = cluster[0] * cluster[1]
    k.cluster = (ctas, 1, 1)
    BM = 64 * consumers

    def grid(A, B, C, *maps):
        """Whole clusters, no more than the GPU runs at once (runtime.max_active_clusters; at most one block an
        SM): the persistent blocks loop over the tiles, so a cluster that waited for a second wave would
        double the time of the tiles it took."""
        clusters = -(-C.shape[0] // (BM * cluster[0])) * -(-C.shape[1] // (BN * cluster[1]))
        fit = hopper._sm_count() // ctas
        if ctas > 1:
            fit = min(fit, max_active_clusters(k.numba, (A, B, C) + maps, k.threads, k.smem_bytes, k.cluster) or fit)
        return min(clusters, fit) * ctas
    k.grid = grid
    return k


def launcher(k, a, bt, c, stream=0):
    """A zero-argument callable that computes C = A @ Bt.T with cluster kernel `k` on these device arrays (A
    (M, K), Bt (N, K) and C (M, N) row-major, rows of 16-byte multiples): the tensor maps encoded and the
    cluster launch prepared once."""
    o = k.objects
    maps = [encode_tensor_map(x, spec) for x, spec in ((a, o.tmA), (bt, o.tmB), (c, o.tmC))]
    go = k.prepare(a, bt, c, *maps, stream=stream)

    def run():
        go()
    run.maps = maps                  # the tensor maps live as long as the launcher
    return run


def l2_bytes(o):
    """(bytes a block reads from L2 per k-tile, bytes that land in its shared memory per k-tile) of the objects
    `o` (kernels.hopper.objects): its TMA instructions' boxes, each a 1/n slice of a tile shared by n blocks,
    against the whole tiles its full barrier expects."""
    issued = sum(tm.atom.num_tma * tm.atom.tma_bytes for tm in (o.tmA, o.tmB))
    return issued, o.tx_bytes
