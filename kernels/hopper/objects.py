"""The CuTe objects of chapter 8's kernels, for one configuration: what every step is compiled from.

    o = objects(BM=128, BN=256, stages=4, consumers=2)
    o.mma        TiledMMA of GMMA atoms: `consumers` warpgroups along M, each 64 x BN per k-block of 16
    o.sA, o.sB   the stages in shared memory: 128-byte-swizzled K-major GMMA layouts, (BM|BN, 64, stages)
    o.tmA, o.tmB TensorMap arguments, from TMA atoms: one box is one stage of A (BM x 64) or B (BN x 64)
    o.tmC        the TMA-store epilogue's box of C: 64 x 32 float32, 128-byte swizzled
    o.sC         its staging buffers, two per consumer warpgroup
    o.g2s        step 1's TiledCopy: cp.async, 16 bytes a thread and call, into the same swizzled stages

Both operands are K-major (A (M, K) and B^T (N, K) row-major), the layout wgmma reads without transposing.
"""

from dataclasses import dataclass

from cutelite import Layout, dyn, make_tiled_mma, make_tma_atom, size
from cutelite.gmma import Layout_K_SW128_Atom, make_gmma_atom, tile_to_smem

from ..cutejit import Matrix, TensorMap
from ..gemm.tensorcore import g2s_copy

__all__ = ["BK", "EPI_BOX", "Hopper", "objects", "operand_matrices", "tma_atom", "finish"]

BK = 64                 # K per stage: 64 halves = 128 bytes, one 128-byte swizzle row
EPI_BOX = (64, 32)      # the TMA-store epilogue's box of C: 64 rows x 32 float32 (128 bytes a row)
_TYPES = {"float16": ("F32F16F16", "half_t"), "bfloat16": ("F32BF16BF16", "bfloat16_t")}


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


def objects(BM=128, BN=256, stages=4, consumers=2, dtype="float16", pingpong=False):
    """The objects of one configuration. Cooperative consumers split a tile's rows, 64 each (BM = 64 x
    consumers); ping-pong consumers take whole tiles in turn, so the TiledMMA is one warpgroup's and BM is
    64 or 128 (at most 128 fp32 accumulators a thread: BM x BN <= 128 x 128 x 2)."""
    if dtype not in _TYPES:
        raise ValueError("objects: dtype must be one of %s, got %r" % (", ".join(_TYPES), dtype))
    if pingpong and (BM not in (64, 128) or BM * BN > 2 * 128 * 128):
        raise ValueError("objects: a ping-pong tile is 64 or 128 rows with BM x BN <= 32768 (one warpgroup's "
                         "accumulators), got %d x %d" % (BM, BN))
    if not pingpong and BM != 64 * consumers:
        raise ValueError("objects: BM = %d, but %d consumer warpgroups compute 64 rows each" % (BM, consumers))
    types, elem = _TYPES[dtype]
    atom = make_gmma_atom("SM90_64x%dx16_%s_SS" % (BN, types))
    layout = Layout_K_SW128_Atom(elem)
    tma_a = tma_atom("SM90_TMA_LOAD", elem, tile_to_smem(layout, (BM, BK)))
    tma_b = tma_atom("SM90_TMA_LOAD", elem, tile_to_smem(layout, (BN, BK)))
    tma_c = tma_atom("SM90_TMA_STORE", "float", tile_to_smem(Layout_K_SW128_Atom("float"), EPI_BOX))
    return Hopper(
        mma=make_tiled_mma(atom, Layout((1 if pingpong else consumers, 1, 1))),
        sA=tile_to_smem(layout, (BM, BK, stages)), sB=tile_to_smem(layout, (BN, BK, stages)),
        tmA=TensorMap(tma_a), tmB=TensorMap(tma_b), tmC=TensorMap(tma_c),
        sC=tile_to_smem(Layout_K_SW128_Atom("float"), EPI_BOX + (2 * consumers,)),
        g2s=g2s_copy("SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", BN, BK, 128 * consumers, True, elem),
        tile=(BM, BN, BK), stages=stages, consumers=consumers,
        tx_bytes=tma_a.transaction_bytes + tma_b.transaction_bytes, dtype=dtype)


def tma_atom(op, elem, tile):
    """The TMA atom of a row-major matrix (run-time extents and row stride) copying one `tile` (its
    shared-memory layout) per instruction."""
    rows, cols = size(tile, 0), size(tile, 1)     # a placeholder matrix of one tile: the launch gives the real one
    return make_tma_atom(op, Layout((dyn(rows), dyn(cols)), (dyn(cols), 1)), tile, (rows, cols),
                         value_type=elem)


def operand_matrices(dtype):
    """A (M, K) and B^T (N, K) row-major, C (M, N) float32 row-major."""
    return Matrix(dtype, unit=1), Matrix(dtype, unit=1), Matrix("float32", unit=1)


def finish(kernel, o, **config):
    """A built kernel as a step of the ladder: .objects, .tile, .config, and its grid: a block per C tile,
    or (persistent) at most one per SM."""
    BM, BN, BK = o.tile
    kernel.objects, kernel.tile = o, o.tile
    kernel.config = dict(config, BM=BM, BN=BN, BK=BK, stages=o.stages, consumers=o.consumers, dtype=o.dtype,
                         threads=kernel.threads, smem=kernel.smem_bytes)

    def grid(A, B, C, *maps):
        tiles = -(-C.shape[0] // BM) * -(-C.shape[1] // BN)
        return min(tiles, _sm_count()) if config.get("persistent") else tiles
    kernel.grid = grid
    return kernel


def _sm_count():
    from numba import cuda
    return cuda.get_current_device().MULTIPROCESSOR_COUNT
