"""Run every instruction's self-test (kernels.instructions.selftest) on this machine's GPU and print a table.

    python -m kernels.gpu_check            # exit status 0 when every test the GPU supports passed
    python -m kernels.gpu_check --sass     # also count the tensor-core / copy instructions in the SASS

Without a GPU it runs the same tests in the simulator (and says so).
"""

import argparse
import sys
import time

from .harness import sass_counts

# SASS opcodes that show an intrinsic became the real thing (not an emulation)
_SASS_MARKERS = ("HMMA", "LDSM", "LDGSTS", "LDG.E.128", "STG.E.128")


def _versions():
    import numpy
    import numba
    try:
        from importlib.metadata import version
        nc = version("numba-cuda")
    except Exception:
        nc = "?"
    return "numba %s, numba-cuda %s, numpy %s, python %s" % (
        numba.__version__, nc, numpy.__version__, sys.version.split()[0])


def _sass_summary(kernel):
    """'HMMA x4, LDSM x2' for a launched cuda.jit kernel (its compiled overloads), or a reason."""
    try:
        counts = sass_counts(kernel, _SASS_MARKERS)
    except Exception as e:
        return "sass: %s" % type(e).__name__
    return ", ".join("%s x%d" % (m, n) for m, n in counts.items() if n) or "no tensor/copy opcodes"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sass", action="store_true", help="summarise each test kernel's SASS")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    import warnings
    from . import runtime
    info = runtime.setup(verbose=True)
    try:   # the tests are deliberately tiny, host-array launches: not a performance test
        from numba.core.errors import NumbaPerformanceWarning
        warnings.simplefilter("ignore", NumbaPerformanceWarning)
    except ImportError:
        pass
    print(_versions())
    from .instructions import selftest

    rows, failed = [], 0
    for name, d in selftest.TESTS.items():
        t0 = time.perf_counter()
        r = selftest.run_all([name], cc=info.cc, seed=args.seed)[0]
        dt = time.perf_counter() - t0
        skipped = r.note.startswith("skipped")
        status = "skip" if skipped else ("PASS" if r.ok else "FAIL")
        failed += status == "FAIL"
        rows.append((name, ", ".join(d.needs) or "-", status, r.max_err, dt, r.note))

    width = max(len(r[0]) for r in rows)
    print()
    print("%-*s  %-4s  %-9s  %-7s  %s" % (width, "test", "", "max err", " time", "needs / note"))
    print("-" * (width + 60))
    for name, needs, status, err, dt, note in rows:
        print("%-*s  %-4s  %-9.2g  %6.2fs  %s%s" % (width, name, status, err, dt, needs,
                                                  ("  [" + note + "]") if note else ""))
    print("-" * (width + 60))
    print("%d passed, %d failed, %d skipped on %s" % (
        sum(r[2] == "PASS" for r in rows), failed, sum(r[2] == "skip" for r in rows),
        info.label if info.simulator else "%s (%s)" % (info.label, info.sm)))

    if args.sass and not info.simulator:
        print("\nSASS of the test kernels (instruction counts):")
        for kname, kern in sorted(selftest.compiled_kernels().items()):
            print("  %-40s %s" % (kname, _sass_summary(kern)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
