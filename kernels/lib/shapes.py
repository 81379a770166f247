"""Which tile a GEMM's kernel runs and into how many runs of K it splits, from the problem's shape and the
GPU's SM count: the rule matmul's Hopper family follows, written once (issue 30).

    tile = choose_tile(16, 4096, 4096, Float16, n_sm=132)     # Tile(BM=64, BN=128, splits=4, stream_k=False)

A kernel is as fast as its grid keeps the SMs busy. One tile per block: a grid of T tiles runs in
ceil(T / n_sm) waves, and the last wave leaves SMs idle; a grid of fewer tiles than SMs leaves them idle
all along. The rule, as CUTLASS's and the CuTe DSL's schedulers choose:
  * rows: 64-row tiles where M <= 64 (a consumer warpgroup's wgmma computes 64 rows: a 128-row tile would
    compute at least as many zero rows as real ones), else 128;
  * columns: 256 or 128, whichever keeps more SMs busy over the waves, weighed by the share of the tiles'
    columns inside N and by what a tile runs at alone (a 128-wide tile loads more bytes per multiply-add;
    COLUMN_SPEED), the wider one on a tie;
  * split-K where the tiles fill at most half the SMs: `splits` blocks per tile, each accumulating a run of
    at least MIN_K_TILES k-tiles, as many as fill the SMs but no more than MAX_SPLITS, and no more than
    keep the float32 partial sums (each split adds its M x N partial C into C, in L2) at half the operands'
    bytes;
  * else stream-K where a full wave comes before a last one that keeps the SMs busy less than STREAM_K_BELOW
    of the time: a persistent grid of stream_k_grid blocks computes the full waves' tiles whole and shares
    the last part-full wave's k-tiles evenly, each block adding its pieces of those tiles into C
    (kernels.cutejit.scheduler). Only those tiles' box of C is zeroed first, and each block adds at most two
    pieces a tile's worth of work, so the partial sums cost far less than a split of every tile. A grid of
    one part-full wave keeps its idle SMs: measured on an H200 (2026-11-27, matmul_sweep.py --quick), sharing
    it ran slower at every such shape (64 x 11008 x 4096 0.77 of cuBLAS against 0.84 unshared, 1024^3 0.39
    against 0.53, 777 x 1333 x 2049 0.75 against 0.85), sharing after full waves faster (3072^3 0.85 against
    0.77).
"""

from typing import NamedTuple

__all__ = ["Tile", "choose_tile", "stream_k_grid", "waves_fill", "COLUMN_SPEED", "MIN_K_TILES", "MAX_SPLITS",
           "BK_BYTES", "STREAM_K_BELOW"]

COLUMN_SPEED = {256: 1.0, 128: 0.9}   # a tile's rate alone, relative to 256 columns (assumed; the sweep tests it)
MIN_K_TILES = 4                       # k-tiles a split accumulates at least: the pipeline's 4 stages, filled once
MAX_SPLITS = 16
BK_BYTES = 128                        # a k-tile's K: one 128-byte swizzle row (64 halves)
STREAM_K_BELOW = 0.9                  # stream-K where the waves keep the SMs busy less than this (assumed)


class Tile(NamedTuple):
    BM: int          # rows of a tile: 64 per consumer warpgroup
    BN: int          # columns of a tile
    splits: int      # runs of K, each a block of its own (1: no split)
    stream_k: bool = False   # the last part-full wave shared by the persistent blocks (stream_k_grid of them)


def waves_fill(tiles: int, n_sm: int) -> float:
    """The fraction of the SMs' time a grid of `tiles` one-wave-at-a-time blocks keeps busy."""
    return tiles / (-(-tiles // n_sm) * n_sm)


def stream_k_grid(tiles: int, k_tiles: int, n_sm: int) -> int:
    """The blocks of a stream-K grid: one an SM; fewer where the tiles are fewer than the SMs and the SMs'
    shares of their k-tiles would be shorter than MIN_K_TILES (at least one a tile: then no tile is split)."""
    if tiles >= n_sm:
        return n_sm
    return max(tiles, min(n_sm, tiles * k_tiles // MIN_K_TILES))


def choose_tile(M: int, N: int, K: int, dtype, n_sm: int) -> Tile:
    """The tile and the split of K for an M x N x K product of `dtype` inputs (cutelite.numeric; float32
    partial sums) on a GPU of `n_sm` SMs.

    Post: BM == 64 if M <= 64 else 128; BN in (256, 128); 1 <= splits <= MAX_SPLITS; splits > 1 only where
          the grid has at most n_sm // 2 tiles, and then BN == 128 (in one wave, twice the tiles fill twice
          the SMs); each of the splits runs ceil(k_tiles / splits) k-tiles, the last at least one; stream_k
          only where splits == 1, tiles > n_sm, waves_fill(tiles, n_sm) < STREAM_K_BELOW and stream_k_grid
          gives more blocks than the last wave's tiles (some tile is shared)."""
    BM = 64 if M <= 64 else 128
    rows = -(-M // BM)

    def score(BN):
        cols = -(-N // BN)
        return waves_fill(rows * cols, n_sm) * N / (cols * BN) * COLUMN_SPEED[BN]
    BN = max((256, 128), key=score)                    # max keeps the first of equals: 256
    tiles = rows * -(-N // BN)
    k_tiles = -(-K * (dtype.bits // 8) // BK_BYTES)
    splits = 1
    if 2 * tiles <= n_sm:
        operand_bytes = (M + N) * K * dtype.bits // 8
        partial_bytes = M * N * 4                      # one split's float32 partial C, added into C
        splits = max(1, min(n_sm // tiles, k_tiles // MIN_K_TILES, MAX_SPLITS, operand_bytes // (2 * partial_bytes)))
        splits = -(-k_tiles // -(-k_tiles // splits))  # even runs: none left empty
    stream_k = (splits == 1 and tiles > n_sm and waves_fill(tiles, n_sm) < STREAM_K_BELOW
                and stream_k_grid(tiles, k_tiles, n_sm) > tiles % n_sm)
    return Tile(BM, BN, splits, stream_k)
