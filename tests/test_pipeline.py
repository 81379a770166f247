"""Chapter 8's package helpers: the pipeline's stage/phase logic and simulation (cutelite.pipeline), the
wgmma register fragments (against the PTX ISA's formulas), the timeline figure, the exercise checkers, and
the recorded data (against the C++ fixture, and chapter 8's records against benchmarks/gemm/RESULTS_HOPPER.md)."""
import os

import pytest

from cutelite import pipeline as P
from cutelite.gmma import gmma_fragment_of, make_gmma_atom
from cutelite.teach.records import load

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _completions_before(kt, stages):
    """Independent count: how many earlier k-tiles used kt's stage (each use completes full[s] once)."""
    return sum(1 for j in range(kt) if j % stages == kt % stages)


def _cpp_advance(index, phase, count, n, stages):
    """CUTLASS's PipelineState::advance, branch for branch (sm90_pipeline.hpp), as the oracle."""
    if n < stages and index + n >= stages:
        phase ^= 1
    if n >= stages and ((index + n) // stages) % 2 == 1:
        phase ^= 1
    return (index + n) % stages, phase, count + n


@pytest.mark.parametrize("stages", [1, 2, 3, 4, 7])
def test_pipeline_state_is_cutlass(stages):
    for index in range(stages):
        for phase in (0, 1):
            for n in range(3 * stages + 2):
                s = P.PipelineState(stages, index, phase, 5).advance(n)
                assert (s.index, s.phase, s.count) == _cpp_advance(index, phase, 5, n, stages)
    one = P.PipelineState(stages)                  # ++state, n times, equals advance(n)
    for n in range(1, 3 * stages):
        one.advance()
        assert one == P.PipelineState(stages).advance(n)
    assert P.make_producer_start_state(stages) == P.PipelineState(stages, 0, 1, 0)   # CUTLASS: {0, 1, 0}
    with pytest.raises(ValueError, match="PipelineState: index 7"):
        P.PipelineState(stages, 7)
    with pytest.raises(ValueError, match="phase must be 0 or 1"):
        P.PipelineState(stages, 0, 2)
    with pytest.raises(ValueError, match="advance: n must be at least 0"):
        P.PipelineState(stages).advance(-1)


@pytest.mark.parametrize("stages", [2, 3, 4, 7])
def test_parities_from_counting(stages):
    for kt in range(40):
        uses = _completions_before(kt, stages)
        assert P.stage_of(kt, stages) == kt % stages
        assert P.full_parity(kt, stages) == uses % 2          # wait for completion number `uses`
        # the producer waits for the release of the previous use: completion uses - 1 of empty[s]; before the
        # first use that is "phase -1", parity 1, which a fresh barrier passes at once
        assert P.empty_parity(kt, stages) == (uses - 1) % 2
        assert P.producer_waits(kt, stages) == (uses > 0)


def test_mbarrier_model():
    b = P.MBarrier("b", 2)
    assert b.try_wait(1) and not b.try_wait(0)            # a fresh barrier: parity 1 passes at once
    b.arrive(expect_tx=10)
    b.arrive()
    assert not b.try_wait(0)                              # bytes still pending
    assert b.complete_tx(10) and b.phase == 1 and b.try_wait(0) and not b.try_wait(1)
    c = P.MBarrier("c", 1)                                # bytes may land before the arrival announces them
    assert not c.complete_tx(8) and not c.try_wait(0)
    assert c.arrive(expect_tx=8) and c.phase == 1
    d = P.MBarrier("d", 1)
    d.arrive(expect_tx=8)                                 # the phase waits for its bytes ...
    with pytest.raises(RuntimeError, match="more arrivals than its count 1"):
        d.arrive()                                        # ... and has no arrival left to give


def test_wgmma_groups_follow_ptx():
    """PTX: commit_group closes the open group; wait_group N waits until at most the N most recent committed
    groups are pending and all prior ones are complete; uncommitted wgmmas are not waited on."""
    g = P.WgmmaGroups()
    for kt in range(3):
        g.mma_async(kt)
        g.commit_group()
    g.mma_async(3)                                        # issued, not committed
    assert g.wait_group(1) == [(0,), (1,)]                # groups 0 and 1 complete, group 2 may be pending
    assert g.pending() == [(2,), (3,)] and g.may_read(2) and g.may_read(3) and not g.may_read(1)
    assert g.wait_group(5) == []                          # fewer pending than 5: nothing to wait for
    assert g.wait_group(0) == [(2,)] and g.pending() == [(3,)]   # the open group is not covered


def test_consumer_ops_are_the_kernels_loop():
    ops = P.consumer_ops(6, 4)
    it = [str(o) for o in ops if o.ktile == 5]
    assert it[0] == "mbarrier.try_wait.parity  full[1], 1"      # k-tile 5: stage 1, second fill
    assert it[1] == "wgmma.fence" and it[6] == "wgmma.commit_group" and it[7].split() == ["wgmma.wait_group", "1"]
    assert [o.arg for o in ops if o.ktile == 5 and o.kind == "mma"] == [0, 1, 2, 3]
    assert it[8].startswith("mbarrier.arrive           empty[0]") and "k-tile 4" in it[8]
    tail = [o for o in ops if o.ktile == 6]
    assert [(o.kind, o.arg) for o in tail] == [("wait_group", 0), ("release", 5)]
    assert [o.arg for o in ops if o.kind == "release"] == list(range(6))   # every stage use released once


def _errors(run, words):
    return [e for e in run.errors if words in e]


@pytest.mark.parametrize("ktiles,stages,consumers,load,mma", [(8, 4, 2, 1.0, 1.0), (13, 3, 1, 0.4, 1.0),
                                                              (9, 2, 2, 2.0, 0.5), (1, 4, 2, 1.0, 1.0)])
def test_simulation_is_correct(ktiles, stages, consumers, load, mma):
    run = P.simulate_pipeline(ktiles, stages, consumers, load, mma)
    assert run.errors == [] and run.marks == []
    assert sorted(kt for r, _, _, k, kt in run.intervals if k == "tma") == list(range(ktiles))
    for c in range(consumers):
        assert sorted(kt for r, _, _, k, kt in run.intervals if k == "mma" and r == c + 1) == list(range(ktiles))
    for s in range(stages):
        fulls = [ph for _, name, ph in run.phases if name == f"full[{s}]"]
        assert fulls == list(range(1, len(range(s, ktiles, stages)) + 1))
    # the tensor cores run at full rate whenever a group is in flight: the time they are busy is the work
    spans = sorted((a, b) for _, a, b, k, _ in run.intervals if k == "mma")
    busy, reach = 0.0, 0.0
    for a, b in spans:
        busy += max(0.0, b - max(a, reach))
        reach = max(reach, b)
    assert busy == pytest.approx(ktiles * consumers * mma)
    assert run.end == pytest.approx(reach)


@pytest.mark.parametrize("stages", [2, 3, 4])
@pytest.mark.parametrize("timing", [(0.6, 1.0, 0.0), (2.5, 1.0, 0.3), (0.3, 1.0, 0.7)])
def test_release_rule_is_ptxs(stages, timing):
    """After wgmma.wait_group N at iteration kt, PTX guarantees the groups of k-tiles <= kt - N: releasing the
    stage of k-tile kt - L is safe exactly when L >= N. With L < N every in-loop release (k-tiles 0 ..
    ktiles - L - 1) is a bug, for every consumer, whatever the timing; the drain after wait_group 0 is not.
    L >= stages deadlocks: k-tile kt needs the release of k-tile kt - stages, which comes at iteration
    kt - stages + L >= kt."""
    load, mma, issue = timing
    ktiles, consumers = 9, 2
    for n in range(4):
        for lag in range(stages + 1):
            run = P.simulate_pipeline(ktiles, stages, consumers, load, mma, wait_group=n, release_lag=lag,
                                      issue_time=issue)
            assert bool(_errors(run, "deadlock")) == (lag >= stages), (n, lag)
            if lag < stages:
                early = _errors(run, "is not known to be complete")
                assert len(early) == (consumers * (ktiles - lag) if lag < n else 0), (n, lag)
            if n <= lag < stages:
                assert run.errors == []


def test_wait_group_0_is_correct_but_slower():
    """With an issue latency i per group and loads faster than the math, one consumer keeping a group in
    flight runs its groups back to back (the next enters while the last runs): load + i + K * mma. Waiting
    for every group (N = 0) exposes i at every k-tile: load + K * (i + mma). Two consumers that both wait
    for every group run in lockstep, each k-tile's two groups sharing the cores: load + K * (i + 2 mma)."""
    K, load, mma, i = 12, 0.6, 1.0, 0.25
    one = {n: P.simulate_pipeline(K, 4, 1, load, mma, wait_group=n, issue_time=i, release_lag=max(n, 1))
           for n in (0, 1)}
    assert one[1].end == pytest.approx(load + i + K * mma) and one[1].errors == []
    assert one[0].end == pytest.approx(load + K * (i + mma)) and one[0].errors == []
    two = {n: P.simulate_pipeline(K, 4, 2, load, mma, wait_group=n, issue_time=i) for n in (0, 1)}
    assert two[1].end == pytest.approx(load + i + 2 * K * mma)
    assert two[0].end == pytest.approx(load + K * (i + 2 * mma)) and two[0].errors == []


def test_wait_group_2_races_in_time_too():
    """Releasing k-tile kt - 1 while two groups stay in flight lets the TMA refill a stage whose group is still
    running on the tensor cores: the model also sees the overlap in time."""
    run = P.simulate_pipeline(12, 4, 2, 0.6, 1.0, wait_group=2)
    assert _errors(run, "the TMA writes k-tile 4 into stage 0")
    assert len(run.marks) == len(run.errors)


def test_simulation_catches_wrong_parities():
    bad_full = P.simulate_pipeline(8, 4, 2, 0.5, 1.0, consumer_phase=1)     # a fresh full[s] passes parity 1
    assert _errors(bad_full, "k-tile 0 start at t=0, but stage 0 holds nothing")
    bad_empty = P.simulate_pipeline(8, 2, 2, 0.3, 1.0, producer_phase=0)    # a fresh empty[s] blocks parity 0
    assert _errors(bad_empty, "deadlock: producer (TMA) waits forever on empty[0] parity 0")


def test_steady_state_is_mma_bound():
    run = P.simulate_pipeline(24, 4, 2, load_time=1.0, mma_time=1.0)
    assert run.end == pytest.approx(1.0 + 24 * 2 * 1.0)      # first load, then the tensor cores never idle
    slow = P.simulate_pipeline(12, 4, 2, load_time=2.5, mma_time=1.0)
    assert slow.end == pytest.approx(12 * 2.5 + 2 * 1.0)     # the last load, then its two groups


def test_simulation_refuses_bad_arguments():
    with pytest.raises(ValueError, match="simulate_pipeline: load_time must be a finite number > 0"):
        P.simulate_pipeline(load_time=0)
    with pytest.raises(ValueError, match="issue_time must be a finite number >= 0"):
        P.simulate_pipeline(issue_time=-1)
    with pytest.raises(TypeError, match="consumer_ops: wait_group must be an int"):
        P.simulate_pipeline(wait_group=1.5)
    with pytest.raises(ValueError, match="simulate_pipeline: stages must be from 1 to 64, got 0"):
        P.simulate_pipeline(stages=0)


def _nested(depth):
    t = 2
    for _ in range(depth):
        t = (t,)
    return t


def test_bad_input_raises_only_type_or_value_errors():
    """As tests/test_bad_input.py does for cutelite's __all__: each argument of each pipeline function
    replaced by a wrong kind or an absurd value raises TypeError or ValueError with a short message, or
    returns; nothing else escapes, and no absurd size (2^70 k-tiles) is attempted."""
    from cutelite import Layout, Swizzle
    bad = [None, "x", 1.5, True, -1, 0, 2 ** 70, _nested(60), [4, 8], (), Layout(4), (4, 8), object()]
    calls = [(P.PipelineState, (4, 1, 0, 3)), (lambda n: P.PipelineState(4).advance(n), (3,)),
             (P.make_producer_start_state, (4,)), (P.stage_of, (9, 4)), (P.full_parity, (9, 4)),
             (P.empty_parity, (9, 4)), (P.producer_waits, (9, 4)), (P.empty_arrivals, (2, 4, (2, 1))),
             (P.stage_alignment, (Swizzle(3, 4, 3),)), (P.desc_base_offset, (1024, Swizzle(3, 4, 3))),
             (P.launch_register_cap, (384, 65536, 8)), (P.setmaxnreg_plan, ([("p", 1, 40), ("c", 2, 232)], 65536)),
             (P.setmaxnreg_room, ([("p", 1, 40)], 2, 65536)), (P.tma_box_bytes, ((128, 64), 16)),
             (P.expect_tx_bytes, ([(128, 64), (256, 64)], 16)), (P.MBarrier, ("b", 2)),
             (lambda n: P.MBarrier("b", 2).arrive(n), (64,)), (lambda n: P.MBarrier("b", 2).complete_tx(n), (64,)),
             (lambda p: P.MBarrier("b", 2).try_wait(p), (1,)),
             (lambda op: P.SharedMemoryProxies().step(op), (P.EpilogueOp("bar_sync", 0, (0, 1)),)),
             (lambda n: P.WgmmaGroups().wait_group(n), (1,)), (P.consumer_ops, (4, 2, 1, 1, 4, 0)),
             (P.simulate_pipeline, (3, 2, 1, 1.0, 1.0, 49152, 1, 1, 0.0, 0, 1, 0.0, 49152, 4, 4)),
             (P.tma_store_epilogue, (4, 2, 2, True, 1)), (P.check_epilogue, ([P.EpilogueOp("fence", 0)],))]
    escaped = []
    for fn, args in calls:
        fn(*args)
        for i in range(len(args)):
            for b in bad:
                try:
                    fn(*args[:i], b, *args[i + 1:])
                except (TypeError, ValueError) as e:
                    assert 0 < len(str(e)) <= 1000
                except Exception as e:  # noqa: BLE001 - what the probe looks for
                    escaped.append((getattr(fn, "__name__", fn), i, repr(b)[:30], type(e).__name__))
    assert not escaped, escaped
    with pytest.raises(ValueError, match=r"wgmma.wait_group: N must be from 0 to 7"):
        P.WgmmaGroups().wait_group(8)


def test_bytes():
    assert P.tma_box_bytes((128, 64), 16) == 128 * 64 * 2
    assert P.expect_tx_bytes([(128, 64), (256, 64)], 16) == 49152
    assert P.empty_arrivals(2) == 8
    with pytest.raises(ValueError):
        P.tma_box_bytes((3,), 4)


def test_stage_alignment_and_base_offset():
    """PTX ISA, matrix descriptor: the swizzle pattern repeats at 1024 (128B), 512 (64B), 256 (32B) bytes; a
    tile on that boundary has base offset 0, else (address >> 7) & 7."""
    from cutelite import Swizzle
    for bits, period in ((3, 1024), (2, 512), (1, 256)):
        sw = Swizzle(bits, 4, 3)
        assert P.stage_alignment(sw) == period
        assert all(sw(x + period) == sw(x) + period for x in range(4 * period))
        assert any(sw(x + period // 2) != sw(x) + period // 2 for x in range(period))   # half a period is not
    sw128 = Swizzle(3, 4, 3)
    assert [P.desc_base_offset(a, sw128) for a in (0, 1024, 7 * 1024, 1024 + 32, 1024 + 128, 2048 + 896)] == \
        [0, 0, 0, 0, 1, 7]
    with pytest.raises(ValueError, match="desc_base_offset: address must be a multiple of 16 bytes from 0"):
        P.desc_base_offset(8, sw128)
    with pytest.raises(TypeError, match="stage_alignment: expected a Swizzle"):
        P.stage_alignment(3)


def test_registers():
    """The H100's register file holds 65536 32-bit registers an SM; a 384-thread block is capped at
    65536 / 384 = 170.7, 168 rounded down to 8; setmaxnreg 40 for one warpgroup and 232 for two uses
    128 * 40 + 256 * 232 = 64512, exactly what the 168 cap allotted (384 * 168)."""
    assert P.launch_register_cap(384) == 168 and P.launch_register_cap(512) == 128
    plan = P.setmaxnreg_plan([("producer", 1, 40), ("consumers", 2, 232)])
    assert (plan["threads"], plan["launch_cap"], plan["total"], plan["cta_registers"]) == \
        (384, 168, 128 * 40 + 256 * 232, 384 * 168)
    assert plan["roles"] == [("producer", 1, 40, 128 * (168 - 40)), ("consumers", 2, 232, -256 * (232 - 168))]
    for bad in (20, 44, 264):
        with pytest.raises(ValueError, match="multiple of 8 from 24 to 256"):
            P.setmaxnreg_plan([("producer", 1, bad)])
    with pytest.raises(ValueError, match="more than the 64512 the block was given at launch"):
        P.setmaxnreg_plan([("producer", 1, 40), ("consumers", 2, 240)])
    # PTX: .inc takes registers from a pool kept per CTA, filled by the CTA's own .dec: 128 x 32 + 256 x 240 =
    # 65536 fits the SM's register file but not the 384 x 168 = 64512 the block was launched with
    with pytest.raises(ValueError, match="more than the 64512 the block was given at launch"):
        P.setmaxnreg_plan([("producer", 1, 32), ("consumers", 2, 240)])
    # three consumers beside a 40-register producer: (65536 - 128 * 40) / 384 = 157.3, down to 152
    assert P.setmaxnreg_room([("producer", 1, 40)], 3) == 152
    assert P.setmaxnreg_room([("producer", 1, 40)], 2) == 232          # the kernel's two consumers: 236 -> 232
    assert P.setmaxnreg_room([], 1) == 256                              # one warpgroup alone: setmaxnreg's top
    with pytest.raises(ValueError, match="fewer than setmaxnreg's 24"):
        P.setmaxnreg_room([("consumers", 4, 128)], 4)


def test_cluster_multicast():
    """A 2x1 cluster (two CTAs along M) shares B, along M (mode 0): each CTA multicasts to both (mask 0b11); A
    is its own, shared along N (mode 1). Ranks are column-major over (M, N) as CuTe's Layout<ClusterShape>:
    (m, n) -> m + 2 n in a 2x2 cluster. The mask is cutelite's one multicast_mask (C++
    create_tma_multicast_mask), tested against C++ in test_tma.py."""
    from cutelite import Layout, multicast_mask
    assert [multicast_mask(Layout((2, 1)), (m, 0), 0) for m in range(2)] == [0b11, 0b11]
    assert [multicast_mask(Layout((2, 1)), (m, 0), 1) for m in range(2)] == [0b01, 0b10]
    assert multicast_mask(Layout((2, 2)), (0, 0), 1) == 0b0101 and multicast_mask(Layout((2, 2)), (1, 1), 0) == 0b1100
    assert P.empty_arrivals(2, cluster_shape=(2, 1)) == 2 * 2 * 4      # both CTAs' consumers release a stage
    assert P.empty_arrivals(2, cluster_shape=(2, 2)) == 3 * 2 * 4
    assert not hasattr(P, "multicast_mask")                            # one multicast_mask in cutelite


def _ptx_d(thread, i):
    """PTX ISA, wgmma .m64nNk16 accumulator D (f32): warp w of the warpgroup owns rows 16w..16w+15."""
    w, lane = thread // 32, thread % 32
    g, t = lane >> 2, lane % 4
    return 16 * w + g + 8 * ((i >> 1) & 1), 8 * (i >> 2) + 2 * t + (i & 1)


def _ptx_a(thread, i):
    """PTX ISA, wgmma .m64nNk16 A in registers (16-bit): a0..a7."""
    w, lane = thread // 32, thread % 32
    g, t = lane >> 2, lane % 4
    return 16 * w + g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2)


@pytest.mark.parametrize("n", [8, 16, 64, 256])
def test_gmma_fragments_match_ptx(n):
    atom = make_gmma_atom(f"SM90_64x{n}x16_F32F16F16_RS")
    for thread in range(128):
        assert gmma_fragment_of(atom, "C", thread) == [(i, _ptx_d(thread, i)) for i in range(n // 2)]
        assert gmma_fragment_of(atom, "A", thread) == [(i, _ptx_a(thread, i)) for i in range(8)]
    with pytest.raises(ValueError):
        gmma_fragment_of(make_gmma_atom(f"SM90_64x{n}x16_F32F16F16_SS"), "A", 0)
    with pytest.raises(ValueError):
        gmma_fragment_of(atom, "C", 128)


def test_cpp_recorded_equals_fixture():
    from cutelite.teach.cpp_recorded import CPP_GMMA, cpp_desc_fields
    from test_gmma import BLOCKS
    for key, text in CPP_GMMA.items():
        assert BLOCKS[key] == text, key
    assert cpp_desc_fields("desc K SW128 half_t (128,64) tile (128,16) block 1") == (32, 0x4000004000010000, 1, 64, 1)


def test_recorded_runs_are_in_results():
    import kernels
    kernels.setup(verbose=False)
    from kernels.hopper.chapter import RECORD, recorded_table
    text = open(os.path.join(ROOT, "benchmarks", "gemm", "RESULTS_HOPPER.md")).read()
    for run in RECORD["runs"]:
        assert run["date"] in text and run["command"] in text
        for name, ms, tf, ratio in run["rows"]:
            assert any(name.split(" (")[0] in line and f"{ms:.3f}" in line and f"{tf:.1f}" in line
                       and f"{ratio:.2f}" in line for line in text.splitlines()), name
    assert "| cuBLAS fp16->fp32 (torch.mm out_dtype) | 0.189 |" in recorded_table()
    assert "| ws BN128 st4 |" in recorded_table(RECORD["runs"][-1])


def test_exercise_checkers(capsys):
    from cutelite.teach.exercises import check_expect_tx_answer, check_lbo_sbo_answer, check_phase_answer
    assert check_lbo_sbo_answer([1, 64], (1, 64)) and not check_lbo_sbo_answer((64, 1), (1, 64))
    assert "swapped" in capsys.readouterr().out
    assert not check_lbo_sbo_answer((16, 1024), (1, 64)) and "bytes" in capsys.readouterr().out
    assert check_expect_tx_answer(49152, 49152, 16384)
    assert not check_expect_tx_answer(16384, 49152, 16384) and "A box only" in capsys.readouterr().out
    assert check_phase_answer((1, 0), (1, 0))
    assert not check_phase_answer((1, 1), (1, 0)) and "flipped" in capsys.readouterr().out
    assert not check_phase_answer(None, (1, 0)) and "not answered yet" in capsys.readouterr().out


def test_draw_pipeline():
    import matplotlib
    matplotlib.use("Agg")
    from cutelite.teach.viz import draw_pipeline
    run = P.simulate_pipeline(8, 4, 2)
    ax = draw_pipeline(run)
    assert len(ax.patches) == len(run.intervals)
    assert [t.get_text() for t in ax.get_yticklabels()] == run.rows()
    bad = P.simulate_pipeline(8, 4, 2, 0.6, 1.0, wait_group=2)
    ax = draw_pipeline(bad)
    crosses = [ln for ln in ax.lines if ln.get_marker() == "x"]
    assert len(crosses) == len(bad.errors) > 0
    assert {p.get_hatch() for p in ax.patches} >= {"...", None}        # wait_group bands and group bars
    matplotlib.pyplot.close("all")


def test_recorded_sweeps_are_in_results():
    """Every recorded sweep's rows are lines of RESULTS_HOPPER.md (ms, median ratio and its range)."""
    text = open(os.path.join(ROOT, "benchmarks", "gemm", "RESULTS_HOPPER.md")).read()
    for sweep in load("kernels/hopper")["sweeps"]:
        assert sweep["date"] in text and sweep["command"] in text
        for (M, N, K), rows in sweep["sizes"].items():
            for name, (ms, ratio, lo, hi) in rows.items():
                head = "| %dx%dx%d | %s | %.3f |" % (M, N, K, name, ms)
                tail = "| %.2f | %.2f - %.2f |" % (ratio, lo, hi)
                assert any(ln.startswith(head) and ln.endswith(tail) for ln in text.splitlines()), head + tail


def test_hangs_are_named():
    """PTX: an mbarrier phase completes when its pending arrival count and its tx-count both reach zero, and
    not before. So each of these waits forever, and the diagnosis says on which barrier, before which k-tile,
    and what the phase lacks (8 k-tiles, 4 stages, 2 consumers of 4 warps: empty[s] expects 8 arrivals)."""
    def hangs(**kw):
        run = P.simulate_pipeline(8, 4, kw.pop("consumers", 2), 0.6, 1.0, **kw)
        assert run.hangs() and run.hangs() == [e for e in run.errors if e.startswith("deadlock")]
        return "\n".join(run.hangs())
    short = hangs(bytes_landed=49152 - 16384)                  # announced bytes that never land
    assert "consumer 1 (wgmma) waits forever on full[0] parity 0 before k-tile 0" in short
    assert "1 of its 1 arrivals and still expects 16384 announced bytes" in short
    few = hangs(arrivals_per_release=1)                        # one arrival per consumer instead of one per warp
    assert "producer (TMA) waits forever on empty[0] parity 0 before k-tile 4" in few
    assert "2 of its 8 arrivals: the missing arrivals never come" in few
    one = hangs(consumers=1, empty_count=P.empty_arrivals(2))  # the count of two consumers, one consumer runs
    assert "4 of its 8 arrivals" in one
    extra = hangs(empty_count=P.empty_arrivals(1))             # the count of one consumer, two consumers run
    assert "empty[0] parity 0 before k-tile 4" in extra and "completed 2 phases where 0 were due" in extra
    fresh = hangs(producer_phase=0)
    assert "empty[0] parity 0 before k-tile 0" in fresh and "the stage is still fresh" in fresh
    assert P.simulate_pipeline(8, 4, 2, 0.6, 1.0).hangs() == []
    b = P.MBarrier("b", 3)
    b.arrive(expect_tx=10)
    assert b.lacks() == "its phase 0 has 1 of its 3 arrivals and still expects 10 announced bytes that no copy delivers"


def test_depth_hides_latency_not_bandwidth():
    """With loads as fast as the math but their bytes landing `latency` late, enough stages pay the latency
    once: first load + latency + one issue + the 12 k-tiles' 2 groups each; two stages pay more. With loads
    slower than the math, the copy engine is the limit at any depth: 12 loads back to back, then the last
    k-tile's issue and two groups."""
    load, mma, issue, lat = 0.6, 1.0, 0.25, 3.0
    deep = [P.simulate_pipeline(12, s, 2, load, mma, issue_time=issue, load_latency=lat) for s in (4, 8)]
    assert all(r.errors == [] and r.end == pytest.approx(load + lat + issue + 12 * 2 * mma) for r in deep)
    assert P.simulate_pipeline(12, 2, 2, load, mma, issue_time=issue, load_latency=lat).end > deep[0].end + 1
    for s in (4, 8):
        slow = P.simulate_pipeline(12, s, 2, 2.5, mma, issue_time=issue)
        assert slow.end == pytest.approx(12 * 2.5 + issue + 2 * mma)


def test_tma_store_epilogue_proxy_rules():
    """PTX memory consistency model: st.shared is the generic proxy, a TMA store reads through the async proxy;
    only fence.proxy.async orders the two, and a buffer may be written again after the store's
    cp.async.bulk.wait_group.read. The kernel's order (each writer fences, a barrier, one thread stores; with 2
    buffers, wait until at most 1 store may still read) breaks no rule."""
    assert P.check_epilogue(P.tma_store_epilogue(8, buffers=2, threads=3, wait_read=1)) == []
    assert P.check_epilogue(P.tma_store_epilogue(8, buffers=1, threads=2, wait_read=0)) == []
    no_fence = P.check_epilogue(P.tma_store_epilogue(4, threads=2, fence=False))
    assert len(no_fence) == 4 * 2 and all("a barrier orders threads, not proxies" in e for e in no_fence)
    late = P.check_epilogue(P.tma_store_epilogue(4, buffers=2, threads=2, wait_read=2))
    # boxes 2 and 3 reuse the buffers of boxes 0 and 1 while those stores may still read them: 2 writers each
    assert len(late) == 2 * 2 and "writes buffer 0 while the TMA store of box 0" in late[0]
    ops = [P.EpilogueOp("st_shared", 1, 0), P.EpilogueOp("bar_sync", 0, (0, 1)), P.EpilogueOp("fence", 1),
           P.EpilogueOp("tma_store", 0, 0)]                # the fence after the barrier: not ordered for thread 0
    assert P.check_epilogue(ops) == ["the TMA store of box 0 (thread 0) may read stale data: thread 1 wrote "
                                     "buffer 0 with st.shared and fenced it, but no barrier with thread 0 "
                                     "follows the fence"]
    assert str(P.tma_store_epilogue(1)[0]) == "thread 0: cp.async.bulk.wait_group.read  1"
    with pytest.raises(ValueError, match="unknown step x"):
        P.check_epilogue([P.EpilogueOp("x", 0)])


def test_recorded_figures_are_in_results():
    """Chapter 8's other recorded figures are lines of their files: the profile of RESULTS_HOPPER.md, the
    matmul figures of RESULTS.md."""
    record = load("kernels/hopper")
    HOST_US, MATMUL_2048, ODD_SHAPE, PROFILE = (record[k] for k in ("host_us", "matmul_2048", "odd_shape", "profile"))
    hopper = open(os.path.join(ROOT, "benchmarks", "gemm", "RESULTS_HOPPER.md")).read()
    gemm = open(os.path.join(ROOT, "benchmarks", "gemm", "RESULTS.md")).read()
    p = PROFILE
    line = next(ln for ln in hopper.splitlines() if ln.startswith("What limits it (ncu, persistent TMA-store"))
    para = hopper[hopper.index(line):hopper.index("\n\n", hopper.index(line))]
    for text in ("4096^3", "second machine start", f"{p['clock']}: {p['us']} us",
                 f"SM throughput {p['sm_throughput']} %",
                 f"memory {p['memory_throughput']} % (DRAM {p['dram']} %, L2 {p['l2']} %)",
                 f"{p['registers']} registers a thread", f"{p['achieved_occupancy']} % achieved occupancy",
                 f"{p['cycles_between_issues']} cycles between a warp's instructions",
                 f"{p['waiting_at_barrier']} % of\nthem waiting at a CTA barrier"):
        assert text in para, text
    assert "runs 9-12" in p["run"] and "## Runs 9-12 (2026-11-25)" in hopper
    for dtype, majors, ratio in MATMUL_2048["rows"]:
        assert f"| 2048x2048x2048 | {dtype} | {majors} | {ratio:.2f} |" in gemm
        assert gemm.split(f"| 2048x2048x2048 | {dtype} | {majors} |")[1].splitlines()[0].endswith("| 1 |")
    assert "(2026-11-25, later; issue 21)" in gemm and MATMUL_2048["command"].split(" --")[0] in gemm
    for (m, n, k), (pa, pb), ms, cublas, ratio in ODD_SHAPE["rows"]:
        assert f"| {m}x{n}x{k} | {pa}, {pb} | {ms:.3f} | {cublas:.3f} | {ratio:.2f} |" in gemm
    assert ODD_SHAPE["command"] in gemm
    for call, us in HOST_US["rows"].items():
        assert any(ln.startswith(f"| {call} | {us:.1f} |") for ln in gemm.splitlines()), call
    assert "## matmul's host cost (2026-11-25, `benchmarks/gemm/launch_cost.py`" in gemm
