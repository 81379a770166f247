"""Chapter 7's helpers: the recorded H100 figures against the benchmark CSVs, the GEMM article's C++
printouts against the fixture and cutelite, budgets, intensities and occupancy by hand, the exercise
checkers; in the simulator: every step checked
against NumPy, the quotes and the diffs between steps, the instructions a tensor-core step issues per
k-tile and its shared-memory wavefronts against counts worked out by hand, the strict cp.async model and
the broken pipeline."""

import csv
import os

import numpy as np
import pytest

import cpp_fixture

from cutelite import Layout, _, dyn, make_copy_atom, make_tiled_copy, zipped_divide
from cutelite.teach import gemm as tg
from cutelite.teach.exercises import check_budget_answer, check_wait_group_answer
from cutelite.teach.records import load
from kernels.gemm import chapter, pipeline_demo

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "benchmarks", "gemm")


def _row(rec, name):
    """(name, dtype, TFLOP/s, registers) of the record's row `name`."""
    return next(r for r in rec["rows"] if r[0] == name)


def test_recorded_figures_are_the_csvs():
    rec = load("kernels/gemm")
    rows = list(csv.DictReader(open(os.path.join(BENCH, "h100_gemm.csv"))))
    sass = {r["rung"]: r for r in csv.DictReader(open(os.path.join(BENCH, "h100_sass.csv")))}
    for name, dtype, tf, regs in rec["rows"]:
        r = next((r for r in rows if r["rung"] == name and r["M"] == "4096"), None)
        assert r is not None, "records.json's row %r has no 4096^3 row in h100_gemm.csv" % name
        assert r["dtype"] == dtype and abs(float(r["tflops"]) - tf) < 0.05, name
        if regs is not None:
            assert name in sass, "records.json's row %r has registers but no row in h100_sass.csv" % name
            assert int(sass[name]["regs"]) == regs, name
    for shape, tf in rec["ceilings"].items():
        assert abs(float(next(r for r in rows if r["rung"] == "mma.sync ceiling " + shape)["tflops"]) - tf) < 0.05
    assert rec["run"]["date"].split()[0] in open(os.path.join(BENCH, "RESULTS.md")).read()


def test_recorded_stalls_are_well_formed():
    """stalls: name -> {ncu stall reason: value}, for kernels the record has a row for."""
    rec = load("kernels/gemm")
    names = {n for n, *_ in rec["rows"]}
    for name, reasons in rec["stalls"].items():
        assert name in names, name
        assert reasons and all(isinstance(k, str) and k.islower() and " " not in k and float(v) >= 0
                               for k, v in reasons.items()), name
    assert "per issued instruction" in rec["stalls_unit"]


STEP_9, STEP_10, STEP_11 = "tc sm75 128x128x32", "tc sm80 128x128x32 4st", "tc sm80 + k-block prefetch"


def test_recorded_schedule_is_the_kernels_loop():
    """SCHEDULE's loops hold one k-tile's work as the kernels and the H100's SASS counts have it: 64 HMMA a
    k-tile for m16n8k16 (128 for m16n8k8), 16 LDSM, the copies of one stage, one barrier; one distance a
    ldmatrix."""
    rec = load("kernels/gemm")
    sass = {r["rung"]: r for r in csv.DictReader(open(os.path.join(BENCH, "h100_sass.csv")))}
    letters = set("mlcwgs|.")
    for name, s in rec["schedule"].items():
        strip = s["strip"]
        assert set(strip) <= letters and all(c in rec["schedule_legend"] for c in letters - {"."}), name
        assert strip.count("m") == int(sass[name]["HMMA"]) and strip.count("l") == 16 and strip.count("|") == 1
        assert len(s["ldmatrix_to_mma"]) == 16 and all(d > 0 for d in s["ldmatrix_to_mma"])
    assert rec["schedule"][STEP_9]["strip"].count("g") == rec["schedule"][STEP_9]["strip"].count("s") == 8
    for name in (STEP_10, STEP_11):
        assert rec["schedule"][name]["strip"].count("c") == 8 and rec["schedule"][name]["strip"].count("w") == 1


def test_chapter7_prose_is_what_the_record_says():
    """What chapter 7 says in words about steps 6b and 9-11 on the H100 (step 6b, "What holds it back", step 10's and
    step 11's readings, "Why mma.sync cannot reach cuBLAS"), checked against the record it prints."""
    rec = load("kernels/gemm")
    tf = {n: _row(rec, n)[2] for n in (STEP_9, STEP_10, STEP_11)}
    st = {n: rec["stalls"][n] for n in tf}
    assert max(tf, key=tf.get) == STEP_10 and tf[STEP_11] < tf[STEP_10] and tf[STEP_9] < tf[STEP_11]
    top9 = sorted((k for k in st[STEP_9] if k != "selected"), key=lambda k: -st[STEP_9][k])[:2]
    assert top9 == ["wait", "short_scoreboard"]                    # step 9's largest stalls
    change = {k: st[STEP_10][k] - st[STEP_9][k] for k in st[STEP_9]}
    assert min(change, key=lambda k: change[k]) == "short_scoreboard" and change["long_scoreboard"] > 0
    assert st[STEP_9]["short_scoreboard"] > st[STEP_11]["short_scoreboard"] > st[STEP_10]["short_scoreboard"]
    assert st[STEP_11]["barrier"] > st[STEP_10]["barrier"]
    assert st[STEP_11]["wait"] < st[STEP_10]["wait"] and st[STEP_11]["long_scoreboard"] < st[STEP_10]["long_scoreboard"]
    assert _row(rec, STEP_11)[3] > _row(rec, STEP_10)[3]
    loop = {n: rec["schedule"][n] for n in tf}
    n = {k: len(v["strip"]) for k, v in loop.items()}
    assert n[STEP_10] < n[STEP_11] < n[STEP_9]                      # step 11's loop is longer than step 10's
    ahead = {k: min(v["ldmatrix_to_mma"]) for k, v in loop.items()}
    assert ahead[STEP_10] > 10 and ahead[STEP_11] < 10 and ahead[STEP_9] < 10
    s10 = loop[STEP_10]["strip"]
    assert s10.index("|") < s10.index("c") < s10.index("l") < s10.index("m")   # barrier, copies, reads, mma
    s11 = loop[STEP_11]["strip"]
    assert s11.count("m", 0, s11.index("|")) > s11.count("m", s11.index("|"))  # most mma above the barrier
    for a, b in ((STEP_9, STEP_10), (STEP_10, STEP_11)):              # time ~ instructions x stall sum
        predicted = n[b] * sum(st[b].values()) / (n[a] * sum(st[a].values()))
        assert abs(predicted / (tf[a] / tf[b]) - 1) < 0.05, (a, b)
    assert rec["ceilings"]["m16n8k16"] < _row(rec, "cuBLAS fp16->fp32 (torch)")[2]   # below cuBLAS on the H100
    assert _row(rec, "simt 6b: swizzled smem")[2] < _row(rec, "simt 6b: padded smem")[2]  # step 6b's reading


LADDER_CFG, SGEMM_CFG, ONE_CTA_CFG, SMALL_CFG = "128x128x32 4st", "128x128x64 3st", "128x128x32 8st", "64x64x32 4st"
LETTER = {"HMMA": "m", "LDSM": "l", "LDGSTS": "c"}


def _probe_module():
    import importlib.util
    spec = importlib.util.spec_from_file_location("prefetch_probe", os.path.join(BENCH, "prefetch_probe.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)           # no numba at import: it is imported where it runs
    return mod


def test_probe_record_is_the_csvs():
    """PROBE, PROBE_KERNELS and PROBE_STALLS are h200_prefetch_probe.csv and h200_prefetch_stalls.csv, the
    configurations prefetch_probe.py's, the run RESULTS.md's."""
    rec = load("kernels/gemm")
    rows = list(csv.DictReader(open(os.path.join(BENCH, "h200_prefetch_probe.csv"))))
    assert len(rows) == sum(len(kinds) for by_config in rec["probe"].values() for kinds in by_config.values())
    for r in rows:
        got = rec["probe"][int(r["size"])][r["config"]][r["kind"]]
        assert got == tuple(float(r[k]) for k in ("tflops_median", "tflops_min", "tflops_max")), r
        assert rec["probe_kernels"][r["config"]][r["kind"]] == (int(r["regs"]), int(r["ctas_per_sm"])), r
        assert float(r["rel_err"]) < 1e-5                        # each kernel passed its check at 512^3
    stalls = list(csv.DictReader(open(os.path.join(BENCH, "h200_prefetch_stalls.csv"))))
    assert len(stalls) == sum(len(st) for kinds in rec["probe_stalls"].values() for st in kinds.values())
    for r in stalls:
        assert rec["probe_stalls"][r["config"]][r["kind"]][r["reason"]] == float(r["value"]), r
    assert list(_probe_module().CONFIGS) == list(rec["probe_kernels"]) == list(rec["probe"][4096])
    results = open(os.path.join(BENCH, "RESULTS.md")).read()
    assert rec["probe_run"]["date"] in results and "h200_prefetch_probe.csv" in results and "H200" in results


def test_probe_schedule_and_hotspots_are_the_kernels_loops():
    """PROBE_SCHEDULE's loops hold whole k-tiles of each configuration (one barrier and one wait each; per k-tile
    a warp's (BM/2 x BN/2) tile is (BM/32)(BN/16)(BK/16) m16n8k16, (BM/32 + BN/32)(BK/16) ldmatrix.x4, and a
    thread copies (BM + BN) BK / 128 halves, 8 a cp.async); PROBE_HOTSPOTS' instructions are where the loop
    has them, and what they wait for is where it says."""
    import re
    rec = load("kernels/gemm")
    for config, kinds in rec["probe_schedule"].items():
        BM, BN, BK = (int(x) for x in config.split()[0].split("x"))
        for kind, s in kinds.items():
            strip, tiles = s["strip"], s["strip"].count("|")
            assert tiles >= 1 and strip.count("w") == tiles, (config, kind)
            assert strip.count("m") == tiles * (BM // 32) * (BN // 16) * (BK // 16), (config, kind)
            assert strip.count("l") == tiles * (BM // 32 + BN // 32) * (BK // 16) == len(s["ldmatrix_to_mma"])
            assert strip.count("c") == tiles * (BM + BN) * BK // (128 * 8), (config, kind)
            assert all(d > 0 for d in s["ldmatrix_to_mma"])
    assert rec["probe_schedule"][LADDER_CFG]["prefetch"] == rec["schedule"]["tc sm80 + k-block prefetch"]
    for config, kinds in rec["probe_hotspots"].items():
        for kind, spots in kinds.items():
            strip = rec["probe_schedule"][config][kind]["strip"]
            for reason, (i, share, ins, why) in spots.items():
                op = ins.split()[1 if ins.startswith("@") else 0].split(".")[0]
                assert strip[i] == LETTER.get(op, "."), (config, kind, reason)
                assert 0 < share <= 1
                if why:
                    d = int(re.search(r"the (?:LDSM|LDGSTS) (\d+) instructions earlier", why).group(1))
                    assert strip[(i - d) % len(strip)] == ("l" if "LDSM" in why else "c"), (config, kind, reason)


def test_chapter7_probe_prose_is_what_the_record_says():
    """What chapter 7's "When does the read-ahead pay?" says in words, checked against the record it prints."""
    rec = load("kernels/gemm")
    P, st, hot = rec["probe"], rec["probe_stalls"], rec["probe_hotspots"]
    tf = lambda n, c, k: P[n][c][k][0]                                       # noqa: E731
    def apart(n, c):                                        # the two kernels' ranges over the rounds
        (_, lo_a, hi_a), (_, lo_b, hi_b) = P[n][c]["plain"], P[n][c]["prefetch"]
        return hi_a < lo_b or hi_b < lo_a
    for n in P:
        assert tf(n, LADDER_CFG, "prefetch") < tf(n, LADDER_CFG, "plain")            # loses in the ladder's
        assert tf(n, ONE_CTA_CFG, "prefetch") > tf(n, ONE_CTA_CFG, "plain") and apart(n, ONE_CTA_CFG)
        assert tf(n, SGEMM_CFG, "prefetch") > tf(n, SGEMM_CFG, "plain")              # by the medians
        best = max(((c, k) for c in P[n] for k in P[n][c]), key=lambda ck: tf(n, *ck))
        assert best == (SGEMM_CFG, "prefetch")                                         # the probe's fastest
        for k in ("plain", "prefetch"):                                                # eight stages: slower
            assert tf(n, ONE_CTA_CFG, k) < tf(n, LADDER_CFG, k)
    assert tf(8192, SMALL_CFG, "prefetch") > tf(8192, SMALL_CFG, "plain") and apart(8192, SMALL_CFG)
    assert not apart(4096, SMALL_CFG)                                                  # level at 4096^3
    assert rec["probe_kernels"][ONE_CTA_CFG]["plain"][1] == rec["probe_kernels"][ONE_CTA_CFG]["prefetch"][1] == 1
    for c in st:
        assert st[c]["prefetch"]["long_scoreboard"] < st[c]["plain"]["long_scoreboard"]    # falls everywhere
        rises = st[c]["prefetch"]["short_scoreboard"] > st[c]["plain"]["short_scoreboard"]
        assert rises == (c in (LADDER_CFG, SMALL_CFG)), c
    assert max(st, key=lambda c: st[c]["plain"]["short_scoreboard"]) == ONE_CTA_CFG
    for c, kinds in rec["probe_schedule"].items():                       # time ~ instructions x all stalls
        if len(kinds) == 2:
            n = {k: len(s["strip"]) for k, s in kinds.items()}
            predicted = n["prefetch"] * sum(st[c]["prefetch"].values()) / (n["plain"] * sum(st[c]["plain"].values()))
            assert abs(predicted / (tf(4096, c, "plain") / tf(4096, c, "prefetch")) - 1) < 0.05, c
    for c in hot:
        i, share, ins, why = hot[c]["prefetch"]["short_scoreboard"]            # the top of the loop, 3 after
        assert i == 0 and ins.startswith("HMMA") and share > 0.5 and "LDSM 3 instructions" in why
        assert min(rec["probe_schedule"][c]["prefetch"]["ldmatrix_to_mma"]) == 3
        i, share, ins, why = hot[c]["plain"]["long_scoreboard"]                 # the k-tile's first ldmatrix
        strip = rec["probe_schedule"][c]["plain"]["strip"]
        assert ins.startswith("LDSM") and i == strip.index("l") and share > 0.5 and "LDGSTS 2 instructions" in why
    for c in rec["probe_schedule"]:                                       # step 11 issues cp.async among its mma
        s = rec["probe_schedule"][c].get("prefetch", {}).get("strip", "")
        assert not s or "m" in s[s.index("c"):s.rindex("c")]
    offline, gpu = rec["schedule"]["tc sm80 128x128x32 4st"], rec["probe_schedule"][LADDER_CFG]["plain"]
    assert offline != gpu and min(gpu["ldmatrix_to_mma"]) > 10 and min(offline["ldmatrix_to_mma"]) > 10


def _fixture_blocks():
    return {key: text.splitlines() for key, text in cpp_fixture.blocks("seed003_cpp.txt").items()}


def test_article_printouts_are_the_fixture_and_cutelite_agrees():
    b = _fixture_blocks()
    assert tg.ARTICLE_CPP["gA"] == b["gA"][0]
    assert tg.ARTICLE_CPP["thread 0 tAgA"] == b["thread 0 tAgA"][0]
    assert tg.ARTICLE_CPP["thread 0 tAsA"] == b["thread 0 tAsA"][0]
    assert tg.ARTICLE_CPP["thread 17 tAgA offset"] == b["thread 17 tAgA"][1].split()[1]
    assert tg.ARTICLE_CPP["thread 17 tAsA offset"] == b["thread 17 tAsA"][1].split()[1]
    assert tg.ARTICLE_CPP["naive thread 5 tAgA"] == b["naive thread 5 tAgA"][0]
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


def test_article_table_rows():
    tf = {"simt 5: 2-D blocking 8x8": 15.0, "simt 6: 128-bit loads": 30.0}
    rows = tg.article_table_rows(tf)
    assert len(rows) == len(tg.ARTICLE_TABLE) == 6
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
    for ans, words in ((1, "PASS"), (2, "the bug"), (0, "not the largest"), (3, "never waits"), (None, "not answered")):
        ok = check_wait_group_answer(ans, 3, "ex")
        out = capsys.readouterr().out
        assert words in out and ok == (ans == 1), (ans, out)


def test_figures_draw():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    ax = tg.draw_ladder([("a", 1.0, "f32"), ("b", None, "f16", "not in the recorded run"), ("c", 200.0, "f16")],
                        {"f32": 50, "f16": None}, highlight="c", ceiling=600, title="t")
    assert len(ax.patches) == 2 and "not in the recorded run" in [t.get_text() for t in ax.texts]
    ax = tg.draw_roofline([("a", 0.25, 1.0, "o"), ("b", 20.0, None, "^")], 3.0, None, {"cuBLAS": 700.0})
    assert len(ax.lines) >= 3
    plt.close("all")


# ---- in the simulator ----------------------------------------------------------------------------------
in_simulator = pytest.mark.numba("simulator")
STEP_NAMES = [s.name for s in chapter.LADDER]


@in_simulator
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
    if s.span[0]:
        assert s.span[0] in body.splitlines()[0] and s.span[1] in body.splitlines()[-1]


@in_simulator
@pytest.mark.parametrize("name", [s.name for s in chapter.EXPLORE])
def test_every_explored_configuration_checks(name):
    """check_run runs an EXPLORE step's own configuration (its BK, stages and launch bounds; 64x64 CTA tiles in
    the simulator), not its module's BEST, against NumPy."""
    s = chapter.step(name)
    twin = chapter._sim_twin(s)
    assert (twin.tile[2], twin.config["stages"], twin.min_blocks) == (s.config["BK"], s.config["stages"],
                                                                     s.config["min_blocks"])
    C, want, what = chapter.check_run(s)
    assert np.all(np.isfinite(C)) and np.max(np.abs(C - want)) < 1e-3 * max(1.0, np.abs(want).max()), what


@in_simulator
def test_bench_in_the_simulator_is_the_record():
    import kernels
    b = chapter.Bench(kernels.setup(verbose=False))
    record = load("kernels/gemm")
    assert not b.live and record["run"]["date"] in b.source and chapter.RECORD == record
    row = {n: tf for n, _, tf, _ in record["rows"]}
    assert b.measure(chapter.LADDER[0]) == row.get(chapter.LADDER[0].recorded)
    assert b.baseline == {d: row.get(n) for d, n in chapter.BASELINE_NAMES.items()}
    assert b.ceiling("m16n8k16") == record["ceilings"].get("m16n8k16")
    assert [r[0] for r in b.chart_rows()] == ["simt 1: naive"]
    assert b.measure("tc sm80 pf 128x128x64 3st") is None or "tc sm80 pf 128x128x64 3st" in row
    assert chapter.compiled_resources(chapter.LADDER[0].kernel.numba) is None      # nothing compiled here
    name, _, tf, regs = record["rows"][-1]
    assert chapter.recorded(name) == tf and chapter.recorded_regs(name) == regs and chapter.recorded("nope") is None
    with pytest.raises(KeyError, match="no step"):
        chapter.step("simt 99")


@in_simulator
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


@in_simulator
def test_pipeline_demo_right_and_broken():
    rng = np.random.default_rng(2)
    A = rng.standard_normal((32, 48)).astype(np.float32)
    B = rng.standard_normal((48, 32)).astype(np.float32)
    good = pipeline_demo.run(A, B)
    assert np.max(np.abs(good - A @ B)) < 1e-4
    assert np.max(np.abs(pipeline_demo.run(A, B, wait=0) - A @ B)) < 1e-4
    # A wrong WAIT leaves k-tile kt in flight while it is read. Which other threads' copies land before a
    # reader reads them depends on the simulator's thread schedule; but thread 0 reads A(0, 0:4), which it
    # copied itself and lands only at its own next wait: C(0, 0) is NaN under every schedule.
    assert np.isnan(pipeline_demo.run(A, B, wait=2)[0, 0])
    # A's and B's copies as two groups a k-tile: 2 * (STAGES - 2) groups may stay in flight, one more leaves
    # k-tile kt's B group pending (every output reads B)
    for wait in (1, 2):
        assert np.max(np.abs(pipeline_demo.run(A, B, wait=wait, groups=2) - A @ B)) < 1e-4
    assert np.isnan(pipeline_demo.run(A, B, wait=3, groups=2)[0, 0])
    with pytest.raises(ValueError, match="multiples of 32"):
        pipeline_demo.run(A[:, :44], B[:44])
    with pytest.raises(ValueError, match="groups must be 1 or 2"):
        pipeline_demo.make_kernel(1, groups=3)


@in_simulator
@pytest.mark.parametrize("majors", [("K", "MN"), ("MN", "K")])
def test_tensor_core_smem_tiles_are_conflict_free_for_ldmatrix(majors):
    """Every ldmatrix.x4 of every warp, at every k-block, reads its 4 matrices in 4 wavefronts (the ideal):
    the swizzles of kernels.gemm.tensorcore do their job for the rungs' own partitions."""
    from cutelite import cosize, make_tensor, size
    from cutelite.bank_conflicts import ldmatrix_wavefronts
    from kernels.gemm import tensorcore
    o = tensorcore.objects(128, 128, 32, 1, (2, 2), "sm80", "float16", majors)
    for copy, smem in ((o.s2r_A, o.sA), (o.s2r_B, o.sB)):
        tile = smem(_, _, 0)                              # one stage: a swizzled (MN, BK) layout
        offsets = make_tensor(np.arange(cosize(tile)), tile)  # its elements are their own offsets
        parts = [copy.get_slice(t).partition_S(offsets) for t in range(o.threads)]
        for w in range(o.threads // 32):
            for i in range(size(parts[0], 1)):
                for k in range(size(parts[0], 2)):     # value 0 of each call (a lane's row), in bytes
                    rows = [int(parts[32 * w + lane](0, i, k)) * 2 for lane in range(32)]
                    assert ldmatrix_wavefronts(rows).wavefronts == 4, (w, i, k)


@in_simulator
def test_fastest_and_recorded_change(capsys):
    results = {"a": (1.0, "measured"), "b": (None, "needs a newer GPU"), "c": (3.0, "recorded")}
    assert chapter.fastest(results) == "c" and chapter.fastest(results, ["a", "b"]) == "a"
    assert chapter.fastest(results, ["b"]) is None and chapter.fastest({}) is None
    got = chapter.recorded_change(STEP_10, STEP_11)
    out = capsys.readouterr().out
    assert got["short_scoreboard"] == (chapter.RECORD["stalls"][STEP_10]["short_scoreboard"],
                                       chapter.RECORD["stalls"][STEP_11]["short_scoreboard"])
    assert "%.1f ->  %.1f" % (chapter.recorded(STEP_10), chapter.recorded(STEP_11)) in out
    assert "2 (8) ->  2 (8)" in out                         # 212 and 230 registers: both 2 CTAs of 4 warps
    got = chapter.loop_schedule([STEP_10, STEP_11])
    assert got == {n: (len(chapter.RECORD["schedule"][n]["strip"]), min(chapter.RECORD["schedule"][n]["ldmatrix_to_mma"]))
                   for n in (STEP_10, STEP_11)}


@in_simulator
def test_prefetch_probe_hotspots_and_schedules_print_the_record(capsys):
    P = chapter.RECORD["probe"]
    ratios = chapter.prefetch_probe()
    out = capsys.readouterr().out
    assert ratios == {(n, c): P[n][c]["prefetch"][0] / P[n][c]["plain"][0] for n in P for c in P[n]}
    for (n, c), r in ratios.items():
        (a, lo_a, hi_a), (b, lo_b, hi_b) = P[n][c]["plain"], P[n][c]["prefetch"]
        overlap = not (hi_a < lo_b or hi_b < lo_a)
        line = next(ln for ln in out.splitlines() if ln.startswith(c))
        assert "%.1f -> %.1f" % (a, b) in line and "%.2f%s" % (r, "~" if overlap else " ") in line + " ", (n, c)
    assert "fastest at 4096^3: 128x128x64 3st, step 11" in out and chapter.RECORD["probe_run"]["device"] in out
    assert "114.5 -> ?" in out                       # 64x64: two k-tiles a loop, step 11's SASS not recorded
    chapter.probe_hotspots()
    out = capsys.readouterr().out
    for kinds in chapter.RECORD["probe_hotspots"].values():
        for spots in kinds.values():
            for i, share, ins, why in spots.values():
                assert "%3.0f%% on instruction %d of" % (100 * share, i) in out and ins in out
                assert (why or "waits on no register") in out
    assert chapter.compare_schedules() == {"tc sm80 128x128x32 4st": False, "tc sm80 + k-block prefetch": True}
    assert "the same loop" in capsys.readouterr().out


def test_recorded_change_prints_the_same_text_under_any_hash_seed():
    """Stall reasons that changed by the same amount come in the record's order, not a set's (whose order
    moves with PYTHONHASHSEED): the chapter prints the same text on every run."""
    import subprocess
    import sys
    code = ("from kernels.gemm import chapter; chapter.recorded_change(%r, %r); chapter.recorded_change(%r, %r)"
            % (STEP_9, STEP_10, STEP_10, STEP_11))            # 9 -> 10 has reasons that did not change at all
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env=dict(os.environ, PYTHONHASHSEED=str(seed))).stdout for seed in range(6)}
    assert len(outs) == 1, outs


@in_simulator
def test_intensities_of_steps():
    d, g, s = chapter.intensities(chapter.step("simt 1: naive"))
    assert g == 0.25 and s is None
    d, g, s = chapter.intensities(chapter.step("tc sm80 + k-block prefetch"))
    assert g == 64.0 and abs(s - 64 * 64 / 128) < 1e-12


@in_simulator
def test_occupancy_by_hand():
    occupancy = chapter.occupancy
    # 128 registers x 32 lanes = 4096 a warp: 16 warps = 4 CTAs of 4; shared 228 KiB / (64 + 1) KiB = 3 CTAs
    assert occupancy(128, 128, 65536) == (3, 12, "shared memory")
    # 255 registers round up to 256 a lane, 8192 a warp: 8 warps = 2 CTAs; shared: 228 / 33 = 6
    assert occupancy(255, 128, 32768) == (2, 8, "registers")
    # one-warp CTAs: 32 CTAs an SM at most
    assert occupancy(16, 32, 0) == (32, 32, "CTAs")


@in_simulator
def test_changes_show_code_not_comments():
    a, b = chapter.step("tc sm80 128x128x32 4st"), chapter.step("tc sm80 + k-block prefetch")
    assert chapter.changes(a, a).count("\n") == 0                      # the header alone
    d = chapter.changes(a, b)
    lines = d.splitlines()
    assert any(ln.startswith("+            read_fragments((kb + 1) % k_blocks, read)    # k-block kb + 1")
               for ln in lines)                          # a line of b's, shown with its comment
    assert any(ln.startswith("-        assign(read, (read + 1) % stages)") for ln in lines)
    # tCrA's line differs between the files only in its comment: not a change
    assert not any("tCrA = thr_mma.partition_fragment_A" in ln for ln in lines)
    files = {sign: open(os.path.join(ROOT, "kernels", "gemm", st.module.__name__.rsplit(".", 1)[1] + ".py"))
             .read().splitlines() for sign, st in (("-", a), ("+", b))}
    for n, ln in enumerate(lines):                       # every hunk's line numbers point at its lines
        if ln.startswith("@@"):
            for rng in ln.split()[1:3]:
                sign = rng[0]
                first, count = (int(x) for x in (rng[1:].split(",") + ["1"])[:2])
                shown = [x[1:] for x in lines[n + 1:] if x[:1] == sign][:count]
                assert shown == files[sign][first - 1:first - 1 + count], ln


@in_simulator
def test_instruction_mix_per_k_tile_by_hand():
    """128x128x32 CTA tiles, 2x2 warps of 64x64, 128 threads: per k-tile a thread copies (128 x 32) / 128 =
    32 halves of A and of B, 8 halves a 16-byte instruction: 4 + 4; a warp's 64x64 tile is 4 m16 x 8 n8
    atoms, times 32 / 16 k-blocks of m16n8k16 (32 / 8 of m16n8k8); ldmatrix.x4 covers 16 x 16 halves: A
    (64 / 16) x (32 / 16), B the same."""
    mix = {s: chapter.instruction_mix(chapter.step(s).kernel) for s in
           ("tc sm75 128x128x32", "tc sm80 128x128x32 4st", "tc sm80 + k-block prefetch")}
    for s in ("tc sm80 128x128x32 4st", "tc sm80 + k-block prefetch"):
        assert mix[s]["cp_async_cg_16"] == 8 and mix[s]["mma_m16n8k16_f32_f16"] == 4 * 8 * 2, s
        assert mix[s]["ldmatrix_x4"] == mix[s]["ldmatrix_x4_trans"] == 4 * 2, s
        assert mix[s]["cp_async_wait"] == mix[s]["cuda.syncthreads"] == mix[s]["cp_async_commit"] == 1, s
    m = mix["tc sm75 128x128x32"]
    assert m["ld_global_v4_b32"] == m["st_shared_v4_b32"] == 8 and m["mma_m16n8k8_f32_f16"] == 4 * 8 * 4
    assert "cp_async_cg_16" not in m and m["cuda.syncthreads"] == 1


@in_simulator
@pytest.mark.parametrize("arch", ["sm75", "sm80"])
def test_smem_wavefronts_by_hand(arch):
    """Per warp and k-tile: 4 16-byte writes of A and of B (32 halves a thread), 8 ldmatrix.x4 of each (see
    above), every one at its ideal when swizzled. Without the swizzle, A's K-major rows are 64 bytes apart,
    so the 8 rows of one 8x8 matrix fall in 2 groups of 4 banks' rows: rows r, r+2, r+4, r+6 collide, 4-way;
    B's N-major rows (8 halves of N) are 64 halves = 128 bytes apart along K: all 8 in the same banks, 8-way.
    The writes are whole 128-byte rows either way: no conflict."""
    from kernels.gemm import tensorcore
    o = tensorcore.objects(128, 128, 32, 2, (2, 2), arch)
    sw, plain = chapter.smem_wavefronts(o), chapter.smem_wavefronts(o, swizzled=False)
    for op in "AB":
        assert sw[op + ": 16-byte writes"] == plain[op + ": 16-byte writes"] == (4, 16, 16)
        assert sw[op + ": ldmatrix"] == (8, 32, 32)
    assert plain["A: ldmatrix"] == (8, 4 * 32, 32) and plain["B: ldmatrix"] == (8, 8 * 32, 32)


@in_simulator
def test_limits_prints_the_record_or_not_recorded(capsys, monkeypatch):
    name = "tc sm80 + k-block prefetch"
    monkeypatch.setitem(chapter.RECORD, "stalls", {})
    chapter.limits([name])
    out = capsys.readouterr().out
    assert "stall reasons" in out and "not recorded" in out
    monkeypatch.setitem(chapter.RECORD, "stalls", {name: {"barrier": 0.5, "short_scoreboard": 2.25, "wait": 1.0}})
    chapter.limits([name], top=2)
    out = capsys.readouterr().out.splitlines()
    rows = [ln.split() for ln in out if ln.startswith("  ") and ln.split()[-1][0].isdigit()]
    assert rows == [["short_scoreboard", "2.25"], ["wait", "1.00"]]        # the top 2, largest first
