"""Which tile a GEMM's kernel runs and into how many runs of K it splits, from the problem's shape and the
GPU's SM count: the rule matmul's Hopper family follows, written once (issue 30).

    tile = choose_tile(777, 1333, 2049, Float16, n_sm=132)     # Tile(BM=64, BN=256, splits=1, stream_k=False)

A kernel is as fast as its grid keeps the SMs busy. One tile per block: a grid of T tiles runs in
ceil(T / n_sm) waves, and the last wave leaves SMs idle; a grid of fewer tiles than SMs leaves them idle
all along, and there a smaller tile, more of them, each with a shorter run, finishes sooner. The rule:
  * columns: 256, unless 128-wide tiles waste clearly less of the last column of tiles past N (the share of
    the tiles' columns inside N, COLUMN_WASTE);
  * rows by how much of the GPU the product fills (its useful work counted in tiles): 128-row tiles where
    that fills at least FULL_WAVE of one wave of them; else 64 rows, and then 128 columns where those tiles
    keep the SMs busier over their waves by NARROW_GAIN (a grid of 64 x 256 tiles that leaves half the SMs
    idle). M <= 64 always takes 64 x 128: such products are bound by the bytes of B, and narrower tiles spread
    B's stream over more SMs;
  * split-K in 64 x 128 tiles where they fill at most a quarter of the SMs (n_sm // SPLIT_BELOW): `splits`
    blocks per tile, as many as fill the SMs but no more than MAX_SPLITS, each accumulating a run of at least
    SPLIT_RUN k-tiles (MIN_K_TILES where the tiles are at most n_sm // FEW_TILES: the SMs would be nearly all
    idle), and no more than keep the float32 partial sums (each split adds its M x N partial C into C, in
    L2) at half the operands' bytes;
  * few tiles with long runs of K (the 64 x 128 grid fills at most half the SMs, at least LONG_K k-tiles),
    where M <= 16 or 64 < M <= 128: the widest tile, 64 x 256 or 128 x 256, split to fill the SMs (runs of at
    least MIN_K_TILES). Such products stream B once; 256 columns halve the A rows each stage carries per byte of
    B (at M <= 16 the TMA fills a 64-row A box that is nearly all zeros), and 128 rows read B once for M <= 128;
  * else stream-K where a full wave comes before a last one that keeps the SMs busy less than STREAM_K_BELOW
    of the time: a persistent grid of stream_k_grid blocks computes the full waves' tiles whole and shares
    the last part-full wave's k-tiles evenly, each block adding its pieces of those tiles into C
    (kernels.cutejit.scheduler). Only those tiles' box of C is zeroed first, and each block adds at most two
    pieces a tile's worth of work. A grid of one part-full wave keeps its idle SMs.
Measured on an H200 (2026-11-27, every tile forced on the same shapes in one process: benchmarks/gemm/
tile_probe.py, its tables in RESULTS_EPILOGUE_CLUSTER_SHAPES.md): 64 x 256 tiles ran 1024^3 at 0.75 of cuBLAS
against 0.61 for 128 x 128, 128 x 11008 x 4096 at 0.81-0.88, 777 x 1333 x 2049 at 0.80; 64 x 128 without a
split ran 16 x 4096 x 4096 at 0.82 against 0.78 split in 4, 128 x 4096 x 4096 at 0.66 against 0.55 for 128 x
128 split in 4, and, with the 8 stages it has now (kernels.lib.wgmma.config_for), 64 x 8192 x 8192 at 0.93
against 0.70 split in 2: the memset and the reduce-adds cost more than the SMs they fill, unless the tiles
leave most SMs idle and their runs are long (1 x 4096 x 14336, 32 tiles of 224 k-tiles: 0.57 unsplit, 0.77
in 4 splits). Few tiles with long runs went fastest as the widest tile split (tile_probe_runs/3): 1 x 8192 x
8192 64 x 256 in 4 splits 0.90 against 0.76 for 64 x 128 unsplit, 1 x 8192 x 28672 0.91 against 0.75, 128 x 4096 x
14336 128 x 256 in 8 splits 0.84 against 0.63; at K = 4096 the same lost (1 x 4096 x 4096 0.61 against 0.76,
128 x 4096 x 4096 0.50 against 0.66), and at M = 64 64 x 128 unsplit stays best (64 x 8192 x 8192 0.93). Sharing
a single part-full wave (stream-K) lost at every such shape; after full waves it won (3072^3: 128 x 256 stream-K
0.85, 128 x 128 stream-K 0.82, none 0.71).
"""

from typing import NamedTuple

__all__ = ["Tile", "choose_tile", "stream_k_grid", "waves_fill", "FULL_WAVE", "COLUMN_WASTE", "NARROW_GAIN",
           "SPLIT_BELOW", "SPLIT_RUN", "FEW_TILES", "LONG_K", "MIN_K_TILES", "MAX_SPLITS", "BK_BYTES", "STREAM_K_BELOW"]

FULL_WAVE = 0.9                       # 128-row tiles where the product fills this much of a wave of them
COLUMN_WASTE = 0.9                    # 256 columns unless their share inside N is below this of 128's
NARROW_GAIN = 1.1                     # 64 x 128 over 64 x 256 where it keeps the SMs this much busier
SPLIT_BELOW = 4                       # split K only where the tiles are at most n_sm // SPLIT_BELOW
SPLIT_RUN = 40                        # k-tiles a split accumulates at least (measured: 64 lost, 172 won)
FEW_TILES = 8                         # runs of MIN_K_TILES where the tiles are at most n_sm // FEW_TILES
LONG_K = 128                          # k-tiles from which few tiles split the widest tile (64 lost, 128 won)
MIN_K_TILES = 4                       # k-tiles a split accumulates at least: the pipeline's 4 stages, filled once
MAX_SPLITS = 16
BK_BYTES = 128                        # a k-tile's K: one 128-byte swizzle row (64 halves)
STREAM_K_BELOW = 0.9                  # stream-K where the waves keep the SMs busy less than this


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

    Post: (BM, BN) in ((128, 256), (128, 128), (64, 256), (64, 128)); BM == 64 where M <= 64, and then BN ==
          128 unless the widest tile is split (wide); 1 <= splits <= MAX_SPLITS; splits > 1 only where the
          grid has at most n_sm // 2 tiles: in 64 x 128 tiles at most n_sm // SPLIT_BELOW of them, with runs
          of at least SPLIT_RUN k-tiles where more than n_sm // FEW_TILES; or in the widest tile (64 x 256 for
          M <= 16, 128 x 256 for 64 < M <= 128) where the 64 x 128 grid fills at most half the SMs and K has
          at least LONG_K k-tiles; each of the splits runs ceil(k_tiles / splits) k-tiles, the last at least one;
          stream_k only where splits == 1, tiles > n_sm, waves_fill(tiles, n_sm) < STREAM_K_BELOW and
          stream_k_grid gives more blocks than the last wave's tiles (some tile is shared)."""
    def inside(BN):                                    # the share of the tiles' columns inside N
        return N / (-(-N // BN) * BN)

    def busy(BM, BN):                                  # how busy the SMs are over the waves, on useful columns
        return waves_fill(-(-M // BM) * -(-N // BN), n_sm) * inside(BN)
    BN = 256 if inside(256) >= COLUMN_WASTE * inside(128) else 128
    if M <= 64:
        BM, BN = 64, 128
    elif M * N >= FULL_WAVE * n_sm * 128 * BN:         # the product's work fills a wave of 128-row tiles
        BM = 128
    else:
        BM = 64
        if BN == 256 and busy(64, 128) >= NARROW_GAIN * busy(64, 256):
            BN = 128
    k_tiles = -(-K * (dtype.bits // 8) // BK_BYTES)
    wide = (inside(256) >= COLUMN_WASTE * inside(128) and (M <= 16 or 64 < M <= 128) and k_tiles >= LONG_K
            and 2 * -(-M // 64) * -(-N // 128) <= n_sm)
    if wide:                                           # few tiles, long runs: the widest tile, split
        BM, BN = (64 if M <= 16 else 128), 256
    tiles = -(-M // BM) * -(-N // BN)
    splits = 1
    if wide or ((BM, BN) == (64, 128) and tiles <= n_sm // SPLIT_BELOW):
        run = MIN_K_TILES if wide or tiles <= n_sm // FEW_TILES else SPLIT_RUN
        operand_bytes = (M + N) * K * dtype.bits // 8
        partial_bytes = M * N * 4                      # one split's float32 partial C, added into C
        splits = max(1, min(n_sm // tiles, k_tiles // run, MAX_SPLITS, operand_bytes // (2 * partial_bytes)))
        splits = -(-k_tiles // -(-k_tiles // splits))  # even runs: none left empty
    stream_k = (splits == 1 and tiles > n_sm and waves_fill(tiles, n_sm) < STREAM_K_BELOW
                and stream_k_grid(tiles, k_tiles, n_sm) > tiles % n_sm)
    return Tile(BM, BN, splits, stream_k)
