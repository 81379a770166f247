"""The capability profile in the simulator: kernels.setup(profile="sm_75") decides everything as on a T4 (the
PTX ISA's targets: cp.async and m16n8k16 need sm_80, wgmma sm_90a), the simulator's stand-ins refuse what a
T4 lacks, matmul takes the T4's kernel, and chapter 7's bench skips the cp.async steps with the reason.
"""

import numpy as np
import pytest

pytestmark = pytest.mark.numba("simulator")


@pytest.fixture
def t4(monkeypatch, capsys):
    """The sm_75 profile for one test, then none again; yields the banner."""
    import kernels
    monkeypatch.delenv("CUTE_PROFILE", raising=False)
    info = kernels.setup(profile="sm_75")
    yield info, capsys.readouterr().out
    kernels.setup(verbose=False)


def test_sm75_profile_decides_as_a_t4(t4):
    import kernels
    from kernels import gemm
    info, banner = t4
    assert "profile sm_75 (setup(profile='sm_75')): every capability decision as on a T4" in banner
    assert info.simulator and info.cc == (7, 5) == kernels.current_cc() and info.label == "CUDA simulator run as a T4"
    for name in ("cp.async", "mma.m16n8k16.f16", "mma.m16n8k8.bf16", "wgmma", "cp.async.bulk.tensor", "setmaxnreg"):
        assert not kernels.supports(name)
    assert kernels.supports("ldmatrix") and kernels.supports("mma.m16n8k8.f16")
    assert kernels.best_mma_for(kernels.current_cc()) == "m16n8k8"
    with pytest.raises(kernels.CapabilityError, match=r"cp.async needs sm_80 or newer, but the target is CUDA "
                                                      r"simulator run as a T4 \(sm_75\)"):
        kernels.require("cp.async")
    assert kernels.why_not("ldmatrix", "mma.m16n8k8.f16") is None
    assert kernels.why_not("cp.async") == "needs cp.async (sm_80 or newer); this is CUDA simulator run as a T4 (sm_75)"
    assert gemm.step("tc sm75 128x128x32").runs_on(info.cc)
    assert not gemm.step("tc sm80 128x128x32 4st").runs_on(info.cc)


def test_no_profile_runs_everything(monkeypatch):
    import kernels
    monkeypatch.delenv("CUTE_PROFILE", raising=False)
    info = kernels.setup(verbose=False)
    assert info.cc is None and info.profile is None and kernels.current_cc() is None
    assert kernels.supports("cp.async") and kernels.supports("wgmma") and kernels.why_not("cp.async") is None


def test_unknown_profile_is_refused():
    import kernels
    with pytest.raises(ValueError, match="profile: unknown 'sm_70'; known: sm_75, sm_80, sm_89, sm_90"):
        kernels.setup(profile="sm_70")


def test_twins_refuse_what_a_t4_lacks(t4):
    from kernels.instructions import selftest
    run = lambda name: selftest.run_all([name], cc=None)[0]      # noqa: E731  (cc=None: run, do not skip)
    for name, need in (("cp.async 4/8/16 B, commit, wait_group", "cp.async"),
                       ("mma SM80_16x8x16_F32F16F16F32_TN", "mma.m16n8k16.f16")):
        r = run(name)
        assert not r.ok and "CapabilityError" in r.note and "%s needs sm_80" % need in r.note, r.note
    assert run("mma SM75_16x8x8_F32F16F16F32_TN").ok and run("ldmatrix SM75_U32x4_LDSM_N").ok


def test_matmul_takes_the_t4_kernel(t4):
    from kernels.lib import describe, matmul
    from kernels.lib.matmul import pick
    from cutelite.numeric import BFloat16
    for dtype, family, element in ((np.float16, "tc_sm75", None), (np.float32, "simt", None),
                                   (np.uint16, "simt", BFloat16)):
        x = describe(np.zeros((8, 8), dtype), "A", dtype=element)
        assert pick("auto", x, x, None).name == family                  # the profile's GPU: a T4
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((64, 32)).astype(np.float16), rng.standard_normal((32, 64)).astype(np.float16)
    np.testing.assert_allclose(matmul(a, b), a.astype(np.float64) @ b.astype(np.float64), rtol=1e-3, atol=1e-3)


def test_chapter7_bench_as_a_t4(t4, capsys):
    import matplotlib
    matplotlib.use("Agg")
    from cutelite.teach.gemm import draw_roofline
    from kernels.gemm import chapter
    bench = chapter.Bench(t4[0], progress=False)
    s9, s10 = chapter.step("tc sm75 128x128x32"), chapter.step("tc sm80 128x128x32 4st")
    assert bench.why_not(s9) is None
    assert bench.why_not(s10) == ("needs mma.m16n8k16.f16 and cp.async (sm_80 or newer); this is CUDA simulator "
                                  "run as a T4 (sm_75)")
    chapter.climb(bench, s10)                       # neither checked nor measured: no CapabilityError
    assert "tc sm80 128x128x32 4st: not checked or measured: it needs" in capsys.readouterr().out
    assert bench.results[s10.name] == (None, "needs sm_80")
    for s in chapter.LADDER:
        bench.measure(s)
    # the fastest step a T4 can run, by the recorded H100 figures
    runs = {s.name for s in chapter.LADDER if "cp.async" not in s.needs}
    assert chapter.fastest(bench.results, [s.name for s in chapter.LADDER]) == max(
        (tf, n) for n, _, tf, _ in chapter.RECORD["rows"] if n in runs)[1]
    assert bench.ceiling("m16n8k16") is None and "no m16n8k16 ceiling" in capsys.readouterr().out
    assert bench.ceiling("m16n8k8") == chapter.RECORD["ceilings"]["m16n8k8"]
    ax = draw_roofline([], 3.35, 33.5, {"mma.sync m16n8k16 ceiling": None, "cuBLAS fp16": 737.5})
    assert "mma.sync m16n8k16 ceiling: no figure" in [t.get_text() for t in ax.get_legend().get_texts()]


def test_fastest_step_without_a_profile_is_the_fastest_recorded(monkeypatch):
    import kernels
    from kernels.gemm import chapter
    monkeypatch.delenv("CUTE_PROFILE", raising=False)
    bench = chapter.Bench(kernels.setup(verbose=False), progress=False)
    for s in chapter.LADDER:
        bench.measure(s)
    names = {s.name for s in chapter.LADDER}
    assert chapter.fastest(bench.results, names) == max((tf, n) for n, _, tf, _ in chapter.RECORD["rows"]
                                                        if n in names)[1]
