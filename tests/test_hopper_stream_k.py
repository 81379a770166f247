"""Stream-K in chapter 8's persistent kernel (TileScheduler.runs, kernels.hopper.warp_specialized), in Numba's
simulator: the kernel runs with stand-ins that record its TMA loads, stores and reduce-adds, and its mbarrier
waits and arrivals. From the record:

- C: NumPy computes each stored or added 64 x 32 box from the k-tiles its block loaded for its tile and
  stores it into C (poisoned with NaN) or adds it there; the host zeroes only the box of the last wave's
  tiles first (last_tiles_box, as HopperGemm.prepare does). The result must be A @ B;
- the work: every (tile, k-tile) is loaded by exactly one block; the full waves' tiles are stored whole by
  the blocks tiles() gives them, the others added; the blocks' shares of the last tiles' k-tiles differ by
  at most one;
- the protocol: each block's producer and consumer warps, replayed on cutelite's mbarrier model, run to
  their end, and each waits on the (barrier, parity) sequence of cutelite's PipelineStates.

The cases are the k-range boundaries: shares that start and end inside a tile, a tile split across three
blocks, fewer tiles than blocks, a block with no share, full waves before the shared one, C's ragged edges.
"""

import threading
from collections import defaultdict

import numpy as np
import pytest

import kernels

kernels.setup(verbose=False, simulator=True)

from cutelite import pipeline as P  # noqa: E402
from mbarrier_replay import replay  # noqa: E402
from kernels.cutejit.scheduler import last_tiles_box  # noqa: E402
from kernels.hopper import objects as hopper_objects, warp_specialized  # noqa: E402

pytestmark = pytest.mark.numba("simulator")
GROUP, STAGES = 16, 4


class _Recorder:
    """Stand-ins: wgmma does nothing, waits pass at once; loads, stores, adds, waits and arrivals are recorded
    by block, thread."""

    def __init__(self):
        self.events, self.lock = defaultdict(list), threading.Lock()

    def log(self, *e):
        me = threading.current_thread()
        with self.lock:
            self.events[me.blockIdx.x].append((me.threadIdx.x,) + e)

    def overrides(self):
        noop = lambda *a: None  # noqa: E731

        def try_wait(bars, i, parity):
            self.log("wait", int(i), int(parity))
            return 1
        return {"mbarrier_try_wait": try_wait, "mbarrier_init": noop, "tma_prefetch_desc": noop,
                "mbarrier_arrive_expect_tx": lambda bars, i, n: self.log("expect_tx", int(i), int(n)),
                "mbarrier_arrive": lambda bars, i: self.log("arrive", int(i)),
                "tma_load_2d": lambda d, off, tm, bars, i, c0, c1: self.log("tma", int(i), int(tm[0]), int(c0), int(c1)),
                "tma_store_2d": lambda tm, src, idx, c0, c1: self.log("store", False, int(c0), int(c1)),
                "tma_reduce_add_2d": lambda tm, src, idx, c0, c1: self.log("store", True, int(c0), int(c1)),
                "wgmma": lambda acc, *a: acc}


def _run(BM, BN, M, N, K, blocks):
    """(A, Bt, the recorded events by block, objects) of the stream-K kernel (BM x BN tiles) on `blocks` blocks."""
    rng = np.random.default_rng(M + N + K)
    A = rng.integers(-3, 4, (M, K)).astype(np.float64)
    Bt = rng.integers(-3, 4, (N, K)).astype(np.float64)
    o = hopper_objects.objects(BM, BN, STAGES, BM // 64)
    rec = _Recorder()
    k = warp_specialized.gemm_warp_specialized.build(
        *hopper_objects.operand_matrices(o), o.tmA, o.tmB, o.tmC, o.mma, o.sA, o.sB, o.sC, None, GROUP, True, True,
        False, None, None, None, None, None, True, threads=128 * (1 + BM // 64), overrides=rec.overrides())
    maps = [np.full(16, i, np.uint64) for i in (1, 2, 3)]
    k.launch(np.zeros((M, K), np.uint16), np.zeros((N, K), np.uint16), np.zeros((M, N), np.float32), *maps,
             grid=blocks)
    return A, Bt, rec.events, o


CASES = {   # (BM, BN, M, N, K, blocks)
    "2 tiles on 5 blocks: shares of 4 of 10 k-tiles, tile 0 over 3 blocks": (64, 128, 64, 256, 640, 5),
    "6 ragged tiles on 4 blocks: a full wave, then 2 tiles of 7 k-tiles in shares of 3 and 4": (128, 128, 130, 300, 448, 4),
    "5 tiles on 4 blocks: the last tile's 3 k-tiles over 3 blocks, block 0 none": (64, 128, 64, 640, 192, 4),
}


@pytest.fixture(scope="module", params=list(CASES))
def run(request):
    BM, BN, M, N, K, blocks = CASES[request.param]
    return (BM, BN, M, N, K, blocks) + _run(BM, BN, M, N, K, blocks)


def test_stream_k_computes_a_times_b(run):
    BM, BN, M, N, K, blocks, A, Bt, events, o = run
    tiles_m, tiles_n, k_tiles = -(-M // BM), -(-N // BN), -(-K // 64)
    tiles = tiles_m * tiles_n
    whole = tiles - tiles % blocks
    C = np.full((M, N), np.nan)
    m0, n0 = last_tiles_box(tiles_m, tiles_n, GROUP, whole)
    C[m0 * BM:, n0 * BN:] = 0                            # HopperGemm.prepare's memset
    done = defaultdict(list)                             # (tile row, tile col) -> (block, k-tile) loaded
    shares, added = [], set()
    for b in range(blocks):
        loads = [e[2:] for e in events[b] if e[1] == "tma"]
        assert [m for _, m, _, _ in loads] == [1, 2] * (len(loads) // 2)    # A's k-tile, then B's, each use
        ks = defaultdict(list)
        for (_, _, ka, ra), (_, _, kb, cb) in zip(loads[::2], loads[1::2]):
            assert ka == kb and ra % BM == 0 and cb % BN == 0
            ks[ra // BM, cb // BN].append(ka // 64)
            done[ra // BM, cb // BN].append((b, ka // 64))
        shares.append(len(loads) // 2 - (whole // blocks) * k_tiles)
        stores = [e[2:] for e in events[b] if e[1] == "store"]
        for add, col, row in stores:
            tile = (row // BM, col // BN)
            assert add or sorted(ks[tile]) == list(range(k_tiles)), (b, tile)    # a tile stored is whole
            if add:
                added.add(tile)
            kk = np.concatenate([np.arange(64 * k, min(64 * k + 64, K)) for k in ks[tile]])
            box = (A[row:row + 64][:, kk] @ Bt[col:col + 32][:, kk].T)[:max(0, M - row), :max(0, N - col)]
            if add:
                C[row:row + box.shape[0], col:col + box.shape[1]] += box
            else:
                C[row:row + box.shape[0], col:col + box.shape[1]] = box
        assert len({(r // BM, c // BN) for add, c, r in stores if not add}) == whole // blocks, b
    for tile, got in done.items():                     # each k-tile of each tile, by one block
        assert sorted(k for _, k in got) == list(range(k_tiles)), tile
    assert len(done) == tiles and len(added) == tiles - whole and max(shares) - min(shares) <= 1 and sum(shares) == (tiles - whole) * k_tiles
    np.testing.assert_array_equal(C, A @ Bt.T)         # small integers: every sum exact


def test_stream_k_protocol_follows_the_pipeline_model(run):
    BM, BN, M, N, K, blocks, A, Bt, events, o = run
    consumers = BM // 64
    for b in range(blocks):
        ev = events[b]
        uses = sum(1 for e in ev if e[0] == 0 and e[1] == "expect_tx")
        roles = {tid: [(e[1], e[2], e[3] if e[1] in ("wait", "expect_tx") else None) for e in ev
                       if e[0] == tid and e[1] in ("wait", "expect_tx", "tma", "arrive")]
                 for tid in [0] + list(range(128, 128 * (1 + consumers), 32))}
        if not uses:
            assert all(p == [] for p in roles.values()), b
            continue
        bar0 = min(e[1] for e in roles[0] if e[0] == "expect_tx")
        bars = {bar0 + s: P.MBarrier("full[%d]" % s, 1) for s in range(STAGES)}
        bars.update({bar0 + STAGES + s: P.MBarrier("empty[%d]" % s, P.empty_arrivals(consumers))
                     for s in range(STAGES)})
        assert replay(roles, bars, lambda role, bar, k: (o.tmA, o.tmB)[k].bytes) == {}, b
        producer = P.make_producer_start_state(STAGES)
        want = []
        for _ in range(uses):
            want.append((bar0 + STAGES + producer.index, producer.phase))
            producer.advance()
        assert [e[1:] for e in roles[0] if e[0] == "wait"] == want
        want = [(bar0 + op.stage, op.arg) for op in P.consumer_ops(uses, STAGES) if op.kind == "wait_full"]
        for tid in range(128, 128 * (1 + consumers), 32):
            assert [e[1:] for e in roles[tid] if e[0] == "wait"] == want
