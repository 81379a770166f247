"""The FlashAttention-3-style Hopper kernel (kernels.attention.fa3_wgmma) without a GPU:

- what it reads off the layouts: the rows of a GMMA accumulator and the lanes that share them (the PTX ISA's
  wgmma D fragment: lanes 4g..4g+3 of a warp hold rows g and g + 8 of its 16; the xors 1 and 2), and P's C
  values as the RS atom's A values (the PTX ISA's A fragment for registers: the same rows and columns);
- its protocol, recorded in Numba's simulator with stand-ins for the mbarrier, TMA and wgmma instructions and
  replayed on cutelite's mbarrier model: Q once, then K and V on two pipelines, every wait passing; for the
  ping-pong build the consumers' turns on named barriers too, and the trace's records and drawing;
- its numbers, every build at small sizes, on a working model of the TMA, wgmma and the barriers
  (tests/hopper_attention_model.py) against kernels/attention/reference.py. At full size, and its speed, on the
  GPU: kernels.attention.check_hopper.
"""


import numpy as np
import pytest

import kernels

kernels.setup(verbose=False, simulator=True)

from cutelite import make_tiled_mma, pipeline as P  # noqa: E402
from kernels.attention import fa3_wgmma as F  # noqa: E402
from kernels.attention import timeline as F_timeline  # noqa: E402
from mbarrier_replay import EventLog, replay  # noqa: E402

pytestmark = pytest.mark.numba("simulator")


def test_accumulator_rows_are_the_ptx_fragment():
    """PTX ISA, wgmma D fragment (m64nNk16, f32): thread t of the warpgroup holds rows 16 (t // 32) + (t % 32) // 4
    and that + 8; value 4i + j (j < 4) is column 8i + 2 (t % 4) + j % 2 of the row of j // 2."""
    o = F.objects(D=64, BN=128)
    slot, masks = F.acc_rows(make_tiled_mma(o.mma_s.atom), (64, 128))
    assert masks == (1, 2)
    assert slot == [(v % 4) // 2 for v in range(64)]
    a_of_c = F.p_as_a(make_tiled_mma(o.mma_s.atom), make_tiled_mma(o.mma_o.atom), 128)
    # A value (v0, v1, v2) of k-block kb is C value (v0, v1, 2 kb + v2): 8 values a k-block, 4 registers
    assert a_of_c == [v0 + 2 * v1 + 4 * (2 * kb + v2) for kb in range(8) for v2 in range(2) for v1 in range(2)
                      for v0 in range(2)]


class _Recorder(EventLog):
    """Stand-ins for the kernel's TMA, mbarrier and wgmma instructions, recording what each thread issues."""

    def overrides(self):
        def try_wait(bars, i, parity):
            self.log("wait", int(i), int(parity))
            return 1

        def tma(dst, off, tmap, bars, i, *c):
            self.log("tma", int(i), tuple(int(x) for x in c))

        def wgmma(acc, a, db, scale, types, trans):
            self.log("wgmma", int(bool(scale)))
            return acc

        noop = lambda *a: None  # noqa: E731
        return {"mbarrier_try_wait": try_wait, "tma_load_4d": tma, "wgmma": wgmma, "wgmma_rs": wgmma,
                "mbarrier_arrive_expect_tx": lambda bars, i, n: self.log("expect_tx", int(i), int(n)),
                "mbarrier_arrive": lambda bars, i: self.log("arrive", int(i)),
                "wgmma_wait": lambda acc, n: acc, "wgmma_commit": noop, "wgmma_fence": lambda acc: acc,
                "tma_prefetch_desc": noop, "mbarrier_init": noop, "tma_store_4d": noop, "tma_store_commit": noop,
                "tma_store_wait": noop, "exp2_approx": lambda x: np.float32(np.exp2(np.float32(x))),
                "st_global_v1_f32": noop, "st_shared_v1_b32": noop}


@pytest.mark.parametrize("causal,S_q,S_k", [(False, 80, 80), (True, 80, 200)])
def test_protocol_replays_on_the_pipeline_model(causal, S_q, S_k):
    """One block (a 64-row tile, one consumer warpgroup): the producer loads Q once, then K and V tile j for
    every key tile the tile sees (causal, bottom-right: ceil((S_q + S_k - S_q) / BN) = all of S_k's 2 tiles of 128
    here; the last key tile past S_k is zero-filled), and the recorded waits and arrivals run to the end on
    cutelite's MBarriers."""
    rec = _Recorder()
    k = F.make(D=64, causal=causal, BM=64, BN=128, stages=2, overrides=rec.overrides())
    n = -(-S_k // 128)
    lse = np.zeros((1, S_q), np.float32)
    tm = np.zeros(16, np.uint64)
    k.launch(lse, tm, tm, tm, tm, S_q, S_k, 1, 1, grid=1)
    ev = rec.events
    producer = [e[1:] for e in ev if e[0] == 0]
    loads = [e for e in producer if e[0] == "tma"]
    m_tiles = -(-S_q // 64)
    assert loads[0][2] == (0, (m_tiles - 1) * 64, 0, 0)                  # Q: the last query tile (longest first)
    assert [e[2] for e in loads[1:]] == [(0, j * 128, 0, 0) for j in range(n) for _ in range(2)]
    consumer = [e[1:] for e in ev if e[0] == 128]
    # per key tile: S = Q K^T in 4 k-blocks (the first overwrites), then O += P V in 8 (the very first overwrites)
    assert [e[1] for e in consumer if e[0] == "wgmma"] == sum(([0, 1, 1, 1] + [int(j > 0)] + [1] * 7
                                                               for j in range(n)), [])
    # replay: full barriers take 1 arrival and the bytes, empty ones one arrival per consumer warp (4)
    bar0 = min(e[1] for e in producer if e[0] == "expect_tx")
    nbars = 1 + 1 + 2 * 2 + 2 * 2
    bars = {}
    q_full, k_full, v_full = bar0, bar0 + 2, bar0 + 6      # each pipeline: its full barriers, then its empty ones
    assert {e[1] for e in producer if e[0] == "expect_tx"} <= {q_full, k_full, k_full + 1, v_full, v_full + 1}
    for full, stages in ((q_full, 1), (k_full, 2), (v_full, 2)):
        for s in range(stages):
            bars[full + s] = P.MBarrier("full", 1)
            bars[full + stages + s] = P.MBarrier("empty", P.empty_arrivals(1))
    assert len(bars) == nbars
    roles = {t: [e[1:] for e in ev if e[0] == t and e[1] in ("wait", "expect_tx", "tma", "arrive")]
             for t in [0] + list(range(128, 256, 32))}
    nbytes = {q_full: k.objects.tmQ.bytes, k_full: k.objects.tmK.bytes, k_full + 1: k.objects.tmK.bytes,
              v_full: k.objects.tmV.bytes, v_full + 1: k.objects.tmV.bytes}
    assert replay(roles, bars, lambda role, bar, k: nbytes[bar]) == {}


class _TurnRecorder(_Recorder):
    """The recorder, with the consumers' turns: the named barriers' bar.sync and bar.arrive."""

    def overrides(self):
        o = super().overrides()
        o["named_barrier_sync"] = lambda i, n: self.log("nsync", int(i), int(n))
        o["named_barrier_arrive"] = lambda i, n: self.log("narrive", int(i), int(n))
        return o


def _with_turns(program):
    """A role's events with its named-barrier events as mbarrier ones: bar.arrive an arrival, the k-th bar.sync
    an arrival and then a wait for the barrier's k-th phase (a named barrier completes when its count arrived)."""
    out, syncs = [], {}
    for e in program:
        if e[0] == "narrive":
            out.append(("arrive", ("named", e[1])))
        elif e[0] == "nsync":
            k = syncs.get(e[1], 0)
            syncs[e[1]] = k + 1
            out += [("arrive", ("named", e[1])), ("wait", ("named", e[1]), k & 1)]
        else:
            out.append(e)
    return out


@pytest.mark.parametrize("pingpong,overlap,causal,S_q,S_k,BM", [
    (True, False, False, 80, 300, 128), (False, True, True, 100, 300, 128), (True, True, True, 128, 300, 128),
    (True, True, False, 50, 100, 128), (True, True, True, 150, 200, 192)])
def test_pingpong_and_overlap_replay_with_their_timeline(pingpong, overlap, causal, S_q, S_k, BM):
    """One block of BM / 64 consumer warpgroups (two or three), 3 key blocks of 128 (2 for S_k = 200, 1 for 100). The
    consumers' wgmmas come in the build's order (overlap: S_j, then P V of block j - 1, before the softmax of
    S_j); the waits and arrivals of the pipelines and of the ping-pong's named barriers replay to the end on
    cutelite's model; and the trace records every phase of every warpgroup once, each ending after it starts."""
    rec = _TurnRecorder()
    c = BM // 64
    k = F.make(D=64, causal=causal, BM=BM, BN=128, stages=2, regs=(24, 240) if c == 2 else (24, 160),
               pingpong=pingpong, overlap=overlap, trace=True, overrides=rec.overrides())
    n = -(-S_k // 128)
    lse = np.zeros((1, S_q), np.float32)
    tm = np.zeros(16, np.uint64)
    stamps = np.zeros((1 + c, 2 * F_timeline.slots_for(n)), np.uint64)
    k.launch(lse, tm, tm, tm, tm, S_q, S_k, 1, 1, stamps, grid=1)
    ev = rec.events
    leads = list(range(128, 128 * (1 + c), 128))          # each consumer warpgroup's first thread
    s_blk, first_pv = [0, 1, 1, 1], lambda acc: [int(acc)] + [1] * 7
    if overlap:
        want = s_blk + sum((s_blk + first_pv(j > 1) for j in range(1, n)), []) + first_pv(n > 1)
    else:
        want = sum((s_blk + first_pv(j > 0) for j in range(n)), [])
    for t in leads:
        assert [e[2] for e in ev if e[0] == t and e[1] == "wgmma"] == want
    order = tuple(range(1, 1 + c)) if pingpong else ()    # the PipelineOrder's barriers first; the epilogue's after
    turns = [[e[1:3] for e in ev if e[0] == t and e[1] in ("nsync", "narrive") and e[2] in order] for t in leads]
    if pingpong:   # consumer i waits on barrier i + 1 (consumer 0 from its second turn) and hands each turn to
        # the next consumer's barrier (the last consumer to consumer 0's, but for its last turn)
        for i, got in enumerate(turns):
            mine, nxt = ("nsync", i + 1), ("narrive", (i + 1) % c + 1)
            head = [nxt] if i == 0 else []
            tail = [mine] if i == c - 1 else []
            assert got == head + [mine, nxt] * (n - (i == 0) - (i == c - 1)) + tail
    else:
        assert turns == [[]] * c
    producer = [e[1:] for e in ev if e[0] == 0]
    bar0 = min(e[1] for e in producer if e[0] == "expect_tx")
    q_full, k_full, v_full = bar0, bar0 + 2, bar0 + 6
    bars = {("named", i): P.MBarrier("named %d" % i, 8 if i in order else 4 * c)       # warps that arrive
            for i in {e[2] for e in ev if e[1] in ("nsync", "narrive")}}
    for full, st in ((q_full, 1), (k_full, 2), (v_full, 2)):
        for s in range(st):
            bars[full + s] = P.MBarrier("full", 1)
            bars[full + st + s] = P.MBarrier("empty", P.empty_arrivals(c))
    roles = {t: _with_turns([e[1:] for e in ev if e[0] == t and e[1] in ("wait", "expect_tx", "tma", "arrive",
                                                                          "nsync", "narrive")])
             for t in [0] + list(range(128, 128 * (1 + c), 32))}
    nbytes = {q_full: k.objects.tmQ.bytes, k_full: k.objects.tmK.bytes, k_full + 1: k.objects.tmK.bytes,
              v_full: k.objects.tmV.bytes, v_full + 1: k.objects.tmV.bytes}
    assert replay(roles, bars, lambda role, bar, k: nbytes[bar]) == {}
    recs = F_timeline.record(stamps, 1 + c)
    seen = sorted((r["warpgroup"], r["phase"], r["block"]) for r in recs)
    consumers = range(1, 1 + c)
    assert seen == sorted([(0, "load Q", None)] + [(0, p, j) for j in range(n) for p in ("load K", "load V")]
                          + [(w, p, j) for w in consumers for j in range(n) for p in ("S GEMM", "softmax", "PV GEMM")]
                          + [(w, "epilogue", None) for w in consumers])
    assert all(r["cta"] == 0 and r["role"] == ("producer" if r["warpgroup"] == 0 else "consumer")
               and 0 <= r["start_ns"] <= r["end_ns"] for r in recs)
    fig = F_timeline.draw(recs, title="one block")
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["CTA 0 producer"] + [
        "CTA 0 consumer %d" % i for i in range(c)]
    assert len(fig.axes[0].collections) == len(recs)      # a bar a record


def test_timeline_slots_and_refusals():
    """Slot 0 is the once-a-tile phase, then five slots a key block; a buffer of the wrong shape is refused."""
    assert [F_timeline.slot(p, 2) for p in F_timeline.BLOCK_PHASES] == [11, 12, 13, 14, 15]
    assert F_timeline.slot("epilogue") == F_timeline.slot("load Q") == 0
    assert F_timeline.slots_for(3) == 16
    with pytest.raises(ValueError, match="phase must be one of"):
        F_timeline.slot("wait")
    with pytest.raises(ValueError, match="warpgroups"):
        F_timeline.record(np.zeros((4, 6), np.uint64), 3)
    with pytest.raises(ValueError, match="pingpong"):
        F.make(D=64, BM=64, pingpong=True)


# The plain build and the one the library runs, end to end in the simulator (tens of seconds each); the
# ping-pong-only and overlap-only builds' schedules, and three consumers', are replayed above (three consumers on
# key blocks of 112, a tile of check_hopper's CONFIGS, ran end to end once and passed the GPU's fuzz).
@pytest.mark.parametrize("build,causal,S_q,S_k,H,H_kv", [
    ({}, False, 70, 150, 1, 1), (dict(pingpong=True, overlap=True), True, 120, 100, 2, 1)],
    ids=["plain", "pingpong+overlap"])
def test_builds_match_the_reference(build, causal, S_q, S_k, H, H_kv):
    """Each build of the kernel on a working model of the TMA, wgmma (SS and RS, B MN-major) and the barriers
    (tests/hopper_attention_model.py), against kernels/attention/reference.py in float32: D = 64, BN = 64 (three
    key blocks, the last one partial), S_q != S_k, both masks, grouped heads, rows that see no key;
    O and LSE poisoned with NaN first."""
    from hopper_attention_model import AttentionModel
    from kernels.attention.reference import reference
    model = AttentionModel()
    k = F.make(D=64, causal=causal, overrides=model.overrides(), **dict(dict(BM=128, BN=64, stages=2), **build))
    rng = np.random.default_rng(7)
    B, D = 1, 64
    q = rng.standard_normal((B, S_q, H, D)).astype(np.float16)
    kk = rng.standard_normal((B, S_k, H_kv, D)).astype(np.float16)
    v = rng.standard_normal((B, S_k, H_kv, D)).astype(np.float16)
    out = np.full_like(q, np.nan)
    lse = np.full((B * H, S_q), np.nan, np.float32)
    o = k.objects
    s_d_h_b, d_s_h_b = (1, 3, 2, 0), (3, 1, 2, 0)
    maps = [model.tensor_map(x.transpose(perm), spec) for x, perm, spec in
            ((q, s_d_h_b, o.tmQ), (kk, s_d_h_b, o.tmK), (v, d_s_h_b, o.tmV), (out, s_d_h_b, o.tmO))]
    k.launch(lse, *maps, S_q, S_k, H, H // H_kv, grid=-(-S_q // o.BM) * B * H)
    ro, rl = reference(q.astype(np.float32), kk.astype(np.float32), v.astype(np.float32), causal=causal)
    assert not np.isnan(out).any() and not np.isnan(lse).any()
    np.testing.assert_allclose(out.astype(np.float32), ro, atol=2e-2, rtol=0)
    seen = ~np.isneginf(rl.reshape(B * H, S_q))
    assert (np.isneginf(lse) == ~seen).all()
    np.testing.assert_allclose(lse[seen], rl.reshape(B * H, S_q)[seen], atol=1e-2, rtol=0)


def test_timeline_span_and_gemm_share():
    """span_us and gemm_share on records made up by hand: block 0 runs 0-60 ns, its consumers' GEMMs cover 10-40
    (two overlapping phases, counted once); block 1 runs 0-10 ns, all of it in a GEMM."""
    def rec(cta, wg, phase, start, end):
        return dict(cta=cta, warpgroup=wg, role="producer" if wg == 0 else "consumer", phase=phase, block=0,
                    start_ns=start, end_ns=end)
    recs = [rec(0, 0, "load Q", 0, 10), rec(0, 1, "S GEMM", 10, 30), rec(0, 2, "PV GEMM", 20, 40),
            rec(0, 1, "softmax", 30, 50), rec(0, 2, "epilogue", 40, 60), rec(1, 1, "S GEMM", 0, 10)]
    assert F_timeline.span_us(recs) == 0.06
    assert F_timeline.gemm_share(recs) == {0: 0.5, 1: 1.0}


def test_timeline_record_holds_both_builds():
    """kernels/attention/timeline.json (check_hopper --timeline): the plain build and the ping-pong + overlap one,
    each with the recorded blocks' producer and two consumers."""
    r = F_timeline.recorded()
    assert set(r["builds"]) == {"plain", "pingpong+overlap"}
    for recs in r["builds"].values():
        assert {(x["cta"], x["warpgroup"]) for x in recs} == {(c, w) for c in range(r["shape"]["ctas"])
                                                             for w in range(3)}
        assert all(0 <= x["start_ns"] <= x["end_ns"] for x in recs)


def test_candidate_tiles_are_listed():
    """check_hopper --configs (candidate tiles, CONFIGS) runs each configuration for both masks at the first timed shape of its D, and prints a row per
    configuration and mask. make refuses a register split beyond an SM's 65536 registers."""
    from kernels.attention import check_hopper as C
    with pytest.raises(ValueError, match="65536"):
        F.make(D=64, BM=192, regs=(24, 240))
    work = C.tasks([], 2, True, (), ["d64-128x128"])
    assert [(t["build"], t["D"], t["causal"], t["dtype"], t["shapes"]) for t in work] == [
        ("d64-128x128", 64, False, "float16", 1), ("d64-128x128", 64, True, "float16", 1)]
    rows = [(4, 32, 64, 4096, "full", {"d64-128x128": 300.0, "cudnn": 400.0, "flash": 250.0})]
    assert C.config_table(rows).splitlines()[-1] == \
        "| d64-128x128 | 128 x 128, 2 | 4 | 32 | 64 | 4096 | full | 300 | 400 | 250 | 0.75 | 1.20 |"
