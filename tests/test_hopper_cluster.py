"""kernels.hopper.cluster, chapter 8's persistent kernel in clusters with TMA multicast, without a GPU:

- a 1 x 1 cluster computes NumPy's product in Numba's simulator (through HopperModel), tiles at C's edges
  included; the simulator runs one block at a time, so larger clusters are refused by name there;
- the protocol of 2 x 1 and 1 x 2 clusters: every block of a cluster is run in the simulator with recording
  stand-ins (a stand-in never waits, so the blocks run one after another), then the recorded waits, arrivals
  and multicasts are replayed on cutelite's mbarrier model with one set of barriers a block: a remote arrival
  lands on the named block's barrier, a multicast slice completes its bytes on the barrier of every block of
  its mask. Every role runs to its end; each role's (barrier, parity) sequence is the pipeline model's;
- the multicast masks are cutelite's (C++ create_tma_multicast_mask) for every block; the release targets
  are the blocks of the cluster row and column;
- the driver's launch structures have cuda.h's layout (compiled with the C compiler where cuda.h is found).
"""

import ctypes
import os
import shutil
import subprocess
import tempfile

import numpy as np
import pytest

import kernels

kernels.setup(verbose=False, simulator=True)

from cutelite import Layout, multicast_mask  # noqa: E402
from cutelite import pipeline as P  # noqa: E402
from mbarrier_replay import EventLog, replay  # noqa: E402
from kernels.hopper import cluster  # noqa: E402
from kernels.instructions.hopper_model import HopperModel  # noqa: E402

pytestmark = pytest.mark.numba("simulator")


def test_one_block_cluster_matches_numpy():
    model = HopperModel()
    k = cluster.make((1, 1), BN=128, stages=2, tma_store=False, overrides=model.overrides())
    o = k.objects
    rng = np.random.default_rng(5)
    M, N, K = 256, 256, 200                       # 2 x 2 tiles (st.global stores whole tiles); a partial k-tile
    a, bt = (rng.standard_normal(s).astype(np.float16) for s in ((M, K), (N, K)))
    C = np.full((M, N), np.nan, np.float32)
    k.launch(a, bt, C, model.tensor_map(a, o.tmA), model.tensor_map(bt, o.tmB), model.tensor_map(a, o.tmA), grid=2)
    want = a.astype(np.float64) @ bt.astype(np.float64).T
    assert not np.isnan(C).any()
    assert np.abs(C - want).max() / np.abs(want).max() < 1e-6


def test_simulator_refuses_a_cluster_of_two():
    k = cluster.make((2, 1), BN=128, stages=2)
    z = np.zeros((128, 64), np.float16)
    with pytest.raises(RuntimeError, match="one block at a time"):
        k.launch(z, z, np.zeros((128, 128), np.float32), *(np.zeros(16, np.uint64),) * 3, grid=2)


class _Recorder(EventLog):
    """Stand-ins recording (block, thread, event): waits pass at once."""

    def log(self, *e):
        import threading
        me = threading.current_thread()
        with self.lock:
            self.events.append((me.blockIdx.x, me.threadIdx.x) + e)

    def overrides(self):
        noop = lambda *a: None  # noqa: E731

        def try_wait(bars, i, parity):
            self.log("wait", int(i), int(parity))
            return 1
        return {"mbarrier_try_wait": try_wait, "mbarrier_init": noop, "tma_prefetch_desc": noop,
                "mbarrier_arrive_expect_tx": lambda bars, i, n: self.log("expect_tx", int(i), int(n)),
                "tma_load_2d": lambda d, off, tm, bars, i, c0, c1: self.log("tma", int(i), 1 << 20, int(tm[0])),
                "tma_load_2d_multicast": lambda d, off, tm, bars, i, c0, c1, mask: self.log(
                    "tma", int(i), int(mask), int(tm[0])),
                "mbarrier_arrive_cluster": lambda bars, i, cta: self.log("arrive", int(i), int(cta)),
                "mbarrier_arrive": lambda bars, i: self.log("arrive", int(i), -1),
                "wgmma": lambda acc, da, db, scale, types, trans: acc, "cluster_arrive": noop, "cluster_wait": noop}


KT, TILES = 5, 2          # k-tiles a tile; cluster tiles a cluster walks (grid: one cluster)


def _record(shape):
    """The events of one cluster of `shape` (BM 128, BN 128, 3 stages) over TILES cluster tiles of KT k-tiles."""
    rec = _Recorder()
    k = cluster.make(shape, BN=128, stages=3, tma_store=False, overrides=rec.overrides())
    ctas = shape[0] * shape[1]
    k.cluster = None                              # the stand-ins let the simulator run the blocks one by one
    M, N = 128 * shape[0] * TILES, 128 * shape[1]
    A, Bt = np.zeros((M, 64 * KT), np.float16), np.zeros((N, 64 * KT), np.float16)
    maps = [np.full(16, i, np.uint64) for i in (1, 2, 3)]
    k.launch(A, Bt, np.zeros((M, N), np.float32), *maps, grid=ctas)
    return rec.events, k.objects, k


def _replay_cluster(events, o, shape, stages, empty_count):
    """(roles, what replay leaves waiting) with one barrier set a block, keyed (block, barrier index): a remote
    arrival lands on its block's barrier; a load's slice completes its bytes (its tile's over the CTAs
    sharing it) on the barrier of each block of its mask."""
    ctas = shape[0] * shape[1]
    bar0 = min(e[3] for e in events if e[2] == "expect_tx")
    bars = {}
    for r in range(ctas):
        bars.update({(r, bar0 + s): P.MBarrier("full[%d] of block %d" % (s, r), 1) for s in range(stages)})
        bars.update({(r, bar0 + stages + s): P.MBarrier("empty[%d] of block %d" % (s, r), empty_count)
                     for s in range(stages)})
    cm, cn = shape                 # one use's landings, in the order each producer issues them: A's, then B's
    per_use = [o.tmA.bytes // cn] * cn + [o.tmB.bytes // cm] * cm
    roles = {}
    for role in sorted({e[:2] for e in events}):
        program = []
        for e in (e for e in events if e[:2] == role):
            if e[2] in ("wait", "expect_tx"):
                program.append((e[2], (role[0], e[3]), e[4]))
            elif e[2] == "arrive":
                program.append(("arrive", (e[4] if e[4] >= 0 else role[0], e[3]), None))
            elif e[2] == "tma":
                to = [role[0]] if e[4] == 1 << 20 else [c for c in range(16) if e[4] >> c & 1]
                program += [("tma", (c, e[3]), None) for c in to]
        roles[role] = program
    return roles, replay(roles, bars, lambda role, bar, k: per_use[k]), bar0


@pytest.mark.parametrize("shape", [(2, 1), (1, 2)])
def test_cluster_protocol_replays_on_the_mbarrier_model(shape):
    events, o, k = _record(shape)
    ctas, stages = shape[0] * shape[1], 3
    layout = Layout(shape)
    # each block's producer multicasts A to its cluster row, B to its column: cutelite's masks
    for i in range(shape[0]):
        for j in range(shape[1]):
            masks = {(e[4], e[5]) for e in events if e[0] == layout(i, j) and e[2] == "tma"}
            a = multicast_mask(layout, (i, j), 1) if shape[1] > 1 else 1 << 20
            b = multicast_mask(layout, (i, j), 0) if shape[0] > 1 else 1 << 20
            assert masks == {(a, 1), (b, 2)}, (i, j, masks)
    roles, left, bar0 = _replay_cluster(events, o, shape, stages, P.empty_arrivals(2, cluster_shape=shape))
    assert left == {}
    # each role's waits: the pipeline model's (barrier, parity), on its own block's barriers
    uses = TILES * KT
    for r in range(ctas):
        producer = P.make_producer_start_state(stages)
        want = []
        for _ in range(uses + stages):             # its loads, then its tail (every stage empty once more)
            want.append(((r, bar0 + stages + producer.index), producer.phase))
            producer.advance()
        assert [e[1:] for e in roles[(r, 0)] if e[0] == "wait"] == want
        want = [((r, bar0 + op.stage), op.arg) for op in P.consumer_ops(uses, stages) if op.kind == "wait_full"]
        for tid in range(128, 384, 32):
            assert [e[1:] for e in roles[(r, tid)] if e[0] == "wait"] == want
    # lanes 0 .. cm + cn - 2 of each consumer warp release each use, in every block of the cluster row and column
    for r in range(ctas):
        assert sorted({e[1] % 32 for e in events if e[0] == r and e[2] == "arrive"}) == list(range(ctas))
        assert {e[4] for e in events if e[0] == r and e[2] == "arrive"} == set(range(ctas))


def test_one_block_arrival_count_breaks_the_cluster_protocol():
    """The replay is a real check: with empty barriers that count one block's consumer warps (no cluster), the
    other block's remote arrivals complete a second phase per use, and the producers, waiting on the parity
    of one phase a use, are left waiting."""
    events, o, _ = _record((2, 1))
    roles, left, bar0 = _replay_cluster(events, o, (2, 1), 3, P.empty_arrivals(2))
    assert (0, 0) in left and (1, 0) in left
    assert all(left[(r, 0)][0] == "wait" and left[(r, 0)][1][1] >= bar0 + 3 for r in (0, 1))   # on empty barriers


def test_masks_and_release_targets_of_every_block():
    for shape in [(2, 1), (1, 2), (2, 2), (4, 2)]:
        cm, cn = shape
        layout = Layout(shape)
        for i in range(cm):
            for j in range(cn):
                # the kernel's masks: (0, 0)'s, shifted by i (A, along N) and by cm j (B, along M)
                assert multicast_mask(layout, (0, 0), 1) << i == multicast_mask(layout, (i, j), 1)
                assert multicast_mask(layout, (0, 0), 0) << (cm * j) == multicast_mask(layout, (i, j), 0)
                # lane -> block: the union of both masks, each block once
                from kernels.expr import Sym
                rank = cluster.release_targets(shape, Sym(str(i)), Sym(str(j)))
                got = [eval(rank(Sym(str(lane))).src) for lane in range(cm + cn - 1)]
                assert sorted(got) == sorted({r for r in range(16) if (multicast_mask(layout, (i, j), 0)
                                                                     | multicast_mask(layout, (i, j), 1)) >> r & 1})


def test_cluster_make_refusals():
    with pytest.raises(ValueError, match="portable cluster size"):
        cluster.make((4, 4))
    with pytest.raises(ValueError, match="persistent"):
        from kernels.cutejit import TileScheduler
        TileScheduler(4, 4, cluster=(2, 1))


def test_launch_structs_have_cuda_h_layout():
    from kernels.runtime import CUlaunchAttribute, CUlaunchConfig, cluster_config
    cc, header = shutil.which("cc") or shutil.which("gcc"), None
    for root in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if root and os.path.exists(os.path.join(root, "include", "cuda.h")):
            header = os.path.join(root, "include")
    if cc is None or header is None:
        pytest.skip("no C compiler or cuda.h")
    with tempfile.TemporaryDirectory() as d:
        open(os.path.join(d, "s.c"), "w").write(
            '#include <cuda.h>\n#include <stdio.h>\n#include <stddef.h>\n'
            'int main(){printf("%zu %zu %zu %zu %zu %zu %d",'
            'sizeof(CUlaunchAttribute), sizeof(CUlaunchConfig), offsetof(CUlaunchConfig, hStream),'
            'offsetof(CUlaunchConfig, attrs), offsetof(CUlaunchConfig, numAttrs),'
            'offsetof(CUlaunchAttribute, value.clusterDim.x), (int)CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION);}')
        subprocess.run([cc, "-I" + header, os.path.join(d, "s.c"), "-o", os.path.join(d, "s")], check=True)
        want = subprocess.run([os.path.join(d, "s")], capture_output=True, text=True).stdout.split()
    from kernels.runtime import CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    got = [ctypes.sizeof(CUlaunchAttribute), ctypes.sizeof(CUlaunchConfig), CUlaunchConfig.hStream.offset,
           CUlaunchConfig.attrs.offset, CUlaunchConfig.numAttrs.offset, CUlaunchAttribute.x.offset,
           CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION]
    assert [str(g) for g in got] == want
    config, attr = cluster_config((132, 1, 1), (384, 1, 1), 1000, 0, (2, 1, 1))
    assert (config.gridDimX, config.numAttrs, attr.x, attr.y, attr.z) == (132, 1, 2, 1, 1)
    with pytest.raises(ValueError, match="not whole clusters"):
        cluster_config((133, 1, 1), (384, 1, 1), 0, 0, (2, 1, 1))


def test_cluster_verdict_reads_the_rows():
    """kernels.hopper.chapter.cluster_verdict on rows made up by hand: slower means more ms than the 1 x 1
    cluster at the same size, and the ranges are those of the median ratios."""
    from kernels.hopper.chapter import cluster_verdict
    rows = [("64x64x64", "cuBLAS", 1.0, 9.0, 1.0, 1.0, 1.0), ("64x64x64", "cluster 1x1", 2.0, 9.0, 0.5, 0.4, 0.6),
            ("64x64x64", "cluster 2x1", 4.0, 9.0, 0.25, 0.2, 0.3),
            ("128x64x64", "cluster 1x1", 2.0, 9.0, 0.8, 0.7, 0.9),
            ("128x64x64", "cluster 2x1", 1.0, 9.0, 0.9, 0.8, 1.0)]
    assert cluster_verdict(rows) == ("In this run the 2x1 clusters were slower than 1x1 at 1 of the 2 sizes: "
                                     "0.25 - 0.90 of cuBLAS against 0.50 - 0.80.")
    assert "at every size" in cluster_verdict(rows[:3])


def test_dsl_cluster_verdict_reads_the_rows():
    """dsl_cluster_verdict on rows made up by hand: each DSL cluster's speed over its own 1 x 1's at the same
    size (1x1 in 2 ms, 2x1 in 4 ms and 2.5 ms: 0.5 and 0.8); nothing without DSL rows."""
    from kernels.hopper.chapter import dsl_cluster_verdict
    rows = [("64x64x64", "CuTe DSL persistent 1x1", 2.0, 9.0, 1.0, 1.0, 1.0),
            ("64x64x64", "CuTe DSL persistent 2x1", 4.0, 9.0, 0.5, 0.5, 0.5),
            ("64x64x64", "CuTe DSL persistent 1x2", 2.5, 9.0, 0.8, 0.8, 0.8),
            ("64x64x64", "cluster 1x1", 1.0, 9.0, 1.0, 1.0, 1.0)]
    assert dsl_cluster_verdict(rows) == ("The CuTe DSL's 2x1 and 1x2 clusters ran at 0.50 - 0.80 of its own 1x1's "
                                         "speed in the same run.")
    assert dsl_cluster_verdict(rows[3:]) == ""


def test_cluster_profile_lines_scale_rates_by_time(monkeypatch):
    """cluster_profile_lines on a record made up by hand: a kernel twice as long at the same L2 rate made twice
    the sector accesses of its 1 x 1 (+100 %); at half the rate over twice the time, as many (+0 %)."""
    from kernels.hopper import chapter
    one = {"gpu__time_duration.sum": 1e6, "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed": 90.0,
           "lts__t_sector_hit_rate.pct": 80.0, "lts__throughput.avg.pct_of_peak_sustained_elapsed": 50.0,
           "lts__t_sectors.avg.pct_of_peak_sustained_elapsed": 40.0,
           "lts__t_tag_requests.avg.pct_of_peak_sustained_elapsed": 30.0}
    two = dict(one, **{"gpu__time_duration.sum": 2e6, "lts__t_tag_requests.avg.pct_of_peak_sustained_elapsed": 15.0,
                       "lts__throughput.avg.pct_of_peak_sustained_elapsed": 60.0})
    rec = {"date": "2026-01-02", "command": "python p.py",
           "runs": {(64, 64, 64): {"cluster 1x1": one, "cluster 2x1": two}}}
    monkeypatch.setitem(chapter.RECORD, "cluster_profile", rec)
    lines = chapter.cluster_profile_lines().splitlines()
    assert lines[0] == "ncu, recorded 2026-01-02: `python p.py`"
    assert lines[-1] == ("At 64x64x64, against each family's 1x1: cluster 2x1 L2 sectors +100 %, tag requests +0 %. "
                         "L2 was at most 60 % busy in any of them.")
    assert lines[4].split() == ["cluster", "2x1", "2.000", "90", "80", "60", "2.00", "1.00"]


def test_max_active_clusters_is_not_asked_in_the_simulator():
    """runtime.max_active_clusters asks the driver; Numba's simulator has none to ask: None, and the cluster
    kernel's grid then keeps its SMs-per-cluster bound."""
    from kernels.runtime import max_active_clusters
    assert max_active_clusters(None, (), 384, 0, (2, 1, 1)) is None
