"""The CuTe objects of chapter 8's kernels, for one configuration: what every step is compiled from.

    o = objects(BM=128, BN=256, stages=4, consumers=2)
    o.mma        TiledMMA of GMMA atoms: `consumers` warpgroups along M, each 64 x BN per k-block of 16
    o.sA, o.sB   the stages in shared memory: 128-byte-swizzled K-major GMMA layouts, (BM|BN, 64, stages)
    o.tmA, o.tmB TensorMap arguments, from TMA atoms: one box is one stage of A (BM x 64) or B (BN x 64)
    o.tmC        the TMA-store epilogue's box of C: 64 x 32 float32, 128-byte swizzled
    o.sC         its staging buffers, two per consumer warpgroup
    o.g2s        step 1's TiledCopy: cp.async, 16 bytes a thread and call, into the same swizzled stages

A (M, K) and B^T (N, K) are K-major (row-major) by default; either may be MN-major instead (`majors`): wgmma
reads an MN-major operand transposed, through the MN-major GMMA layout and its descriptor.
"""

from dataclasses import dataclass

from cutelite import Layout, Major, dyn, make_tiled_mma, make_tma_atom, size
from cutelite.gmma import Layout_K_SW128_Atom, Layout_MN_SW128_Atom, make_gmma_atom, tile_to_smem
from cutelite.numeric import BFloat16, Float8E4M3FN, Float8E5M2, Float16, Float32, numeric
from cutelite.tensorcore import g2s_copy

from ..cutejit import Matrix, TensorMap

__all__ = ["DTYPES", "epi_box", "Hopper", "objects", "operand_matrices", "stage_layouts", "tma_atom",
           "finish", "shared_bytes", "most_stages", "store_stages", "MAX_STAGES"]

DTYPES = (Float16, BFloat16)                # the steps' A and B; they accumulate in float32
FP8 = (Float8E4M3FN, Float8E5M2)            # kernels.hopper.fp8's A and B (K-major only)


def epi_box(out="float32"):
    """The TMA-store epilogue's box of C in `out` elements: 64 rows of 128 bytes (32 float32, 64 halves)."""
    return (64, 1024 // numeric(out).bits)


@dataclass(frozen=True)
class Hopper:
    mma: object
    sA: object
    sB: object
    tmA: object
    tmB: object
    tmC: object
    sC: object
    g2s: object
    tile: tuple
    stages: int
    consumers: int
    tx_bytes: int
    dtype: str
    majors: tuple
    cluster: tuple = (1, 1)


def objects(BM=128, BN=256, stages=4, consumers=2, dtype="float16", pingpong=False, majors=("K", "K"),
            cluster=(1, 1), out="float32"):
    """The objects of one configuration. Cooperative consumers split a tile's rows, 64 each (BM = 64 x
    consumers); ping-pong consumers take whole tiles in turn, so the TiledMMA is one warpgroup's and BM is
    64 or 128 (at most 128 fp32 accumulators a thread: BM x BN <= 128 x 128 x 2). `majors`: which mode of A
    (M, K) and of B^T (N, K) is contiguous, "K" or "MN" (wgmma reads either through its descriptors).
    `cluster`: (CTAs along M, along N) sharing tiles: A's tile is multicast to the cluster's row of cn CTAs,
    B's to its column of cm (kernels.hopper.cluster). `out`: C's element type, which the TMA-store epilogue's
    box and buffers hold."""
    if dtype not in [t.name for t in DTYPES + FP8]:
        raise ValueError("objects: dtype must be one of %s, got %r" % (", ".join(t.name for t in DTYPES + FP8), dtype))
    if pingpong and (BM not in (64, 128) or BM * BN > 2 * 128 * 128):
        raise ValueError("objects: a ping-pong tile is 64 or 128 rows with BM x BN <= 32768 (one warpgroup's "
                         "accumulators), got %d x %d" % (BM, BN))
    if not pingpong and BM != 64 * consumers:
        raise ValueError("objects: BM = %d, but %d consumer warpgroups compute 64 rows each" % (BM, consumers))
    majors = Major.pair(majors, "objects")
    t = numeric(dtype)
    elem, types = t.cpp, Float32.letters + 2 * t.letters
    atom = make_gmma_atom("SM90::GMMA::MMA_64x%dx%d_%s_SS<GMMA::Major::%s, GMMA::Major::%s>"
                          % ((BN, 256 // t.bits, types) + majors))     # k: 32 bytes of A (16 halves, 32 FP8)
    BK = _stage_k(elem)
    (sA, boxA), (sB, boxB) = (stage_layouts(elem, rows, stages, major) for rows, major in zip((BM, BN), majors))
    tma_a, tma_b = (tma_atom("SM90_TMA_LOAD" if n == 1 else "SM90_TMA_LOAD_MULTICAST", elem, box, major, n)
                    for box, major, n in zip((boxA, boxB), majors, cluster[::-1]))
    c = numeric(out).cpp
    tma_c = tma_atom("SM90_TMA_STORE", c, tile_to_smem(Layout_K_SW128_Atom(c), epi_box(out)), "K")
    return Hopper(
        mma=make_tiled_mma(atom, Layout((1 if pingpong else consumers, 1, 1))),
        sA=sA, sB=sB, tmA=TensorMap(tma_a), tmB=TensorMap(tma_b), tmC=TensorMap(tma_c),
        sC=tile_to_smem(Layout_K_SW128_Atom(c), epi_box(out) + (2 * consumers,)),
        g2s=g2s_copy("SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", BN, BK, 128 * consumers, Major.K, elem),
        tile=(BM, BN, BK), stages=stages, consumers=consumers,
        tx_bytes=tma_a.transaction_bytes + tma_b.transaction_bytes, dtype=dtype, majors=majors, cluster=cluster)


def shared_bytes(BM, BN, stages):
    """The dynamic shared memory of a kernel on these objects that stores C from registers: `stages` stages of A
    and B (BM + BN rows of BK elements: 128 bytes each, one swizzle row, whatever the type; each a whole number
    of 1024-byte swizzle atoms, so cutejit packs them without padding), then the pipeline's full and empty
    mbarriers, 8 bytes each a stage."""
    return stages * ((BM + BN) * 128 + 2 * 8)


def most_stages(BM, BN, limit):
    """The most stages (shared_bytes) that fit in `limit` bytes: a deeper pipeline hides more of the loads'
    latency, and nothing else takes the shared memory. A ValueError naming the tile if not even two fit."""
    stages = limit // shared_bytes(BM, BN, 1)
    if stages < 2:
        raise ValueError("most_stages: two stages of a %d x %d tile take %s bytes of shared memory, more than the "
                         "%s a block may have" % (BM, BN, format(shared_bytes(BM, BN, 2), ","), format(limit, ",")))
    return stages


def store_stages(BM, BN, consumers, limit):
    """The most stages (most_stages) that fit in `limit` bytes beside the TMA-store epilogue's staging buffers
    (two 64 x 128-byte boxes a consumer warpgroup, epi_box) and a kilobyte for its barriers and alignment, at
    most MAX_STAGES: a 128 x 256 tile keeps 4 in 227 KB, a 64 x 128 one 8. Where a tile is small, the bytes in
    flight per SM (its stages) bound how fast an SM streams its operands: memory-bound products (M <= 64)
    want them all."""
    return min(MAX_STAGES, most_stages(BM, BN, limit - 2 * consumers * 64 * 128 - 1024))


MAX_STAGES = 8


def _stage_k(elem):
    """BK, the K of a stage: one 128-byte swizzle row of `elem` elements (64 halves, 128 FP8)."""
    return 1024 // numeric(elem).bits


def stage_layouts(elem, rows, stages, major):
    """(the stages, one stage) of a (rows, BK) operand tile, 128-byte swizzled. K-major: rows of 64 halves.
    MN-major: 64 x 8 atoms along MN, walked K first (order (1, 0, 2)), so that each 64 x 64 TMA box (the
    widest a 128-byte swizzle allows along MN) is 8 KB of contiguous shared memory."""
    BK = _stage_k(elem)
    if major == Major.K:
        layout = Layout_K_SW128_Atom(elem)
        return tile_to_smem(layout, (rows, BK, stages)), tile_to_smem(layout, (rows, BK))
    layout = Layout_MN_SW128_Atom(elem)
    return tile_to_smem(layout, (rows, BK, stages), (1, 0, 2)), tile_to_smem(layout, (rows, BK), (1, 0))


def tma_atom(op, elem, tile, major, multicast=1):
    """The TMA atom of a matrix (run-time extents and stride) whose `major` mode is contiguous ("K": mode 1,
    row-major; "MN": mode 0), copying one `tile` (its shared-memory layout), shared by `multicast` CTAs."""
    rows, cols = size(tile, 0), size(tile, 1)     # a placeholder matrix of one tile: the launch gives the real one
    stride = (dyn(cols), 1) if major == Major.K else (1, dyn(rows))
    return make_tma_atom(op, Layout((dyn(rows), dyn(cols)), stride), tile, (rows, cols), multicast, value_type=elem)


def operand_matrices(o, out="float32"):
    """A (M, K) and B^T (N, K), each with o.majors' mode contiguous, C (M, N) row-major of `out` elements."""
    a, b = o.majors
    return Matrix(o.dtype, a), Matrix(o.dtype, b), Matrix(out, Major.K)


def finish(kernel, o, **config):
    """A built kernel as a step of the ladder: .objects, .tile, .config, and its grid: a block per C tile,
    or (persistent) at most one per SM (stream-K: kernels.lib.shapes.stream_k_grid)."""
    BM, BN, BK = o.tile
    kernel.objects, kernel.tile = o, o.tile
    kernel.config = dict(config, BM=BM, BN=BN, BK=BK, stages=o.stages, consumers=o.consumers, dtype=o.dtype,
                         majors=o.majors, threads=kernel.threads, smem=kernel.smem_bytes)

    def grid(A, B, C, *maps):
        tiles = -(-C.shape[0] // BM) * -(-C.shape[1] // BN)
        if config.get("stream_k"):
            from ..lib.shapes import stream_k_grid
            return stream_k_grid(tiles, -(-A.shape[1] // BK), _sm_count())
        return min(tiles, _sm_count()) if config.get("persistent") else tiles
    kernel.grid = grid
    return kernel


def _sm_count():
    from numba import cuda
    return cuda.get_current_device().MULTIPROCESSOR_COUNT
