"""Chapter 7's helpers: the recorded H100 figures against the benchmark CSVs, the seed 003 C++ printouts
against the fixture and cutelite, budgets and intensities by hand, the ldmatrix bank costs, the exercise
checkers; in the simulator (a subprocess when this process is not in simulator mode): every step checked
against NumPy, the quotes, the strict cp.async model and the broken pipeline, the TiledMMA/TiledCopy that
the tensor-core kernels' index maps are."""

import csv
import os

import numpy as np
import pytest

from cutelite import Layout, _, dyn, make_copy_atom, make_tiled_copy, swizzle_for, zipped_divide
from cutelite.teach import gemm as tg
from cutelite.teach.exercises import check_budget_answer, check_wait_group_answer
from kernels._testing import numba_mode, run_in_subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "benchmarks", "gemm")
FIXTURE = os.path.join(ROOT, "tests", "fixtures", "seed003_cpp.txt")


def _recorded_module():
    import importlib.util
    spec = importlib.util.spec_from_file_location("recorded", os.path.join(ROOT, "kernels", "gemm", "recorded.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)           # no numba needed: the module is plain data
    return mod


def test_recorded_figures_are_the_csvs():
    rec = _recorded_module()
    rows = list(csv.DictReader(open(os.path.join(BENCH, "h100_gemm.csv"))))
    sass = {r["rung"]: r for r in csv.DictReader(open(os.path.join(BENCH, "h100_sass.csv")))}
    for name, dtype, tf, regs in rec.ROWS:
        r = next(r for r in rows if r["rung"] == name and r["M"] == "4096")
        assert r["dtype"] == dtype and abs(float(r["tflops"]) - tf) < 0.05, name
        if regs is not None:
            assert int(sass[name]["regs"]) == regs, name
    for shape, tf in rec.CEILINGS.items():
        assert abs(float(next(r for r in rows if r["rung"] == "mma.sync ceiling " + shape)["tflops"]) - tf) < 0.05
    assert rec.RUN["date"].split()[0] in open(os.path.join(BENCH, "RESULTS.md")).read()
    assert rec.recorded("tc sm80 + k-block prefetch") == 370.7 and rec.recorded("nope") is None


def _fixture_blocks():
    blocks, key = {}, None
    for ln in open(FIXTURE).read().splitlines():
        if ln.startswith("== "):
            key = ln[3:]
            blocks[key] = []
        else:
            blocks[key].append(ln)
    return blocks


def test_seed003_recorded_text_is_the_fixture_and_cutelite_agrees():
    b = _fixture_blocks()
    assert tg.SEED003_CPP["gA"] == b["gA"][0]
    assert tg.SEED003_CPP["thread 0 tAgA"] == b["thread 0 tAgA"][0]
    assert tg.SEED003_CPP["thread 0 tAsA"] == b["thread 0 tAsA"][0]
    assert tg.SEED003_CPP["thread 17 tAgA offset"] == b["thread 17 tAgA"][1].split()[1]
    assert tg.SEED003_CPP["thread 17 tAsA offset"] == b["thread 17 tAsA"][1].split()[1]
    assert tg.SEED003_CPP["naive thread 5 tAgA"] == b["naive thread 5 tAgA"][0]
    tc = make_tiled_copy(make_copy_atom("UniversalCopy<uint128_t>", "float"), Layout((16, 4)), Layout((4, 1)))
    assert str(tc).rstrip() == "\n".join(b["tiled_copy"]).rstrip()
    A = Layout((dyn(1024), dyn(8192)), (1, dyn(1024)))
    gA = zipped_divide(A, (64, 16))((_, _), (0, _))
    sA = Layout((64, 16), (1, 64))
    assert str(gA) == b["gA"][0]
    for t in (0, 1, 17, 63):
        thr = tc.get_slice(t)
        assert str(thr.partition_S(gA)) == b["thread %d tAgA" % t][0]
        assert str(thr.partition_D(sA)) == b["thread %d tAsA" % t][0]


def test_budgets_and_intensities_by_hand():
    assert tg.tile_budget(128, 128, 32, 3, 256) == (3 * (128 * 32 + 32 * 128) * 2, 128 * 128 // 256)
    assert tg.tile_budget(128, 64, 32, 4, 128) == (49152, 64)
    assert tg.tile_budget(128, 128, 8, 2, 256, in_bytes=4) == (2 * 2 * 1024 * 4, 64)
    assert tg.ai_global(1, 1, 4) == 0.25                      # 2 FLOPs per 8 bytes
    assert tg.ai_global(128, 128, 2) == 64.0                   # 2*128*128 / (256*2)
    assert tg.ai_shared(8, 8, 4) == 2.0
    assert abs(tg.ai_shared(64, 32, 2) - 64 * 32 / 96) < 1e-12
    assert tg.ai_dram(4096, 4096, 4096, 2) == 2 * 4096 ** 3 / (2 * 4096 ** 2 * 2 + 4096 ** 2 * 4)


def test_ldmatrix_tile_cost():
    cost = tg.ldmatrix_tile_cost(128, 32)
    plain = cost(None)       # 64-byte rows: rows r and r + 2 share bank group; 4 rows a group per matrix
    assert (plain.wavefronts, plain.ideal) == (16, 4)
    assert cost(swizzle_for(32, 2)).conflicts == 0
    from cutelite import Swizzle
    assert cost(Swizzle(1, 3, 3)).conflicts > 0          # one row bit: rows r and r + 4 still collide


def test_seed_table_rows():
    tf = {"simt 5: 2-D blocking 8x8": 15.0, "simt 6: 128-bit loads": 30.0}
    rows = tg.seed_table_rows(tf)
    assert len(rows) == len(tg.SEED003_TABLE) == 6
    assert rows[0][3:] == (15.0, "simt 6: 128-bit loads", 30.0, 2.0)
    assert rows[1][2:5] == ("simt 6: 128-bit loads", 30.0, "simt 6b: padded smem") and rows[1][6] is None
    assert rows[2][6] is None


def test_checkers(capsys):
    exp = tg.tile_budget(128, 64, 32, 4, 128)
    a_bytes = 4 * 128 * 32 * 2
    for ans, words in ((None, "not answered yet"), (exp, "PASS"), ((exp[0] // 2, exp[1]), "counts elements"),
                       ((exp[0] // 4, exp[1]), "one stage"), ((a_bytes, exp[1]), "A tiles only"),
                       ((exp[0] - a_bytes, exp[1]), "B tiles only"), ((exp[0], 32 * exp[1]), "per warp"),
                       ((exp[0], exp[1] // 2), "f32"), ([exp[0], exp[1]], "PASS")):
        ok = check_budget_answer(ans, exp, 4, a_bytes, "ex")
        out = capsys.readouterr().out
        assert words in out and ok == (words == "PASS"), (ans, out)
    for ans, words in ((1, "PASS"), (2, "the bug"), (0, "no longer overlap"), (3, "never waits"), (None, "not answered")):
        ok = check_wait_group_answer(ans, 3, "ex")
        out = capsys.readouterr().out
        assert words in out and ok == (ans == 1), (ans, out)


def test_figures_draw():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    ax = tg.draw_ladder([("a", 1.0, "f32"), ("b", None, "f16"), ("c", 200.0, "f16")], {"f32": 50, "f16": None},
                        highlight="c", ceiling=600, title="t")
    assert len(ax.patches) == 2
    ax = tg.draw_roofline([("a", 0.25, 1.0, "o"), ("b", 20.0, None, "^")], 3.0, None, {"cuBLAS": 700.0})
    assert len(ax.lines) >= 3
    plt.close("all")


# ---- in the simulator ----------------------------------------------------------------------------------
IN_SIM = numba_mode(simulator=True)
here = pytest.mark.skipif(not IN_SIM, reason="numba is not in simulator mode in this process: "
                          "test_chapter_simulator_suite_in_subprocess ran these")


@pytest.mark.skipif(IN_SIM, reason="ran in this process")
def test_chapter_simulator_suite_in_subprocess():
    rc, out = run_in_subprocess(__file__, simulator=True)
    assert rc == 0, out[-4000:]


if IN_SIM:
    from kernels.gemm import chapter, pipeline_demo
    STEP_NAMES = [s.name for s in chapter.STEPS]
else:
    STEP_NAMES = []


@here
@pytest.mark.parametrize("name", STEP_NAMES)
def test_every_step_checks_and_quotes(name):
    s = chapter.step(name)
    C, want, what = chapter.check_run(s)
    assert np.all(np.isfinite(C)) and np.max(np.abs(C - want)) < 1e-3 * max(1.0, np.abs(want).max()), what
    q = chapter.quote(s)
    head, body = q.split("\n", 1)
    assert head.startswith("# kernels/gemm/") and len(body.splitlines()) <= (100 if s.dtype == "f16" else 30)
    src = open(os.path.join(ROOT, head.split()[1].rstrip(","))).read().splitlines()
    a, b = (int(x) for x in head.rsplit(" ", 1)[1].split("-"))
    assert [ln.strip() for ln in src[a - 1:b]] == [ln.strip() for ln in body.splitlines()]
    if s.start:
        assert s.start in body.splitlines()[0] and s.stop in body.splitlines()[-1]


@here
def test_bench_in_the_simulator_is_the_record():
    import kernels
    b = chapter.Bench(kernels.setup(verbose=False))
    assert not b.live and "recorded 2026-11-25" in b.source
    assert b.measure(chapter.STEPS[0]) == 0.5 and b.measure("simt 8: unrolled k, padded A^T") == 44.9
    assert b.baseline == {"f32": 51.7, "f16": 737.5} and b.ceiling("m16n8k16") == 655.7
    assert [r[0] for r in b.chart_rows()] == ["simt 1: naive"]
    assert chapter.compiled_resources(chapter.STEPS[0].rung.kernel.numba) is None      # nothing compiled here
    assert all(r.name not in {s.name for s in chapter.STEPS} for r in chapter.later_rungs())
    with pytest.raises(KeyError, match="no step"):
        chapter.step("simt 99")


@here
def test_strict_cp_async_model():
    m = pipeline_demo.StrictCpAsync()
    src, dst = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    m.copy16(dst, 0, src, 4)
    m.commit()
    m.copy16(dst, 4, src, 0)
    m.commit()
    assert np.isnan(dst).all()              # nothing has landed: the destination is undefined
    m.wait(1)
    assert list(dst[:4]) == [4, 5, 6, 7] and np.isnan(dst[4:]).all()
    m.wait(0)
    assert list(dst[4:]) == [0, 1, 2, 3]


@here
def test_pipeline_demo_right_and_broken():
    rng = np.random.default_rng(2)
    A = rng.standard_normal((32, 48)).astype(np.float32)
    B = rng.standard_normal((48, 32)).astype(np.float32)
    good = pipeline_demo.run(A, B)
    assert np.max(np.abs(good - A @ B)) < 1e-4
    assert np.max(np.abs(pipeline_demo.run(A, B, wait=0) - A @ B)) < 1e-4
    assert np.isnan(pipeline_demo.run(A, B, wait=2)).all()
    with pytest.raises(ValueError, match="multiples of 32"):
        pipeline_demo.run(A[:, :44], B[:44])


@here
@pytest.mark.parametrize("a_kmajor,b_kmajor", [(True, False), (False, True)])
def test_tensor_core_smem_tiles_are_conflict_free_for_ldmatrix(a_kmajor, b_kmajor):
    """Every ldmatrix.x4 of every warp, at every k-block, reads its 4 matrices in 4 wavefronts (the ideal):
    the swizzles of kernels.gemm.tensorcore do their job for the rungs' own partitions."""
    from cutelite import cosize, make_tensor, size
    from cutelite.bank_conflicts import ldmatrix_wavefronts
    from kernels.gemm import tensorcore
    o = tensorcore.objects(128, 128, 32, 1, (2, 2), "sm80", "float16", a_kmajor, b_kmajor)
    for copy, smem in ((o.s2r_A, o.sA), (o.s2r_B, o.sB)):
        tile = smem(_, _, 0)                              # one stage: a swizzled (MN, BK) layout
        offsets = make_tensor(np.arange(cosize(tile)), tile)  # its elements are their own offsets
        parts = [copy.get_slice(t).partition_S(offsets) for t in range(o.threads)]
        for w in range(o.threads // 32):
            for i in range(size(parts[0], 1)):
                for k in range(size(parts[0], 2)):     # value 0 of each call (a lane's row), in bytes
                    rows = [int(parts[32 * w + lane](0, i, k)) * 2 for lane in range(32)]
                    assert ldmatrix_wavefronts(rows).wavefronts == 4, (w, i, k)


@here
def test_intensities_of_steps():
    d, g, s = chapter.intensities(chapter.step("simt 1: naive"))
    assert g == 0.25 and s is None
    d, g, s = chapter.intensities(chapter.step("tc sm80 + k-block prefetch"))
    assert g == 64.0 and abs(s - 64 * 64 / 128) < 1e-12
