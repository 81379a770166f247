"""Chapters 5 onward on a real GPU run as a T4 (CUTE_PROFILE=sm_75): the T4 path's kernels executed on hardware.

    python benchmarks/t4_profile.py [--profile sm_75] [chapters ...]      # default: chapters/05_* onward

First a probe, in its own interpreter: kernels.setup() under the profile, and a kernel compiled now must
target the profile (its PTX says `.target sm_75`). Then each chapter runs top to bottom in its own interpreter
(tests/run_chapter.py, which needs IPython and ipywidgets). Prints one line a chapter (pass or fail, seconds,
PASS lines, the skips it printed) and ends with 'N passed, N failed'; the exit status is the number of
failures.
"""

import argparse
import glob
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROBE = """
import kernels
info = kernels.setup()
assert not info.simulator, "no GPU here: this script is for a GPU machine"
from numba import cuda
import numpy as np
@cuda.jit
def one(x):
    x[0] = 1.0
x = cuda.device_array(1, np.float32)
one[1, 1](x)
ptx = "".join(one.inspect_asm().values())
target = next(ln.split()[1] for ln in ptx.splitlines() if ln.startswith(".target"))
print("probe: %s, current_cc %s, a kernel compiled now targets %s" % (info.label, kernels.current_cc(), target))
assert target == info.sm, "the profile did not reach Numba"
"""


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="sm_75")
    parser.add_argument("chapters", nargs="*")
    args = parser.parse_args(argv)
    chapters = args.chapters or [p for p in sorted(glob.glob(os.path.join(ROOT, "chapters", "*.ipynb")))
                                 if int(os.path.basename(p).split("_")[0]) >= 5]
    env = dict(os.environ, CUTE_PROFILE=args.profile, MPLBACKEND="Agg", PYTHONUNBUFFERED="1")
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    env["PYTHONPATH"] = os.pathsep.join([ROOT] + [p for p in [env.get("PYTHONPATH")] if p])
    probe = subprocess.run([sys.executable, "-c", PROBE], env=env, cwd=ROOT, capture_output=True, text=True)
    print((probe.stdout + probe.stderr).strip().splitlines()[-1] if probe.returncode else probe.stdout.strip())
    if probe.returncode:
        print((probe.stdout + probe.stderr)[-3000:])
        print("0 passed, %d failed" % len(chapters))
        return len(chapters)
    failed = 0
    for path in chapters:
        start = time.time()
        r = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "run_chapter.py"), path], env=env, cwd=ROOT,
                           capture_output=True, text=True)
        out = r.stdout + r.stderr
        skips = [ln.strip() for ln in out.splitlines() if "not run" in ln or "not checked" in ln
                 or "not launched" in ln or "no m16n8k16 ceiling" in ln or "needs sm_90" in ln]
        name = os.path.basename(path)
        print("%-28s %s  %5.0f s  %3d PASS lines  %d skips" % (name, "pass" if r.returncode == 0 else "FAIL",
                                                             time.time() - start, out.count("\nPASS "), len(skips)))
        for ln in skips:
            print("    " + ln[:160])
        if r.returncode:
            failed += 1
            print(out[-3000:])
    print("%d passed, %d failed" % (len(chapters) - failed, failed))
    return failed


if __name__ == "__main__":
    sys.exit(main())
