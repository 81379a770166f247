"""matmul's choice of tile and split of K (kernels.lib.shapes) and the Hopper kernels it picks, in Numba's
simulator: the rule's post-conditions and worked cases (derived by hand from the rule's text, on an H100's
132 SMs), and each new kernel configuration replayed: the kernel runs with stand-ins that record its TMA
loads and stores (or split-K's reduce-adds), NumPy computes each stored box from the k-tiles the kernel
loaded for it and stores it into C (or adds it to C, zeroed first); the result must be A @ B."""

import threading
from collections import defaultdict

import numpy as np
import pytest

from cutelite.numeric import BFloat16, Float16
from kernels.lib.shapes import (FEW_TILES, FULL_WAVE, LONG_K, MAX_SPLITS, MIN_K_TILES, SPLIT_BELOW, SPLIT_RUN,
                                STREAM_K_BELOW, Tile, choose_tile, stream_k_grid)

pytestmark = pytest.mark.numba("simulator")
H100 = 132


@pytest.mark.parametrize("shape,want", [
    ((4096, 4096, 4096), Tile(128, 256, 1)),    # 512 tiles of 128 x 256: 3.9 waves, 97 % busy: step 5's tile
    ((8192, 8192, 8192), Tile(128, 256, 1)),
    ((2048, 2048, 2048), Tile(128, 256, 1)),    # 128 tiles' work: at least 0.9 of a wave of 132
    ((3072, 3072, 3072), Tile(128, 256, 1, True)),   # 288 tiles: 3 waves, 73 % busy: stream-K over the last
                                                     # 288 - 2 x 132 = 24
    ((128, 11008, 4096), Tile(64, 256, 1)),     # 43 tiles of 128 x 256 fill a third of the SMs: 64 rows; 86 of
                                                # 64 x 256 keep them as busy as 172 of 64 x 128 (2 waves)
    ((777, 1333, 2049), Tile(64, 256, 1)),      # 78 tiles of 64 x 256 (87 % of columns in N) against 143 of
                                                # 64 x 128 over 2 waves (95 %): about as busy
    ((1024, 1024, 1024), Tile(64, 128, 1)),     # 32 of 128 x 256; 64 of 64 x 256 leave half the SMs idle, 128
                                                # of 64 x 128 do not
    ((128, 4096, 4096), Tile(64, 128, 1)),      # 64 tiles of 64 x 128: more than 132 // 4, no split
    ((128, 8192, 8192), Tile(64, 128, 1)),      # 128 tiles of 64 x 128 against 64 of 64 x 256
    ((16, 4096, 4096), Tile(64, 128, 1)),       # M <= 64: 64 x 128, 32 tiles: no split
    ((1, 4096, 11008), Tile(64, 256, 8)),       # 32 tiles of 64 x 128, 172 k-tiles: 16 of 64 x 256, 8 splits
    ((64, 4096, 11008), Tile(64, 128, 4)),      # M = 64: 32 tiles, 4 splits of 43 (at least SPLIT_RUN)
    ((64, 4096, 4096), Tile(64, 128, 1)),       # 64 k-tiles: a split would run fewer than SPLIT_RUN
    ((1, 1024, 8192), Tile(64, 256, 16)),       # 8 tiles of 64 x 128, 128 k-tiles: 4 of 64 x 256 in 16 splits
    ((1, 8192, 8192), Tile(64, 256, 4)),        # 64 tiles of 64 x 128 fill half the SMs: 32 of 64 x 256, 4 splits
    ((128, 4096, 14336), Tile(128, 256, 8)),    # 64 tiles of 64 x 128, 224 k-tiles: 16 of 128 x 256, 8 splits
    ((64, 8192, 8192), Tile(64, 128, 1)),       # 16 < M <= 64: not split wide
    ((100, 777, 12289), Tile(64, 128, 9)),      # 777 columns: 1024 of 256-wide tiles, 896 of 128: 128 wide;
                                                # 14 tiles, 193 k-tiles: 132 // 14 = 9 splits of 22 (the last 17)
    ((64, 14336, 4096), Tile(64, 128, 1)),      # 112 tiles: 85 % of one wave, not shared
    ((5000, 5000, 5000), Tile(128, 256, 1, True)),   # 800 tiles of 128 x 256: 6.1 waves, 87 % busy: stream-K
                                                     # over the last 800 - 6 x 132 = 8
    ((6144, 6144, 6144), Tile(128, 256, 1)),         # 1152 tiles: 8.7 waves, 97 % busy: no stream-K
    ((100000, 128, 4096), Tile(128, 128, 1)),   # N of one 128-wide tile: 256 wide would waste half
    ((256, 256, 256), Tile(64, 128, 1)),        # 8 tiles but 4 k-tiles: too few to split
])
def test_worked_cases(shape, want):
    assert choose_tile(*shape, Float16, H100) == want


@pytest.mark.parametrize("n_sm", [132, 114, 78, 40])
def test_rule_post_conditions(n_sm):
    """Over many shapes: 64 x 128 tiles where M <= 64 (or 64 x 256, split wide); 128-row tiles only where the
    product's work fills FULL_WAVE of a wave of them (or split wide), 64-row ones only where it does not; splits
    only in 64 x 128 tiles at most n_sm // SPLIT_BELOW, each at least SPLIT_RUN k-tiles (MIN_K_TILES where at
    most n_sm // FEW_TILES), or in the widest tile where few 64 x 128 tiles have at least LONG_K k-tiles; never
    more blocks than SMs, none empty; the partial sums added into C at most half the operands' bytes; stream-K
    exactly after full waves that leave the last part full."""
    sizes = [1, 16, 64, 65, 128, 200, 777, 1024, 1333, 4096, 11008]
    for M in sizes:
        for N in sizes:
            for K in (64, 256, 2049, 4096, 16384):
                t = choose_tile(M, N, K, BFloat16, n_sm)
                assert (t.BM, t.BN) in ((128, 256), (128, 128), (64, 256), (64, 128)), (M, N, K, t)
                k_tiles = -(-K // 64)
                wide = (M <= 16 or 64 < M <= 128) and k_tiles >= LONG_K and 2 * -(-M // 64) * -(-N // 128) <= n_sm
                if M <= 64:
                    assert (t.BM, t.BN) == (64, 128) or (wide and (t.BM, t.BN) == (64, 256)), (M, N, K, t)
                if t.BM == 128:                                 # its work fills a wave of them, or split wide
                    assert M > 64 and (M * N >= FULL_WAVE * n_sm * 128 * t.BN or wide and t.BN == 256), (M, N, K, t)
                else:                                                   # it does not, even in 128 x 128
                    assert M <= 64 or M * N < FULL_WAVE * n_sm * 128 * 256, (M, N, K, t)
                tiles = -(-M // t.BM) * -(-N // t.BN)
                per = -(-k_tiles // t.splits)
                assert 1 <= t.splits <= MAX_SPLITS and (t.splits - 1) * per < k_tiles, (M, N, K, t)
                if t.splits > 1 and t.BN == 256:                # the widest tile, split
                    assert wide and (t.BM == 64) == (M <= 16), (M, N, K, t)
                    run = MIN_K_TILES
                elif t.splits > 1:
                    assert (t.BM, t.BN) == (64, 128) and tiles <= n_sm // SPLIT_BELOW, (M, N, K, t)
                    run = MIN_K_TILES if tiles <= n_sm // FEW_TILES else SPLIT_RUN
                if t.splits > 1:
                    assert tiles * t.splits <= n_sm and per >= run, (M, N, K, t)
                    partials = t.splits * M * N * 4
                    assert partials <= (M + N) * K * 2 / 2, (M, N, K, t)
                waves = -(-tiles // n_sm)
                part_full = tiles / (waves * n_sm) < STREAM_K_BELOW      # the SMs busy under 90 % of the waves
                grid = stream_k_grid(tiles, k_tiles, n_sm)
                assert t.stream_k == (t.splits == 1 and tiles > n_sm and part_full and grid > tiles % n_sm), \
                    (M, N, K, t)


@pytest.mark.parametrize("tiles,k_tiles,want", [
    (576, 48, 132),      # at least a wave: a block an SM
    (132, 4, 132),
    (64, 16, 132),       # 1024 k-tiles: 132 shares of 7-8
    (20, 16, 80),        # 320 k-tiles in shares of MIN_K_TILES = 4
    (4, 4, 4),           # 16 k-tiles: a block a tile, nothing shared
])
def test_stream_k_grid(tiles, k_tiles, want):
    assert stream_k_grid(tiles, k_tiles, H100) == want


def test_wider_tiles_where_they_waste_no_more():
    """256 columns where the last column of tiles wastes about as little as 128's; N of one 128-wide tile never
    takes a 256-wide one."""
    for M, N in ((4096, 4096), (8192, 8192), (4096, 14336), (2048, 2048), (128, 11008)):
        assert choose_tile(M, N, 4096, Float16, H100).BN == 256
    for M in (16, 1000, 5000, 100000):
        assert choose_tile(M, 128, 4096, Float16, H100).BN == 128


# ---- each configuration replayed -----------------------------------------------------------------------------
class _Replay:
    """Stand-ins for wgmma and the TMA: wgmma does nothing, a load, store or reduce-add records (block, map,
    c0, c1) (stores and adds with whether they add)."""

    def __init__(self):
        self.loads, self.stores, self.lock = defaultdict(list), defaultdict(list), threading.Lock()

    def _block(self):
        b = threading.current_thread().blockIdx
        return b.x, b.y

    def overrides(self):
        def load(dst, off, tmap, bars, i, c0, c1):
            with self.lock:
                self.loads[self._block()].append((int(tmap[0]), int(c0), int(c1)))

        def store(add):
            def record(tmap, src, idx, c0, c1):
                with self.lock:
                    self.stores[self._block()].append((int(c0), int(c1), add))
            return record
        return {"tma_load_2d": load, "tma_store_2d": store(False), "tma_reduce_add_2d": store(True),
                "wgmma": lambda acc, *a: acc,
                "tma_prefetch_desc": lambda *a: None, "mbarrier_try_wait": lambda *a: 1}


def _replayed(BM, BN, splits, M, N, K, blocks):
    """C from a replay of the kernel of a BM x BN tile (split_k where splits > 1) on a grid of (blocks,
    splits): each stored 64 x 32 box computed in NumPy from the k-tiles its block loaded for its tile, stored
    into C, or with split-K added into C zeroed first (as HopperGemm.prepare's memset does)."""
    from kernels.hopper import objects as hopper_objects, warp_specialized
    from kernels.lib.wgmma import config_for
    rng = np.random.default_rng(BM + BN + splits)
    A = rng.integers(-3, 4, (M, K)).astype(np.float64)
    Bt = rng.integers(-3, 4, (N, K)).astype(np.float64)
    o = hopper_objects.objects(BM, BN, 4, BM // 64)
    rec = _Replay()
    k = warp_specialized.gemm_warp_specialized.build(
        *hopper_objects.operand_matrices(o), o.tmA, o.tmB, o.tmC, o.mma, o.sA, o.sB, o.sC,
        config_for(Tile(BM, BN, splits))["regs"], 16, True, True, splits > 1, None, None, None, None, None, False,
        threads=128 * (1 + BM // 64),
        overrides=rec.overrides())
    C = np.zeros((M, N)) if splits > 1 else np.full((M, N), np.nan)
    maps = [np.full(16, i, np.uint64) for i in (1, 2, 3)]
    k.launch(np.zeros((M, K), np.uint16), np.zeros((N, K), np.uint16), np.zeros((M, N), np.float32), *maps,
             grid=(blocks, splits))
    stored = set()
    for (bx, by), loads in rec.loads.items():
        assert [m for m, _, _ in loads] == [1, 2] * (len(loads) // 2)     # A's k-tile, then B's, each use
        ks = defaultdict(list)                                           # (tile row, tile col) -> k's loaded
        for (_, ka, ra), (_, kb, cb) in zip(loads[::2], loads[1::2]):
            assert ka == kb and ra % BM == 0 and cb % BN == 0
            ks[ra // BM, cb // BN].append(ka)
        for col, row, add in rec.stores[(bx, by)]:
            assert add == (splits > 1) and 0 <= row < -(-M // BM) * BM and (row, col, by) not in stored
            stored.add((row, col, by))
            kk = np.concatenate([np.arange(k0, min(k0 + 64, K)) for k0 in ks[row // BM, col // BN]])
            box = (A[row:row + 64][:, kk] @ Bt[col:col + 32][:, kk].T)[:max(0, M - row)]   # clipped at C's edge
            if add:
                C[row:row + box.shape[0], col:col + box.shape[1]] += box
            else:
                C[row:row + box.shape[0], col:col + box.shape[1]] = box
    return C, A @ Bt.T


@pytest.mark.parametrize("BM,BN,splits,shape,blocks", [
    (64, 128, 3, (100, 200, 640), 2),     # 4 tiles, 10 k-tiles in runs of 4, 4, 2; 2 tiles a block
    (128, 128, 2, (130, 130, 320), 3),    # 4 tiles on 3 persistent blocks, 5 k-tiles in runs of 3, 2
    (64, 256, 1, (64, 300, 192), 2),      # 64 x 256, no split
    (128, 128, 1, (200, 150, 128), 4),    # 128 x 128, no split
])
def test_new_configurations_compute_a_times_b(BM, BN, splits, shape, blocks):
    C, want = _replayed(BM, BN, splits, *shape, blocks)
    np.testing.assert_array_equal(C, want)     # small integers: every sum exact in float32
