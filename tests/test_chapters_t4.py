"""The chapters as a T4 reader runs them: chapters 5 onward (the ones with a GPU path) and their solution
pages, top to bottom in the simulator under the sm_75 profile (CUTE_PROFILE=sm_75, kernels.runtime), in a
fresh interpreter with tests/run_chapter.py. Every cell must run; what a T4 cannot do is skipped with its reason printed, and the
T4's own path (m16n8k8, copies through registers) is checked against NumPy. The book build runs the same
chapters without a profile. Takes about a minute and a half on two cores.
"""

import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHAPTERS = [p for folder in ("chapters", os.path.join("book", "solutions"))
            for p in sorted(glob.glob(os.path.join(ROOT, folder, "*.ipynb")))
            if int(os.path.basename(p).split("_")[0]) >= 5]


def test_chapters_run_as_on_a_t4():
    env = dict(os.environ, CUTE_PROFILE="sm_75", NUMBA_ENABLE_CUDASIM="1", MPLBACKEND="Agg",
               OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join([ROOT] + [p for p in [env.get("PYTHONPATH")] if p])
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "run_chapter.py"), *CHAPTERS],
                       env=env, cwd=ROOT, capture_output=True, text=True, timeout=1200)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-6000:]
    assert "chapters: %d passed, 0 failed" % len(CHAPTERS) in out
    assert out.count("profile sm_75 (CUTE_PROFILE=sm_75): every capability decision as on a T4") == len(CHAPTERS)
    # chapter 7: the T4's tensor-core step is checked, the two cp.async steps are skipped, saying why
    assert re.search(r"PASS tc sm75 128x128x32, .* vs NumPy", out)
    for step in ("tc sm80 128x128x32 4st", "tc sm80 + k-block prefetch"):
        assert "%s: not checked or measured: it needs mma.m16n8k16.f16 and cp.async (sm_80 or newer)" % step in out
    assert "pipeline_demo is not run: it needs cp.async (sm_80 or newer)" in out
    # chapters 5 and 6: the m16n8k8 kernels run, the m16n8k16 / cp.async ones say why they do not
    assert "PASS m16n8k8 + ldmatrix kernel vs NumPy" in out
    assert "mma_m16n8k16_kernel is not run: it needs mma.m16n8k16.f16 (sm_80 or newer)" in out
    assert "PASS GEMM tile kernel (m16n8k8, LDSM_N/LDSM_T)" in out
    assert "the sm80 path is not run: it needs mma.m16n8k16.f16 and cp.async" in out
    # chapter 8: the Hopper GEMM is not run, its recorded figures are shown
    assert "This is sm_75 (CUDA simulator run as a T4): the Hopper GEMM needs sm_90. Recorded figures follow." in out
