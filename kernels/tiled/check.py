"""Chapter 6's kernels on this machine's GPU: the TiledCopy kernels (128-bit vs 32-bit) and the TiledMMA
GEMM tile (sm75 and sm80 paths), each checked against NumPy, with SASS evidence, registers and timings.

    python -m kernels.tiled.check                 # checks, SASS counts, registers, copy timings, a table
    python -m kernels.tiled.check --sass-dir D    # also write each kernel's SASS to D

Without a GPU it runs the checks in the simulator at tiny sizes (no SASS, no timings). Exit status 0 when
every check passed.
"""

import argparse
import os
import sys

from ..harness import registers, sass_counts, sass_text

# the copies' and the tile's instructions, each width apart ("LDG.E " with its space: 32-bit loads only)
MARKERS = ("LDG.E.128", "LDG.E ", "LDGSTS", "STS.128", "STS ", "LDS.128", "LDS ", "STG.E.128", "STG.E ", "LDSM.16.M88.4",
           "LDSM.16.MT88.4", "HMMA")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sass-dir", default=None)
    parser.add_argument("--reps", type=int, default=20)
    args = parser.parse_args(argv)

    import warnings
    from .. import runtime
    info = runtime.setup(verbose=True)
    warnings.filterwarnings("ignore", message=".*Grid size")   # the small GEMM check launches few CTAs
    import numpy as np
    from numba import cuda
    from . import copy as TC, mma as TM
    from ..capability import supports
    gpu = not info.simulator
    cc = info.cc                                   # None: the simulator without a profile runs everything
    rng = np.random.default_rng(0)
    rows, failed = [], 0

    def report(name, ok, note, kernel):
        nonlocal failed
        failed += not ok
        sass, nreg = {}, None
        if gpu:
            text = sass_text(kernel)
            sass = {m: n for m, n in sass_counts(text, MARKERS).items() if n}
            nreg = registers(kernel)
            if args.sass_dir:
                os.makedirs(args.sass_dir, exist_ok=True)
                with open(os.path.join(args.sass_dir, name.replace(" ", "_").replace(".", "") + ".sass"), "w") as f:
                    f.write(text)
        rows.append([name, "PASS" if ok else "FAIL", note, nreg, sass, None])
        print("%-28s %s  %s  regs=%s  %s" % (name, "PASS" if ok else "FAIL", note, nreg,
                                           ", ".join("%s x%d" % kv for kv in sass.items())), flush=True)

    # -- the copies: correctness (poisoned output), then timing at a size that fills the GPU
    shape = (4096, 8192) if gpu else (64, 128)
    src = rng.standard_normal(shape).astype(np.float32)
    copies = [(128, "ldg"), (32, "ldg")] + ([(128, "cp.async")] if cc is None or supports("cp.async", cc) else [])
    for bits, path in copies:
        out, _ = TC.run_tiled_copy(src, bits, path)
        ok = bool(np.isfinite(out).all() and np.array_equal(out, src))
        report("copy %d-bit %s" % (bits, path), ok, "exact" if ok else "%d differ" % np.sum(out != src),
               TC.make_copy_kernel(bits, path).numba)

    # -- the GEMM tile, both paths
    M, N, K = (256, 256, 512) if gpu else (32, 64, 64)
    A = rng.standard_normal((M, K)).astype(np.float16)
    B = rng.standard_normal((K, N)).astype(np.float16)
    want = A.astype(np.float64) @ B.astype(np.float64)
    for path in ("sm75", "sm80"):
        if cc is not None and not supports("cp.async", cc) and path == "sm80":
            continue
        C = TM.run_warp_gemm(A, B, path)
        err = float(np.max(np.abs(C - want)) / max(1.0, np.abs(want).max()))
        ok = bool(np.isfinite(C).all() and err < 1e-5)
        report("gemm %s %dx%dx%d" % (path, M, N, K), ok, "rel err %.1e" % err, TM.make_gemm_kernel(path).numba)

    if gpu:   # timings: CUDA events, 3 warm-up launches, median of reps, at TIMED_SIZES
        for big in TC.TIMED_SIZES:
            h_src = rng.standard_normal(big, dtype=np.float32)
            d_src = cuda.to_device(h_src)
            nbytes = 2 * h_src.nbytes
            print("\ncopy of %dx%d float32 (%.3f GiB read + written), median of %d runs:"
                  % (big + (nbytes / 2**30, args.reps)))
            for bits, path in copies:
                out, ms = TC.run_tiled_copy(d_src, bits, path, reps=args.reps)
                ok = bool(np.array_equal(out, h_src))
                row = next(r for r in rows if r[0] == "copy %d-bit %s" % (bits, path))
                row[5] = (row[5] or ()) + ("%.3f ms, %.0f GB/s" % (ms, nbytes / ms / 1e6),)
                failed += not ok
                print("  %-20s %8.3f ms  %7.1f GB/s  %s" % ("%d-bit %s" % (bits, path), ms, nbytes / ms / 1e6,
                                                            "ok" if ok else "WRONG"), flush=True)
        M = N = K = 2048
        A = rng.standard_normal((M, K)).astype(np.float16)
        B = rng.standard_normal((K, N)).astype(np.float16)
        for path in ("sm75", "sm80"):
            if path == "sm80" and not supports("cp.async", cc):
                continue
            C, ms = TM.run_warp_gemm(A, B, path, reps=args.reps)
            row = next(r for r in rows if r[0].startswith("gemm " + path))
            row[5] = ("%.3f ms, %.1f TFLOP/s" % (ms, 2 * M * N * K / ms / 1e9),)
            print("  gemm %s 2048^3: %8.3f ms  %7.2f TFLOP/s" % (path, ms, 2 * M * N * K / ms / 1e9), flush=True)

    print("\n| kernel | check | registers | SASS | copy 16384^2 f32 / gemm 2048^3 | copy 2048^2 f32 |"
          "\n|---|---|---|---|---|---|")
    for name, status, note, nreg, sass, t in rows:
        t = tuple(t or ()) + ("-", "-")
        print("| %s | %s (%s) | %s | %s | %s | %s |" % (
            name, status, note, nreg if nreg is not None else "-",
            ", ".join("%s x%d" % kv for kv in sass.items()) or "-", t[0], t[1]))
    print("\n%d checks, %d failed on %s" % (len(rows), failed, info.name))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
