"""Chapter 8's package helpers: the pipeline's stage/phase logic and simulation (cutelite.pipeline), the
wgmma register fragments (against the PTX ISA's formulas), the timeline figure, the exercise checkers, and
the recorded data modules (against the C++ fixture and benchmarks/gemm/RESULTS_HOPPER.md)."""
import os

import pytest

from cutelite import pipeline as P
from cutelite.gmma import gmma_fragment_of, make_gmma_atom

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _completions_before(kt, stages):
    """Independent count: how many earlier k-tiles used kt's stage (each use completes full[s] once)."""
    return sum(1 for j in range(kt) if j % stages == kt % stages)


@pytest.mark.parametrize("stages", [2, 3, 4, 7])
def test_parities_from_counting(stages):
    for kt in range(40):
        uses = _completions_before(kt, stages)
        assert P.stage_of(kt, stages) == kt % stages
        assert P.full_parity(kt, stages) == uses % 2          # wait for completion number `uses`
        if P.producer_waits(kt, stages):
            assert P.empty_parity(kt, stages) == (uses - 1) % 2   # the previous use's release
        assert P.producer_waits(kt, stages) == (uses > 0)


def test_mbarrier_model():
    b = P.MBarrier("b", 2)
    assert b.try_wait(1) and not b.try_wait(0)            # a fresh barrier: parity 1 passes at once
    b.arrive(expect_tx=10)
    b.arrive()
    assert not b.try_wait(0)                              # bytes still pending
    assert b.complete_tx(10) and b.phase == 1 and b.try_wait(0) and not b.try_wait(1)


@pytest.mark.parametrize("ktiles,stages,consumers,load,mma", [(8, 4, 2, 1.0, 1.0), (13, 3, 1, 0.4, 1.0),
                                                              (9, 2, 2, 2.0, 0.5), (1, 4, 2, 1.0, 1.0)])
def test_simulation_is_correct(ktiles, stages, consumers, load, mma):
    run = P.simulate_pipeline(ktiles, stages, consumers, load, mma)
    assert run.errors == []
    assert sorted(kt for r, _, _, k, kt in run.intervals if k == "tma") == list(range(ktiles))
    for c in range(consumers):
        assert [kt for r, _, _, k, kt in run.intervals if k == "mma" and r == c + 1] == list(range(ktiles))
    for s in range(stages):
        fulls = [ph for _, name, ph in run.phases if name == f"full[{s}]"]
        assert fulls == list(range(1, len(range(s, ktiles, stages)) + 1))
    # the tensor cores never run two wgmmas at once
    mmas = sorted((a, b) for _, a, b, k, _ in run.intervals if k == "mma")
    assert all(b1 <= a2 for (_, b1), (a2, _) in zip(mmas, mmas[1:]))
    assert run.end == pytest.approx(max(b for _, _, b, k, _ in run.intervals if k == "mma"))


def test_simulation_catches_wrong_parities():
    bad_full = P.simulate_pipeline(8, 4, 2, 0.5, 1.0, full_parity=lambda kt, s: ((kt // s) + 1) & 1)
    assert any("holds nothing" in e for e in bad_full.errors)
    bad_empty = P.simulate_pipeline(8, 2, 2, 0.3, 1.0, empty_parity=lambda kt, s: (kt // s) & 1)
    assert bad_empty.errors


def test_steady_state_is_mma_bound():
    run = P.simulate_pipeline(24, 4, 2, load_time=1.0, mma_time=1.0)
    assert run.end == pytest.approx(1.0 + 24 * 2 * 1.0)      # first load, then the tensor cores never idle


def test_bytes():
    assert P.tma_box_bytes((128, 64), 16) == 128 * 64 * 2
    assert P.expect_tx_bytes([(128, 64), (256, 64)], 16) == 49152
    assert P.empty_arrivals(2) == 8
    with pytest.raises(ValueError):
        P.tma_box_bytes((3,), 4)


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
    from kernels.hopper_results import RECORDED_RUNS, recorded_table
    text = open(os.path.join(ROOT, "benchmarks", "gemm", "RESULTS_HOPPER.md")).read()
    for run in RECORDED_RUNS:
        assert run["date"] in text and run["command"] in text
        for name, ms, tf, ratio in run["rows"]:
            assert any(name.split(" (")[0] in line and f"{ms:.3f}" in line and f"{tf:.1f}" in line
                       and f"{ratio:.2f}" in line for line in text.splitlines()), name
    assert "| cuBLAS fp16->fp32 (torch.mm out_dtype) | 0.189 |" in recorded_table()
    assert "| ws BN128 st4 |" in recorded_table(RECORDED_RUNS[-1])


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
    matplotlib.pyplot.close("all")


def test_recorded_sweeps_are_in_results():
    """Every recorded sweep's rows are lines of RESULTS_HOPPER.md (ms, median ratio and its range)."""
    from kernels.hopper_results import SWEEPS
    text = open(os.path.join(ROOT, "benchmarks", "gemm", "RESULTS_HOPPER.md")).read()
    for sweep in SWEEPS:
        assert sweep["date"] in text and sweep["command"] in text
        for (M, N, K), rows in sweep["sizes"].items():
            for name, (ms, ratio, lo, hi) in rows.items():
                want = "| %dx%dx%d | %s | %.3f |" % (M, N, K, name, ms)
                line = next((ln for ln in text.splitlines() if ln.startswith(want)), None)
                assert line is not None, want
                assert line.endswith("| %.2f | %.2f - %.2f |" % (ratio, lo, hi)), line
