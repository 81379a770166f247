"""Quick variant explorer for one size (run on a GPU): build the named kernel variants, check each against
cuBLAS (outputs poisoned with NaN), time them (CUDA events, median), print a table last; optionally dump
one variant's SASS to $OUT. Variants are Python expressions over the kernels.gemm modules: P(**cfg) is
tc_sm80_prefetch.make(**dict(BEST, **cfg)), T(...) tc_sm80, S(...) tc_sm75, e.g.

    python benchmarks/gemm/explore.py 'P(BK=64, stages=3)' 'P(min_blocks=1)' --sass 0 --size 4096
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import kernels  # noqa: E402

kernels.setup(verbose=False)
import numpy as np  # noqa: E402
import torch  # noqa: E402
from numba import cuda  # noqa: E402

from kernels import gemm  # noqa: E402
from kernels.harness import check_and_time, cublas_baseline, registers, sass_text  # noqa: E402
from kernels.timing import gpu_time_ms  # noqa: E402
from kernels.gemm import ceiling, tc_sm75, tc_sm80, tc_sm80_prefetch  # noqa: E402,F401


def _variant(module, tag, cfg):
    return gemm._tc(module, tag + str(cfg), (), **dict(module.BEST, **cfg))


def P(**cfg):
    return _variant(tc_sm80_prefetch, "P", cfg)


def T(**cfg):
    return _variant(tc_sm80, "T", cfg)


def S(**cfg):
    return _variant(tc_sm75, "S", cfg)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("variants", nargs="*")
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--sass", type=int, default=-1)
    ap.add_argument("--once", action="store_true", help="one launch each (for ncu)")
    a = ap.parse_args()
    n = a.size
    g = torch.Generator(device="cuda").manual_seed(n)
    A32, B32 = torch.randn(n, n, device="cuda", generator=g), torch.randn(n, n, device="cuda", generator=g)
    A16, B16 = A32.half(), B32.half()
    baseline = {"f16": cublas_baseline(A16, B16), "f32": cublas_baseline(A32, B32)}
    ref = {dtype: run() for dtype, (_, run) in baseline.items()}
    flop = 2.0 * n ** 3
    rows = []
    if not a.once:
        for name, fn in [("cuBLAS fp16", lambda: torch.matmul(A16, B16))] + list(baseline.values()):
            rows.append((name, flop / gpu_time_ms(fn, a.reps) / 1e9, 0.0, ""))
        for shape in ("m16n8k16", "m16n8k8"):
            k = ceiling.make_kernel(shape)
            out = cuda.device_array(132 * 8 * 256, np.float32)
            ms = gpu_time_ms(lambda: k[132 * 8, 256](out, 4096), 10)
            rows.append(("mma.sync ceiling " + shape, ceiling.flops(k, 132 * 8, 256, 4096) / ms / 1e9, 0.0, ""))
    env = dict(gemm.__dict__, P=P, T=T, S=S, gemm=gemm)
    for i, v in enumerate(a.variants):
        r = eval(v, env)
        A, B = (A32, B32) if r.dtype == "f32" else (A16, B16)
        C = torch.empty(n, n, device="cuda")
        run = gemm.prepare(r, A, B, C)
        if a.once:
            run()
            cuda.synchronize()
            continue
        try:
            ms, err = check_and_time(run, C, ref[r.dtype], v, reps=a.reps)
        except AssertionError as e:                  # a wrong variant is reported, not timed
            print(e)
            ms, err = float("inf"), float("inf")
        rows.append((v, flop / ms / 1e9, err, registers(r.kernel.numba)))
        if i == a.sass:
            open(os.path.join(os.environ.get("OUT", "."), "sass_%d.txt" % i), "w").write(sass_text(r.kernel.numba))
    if not a.once:
        print("\n%-60s %8s %8s %6s" % ("variant (%d^3)" % n, "TFLOP/s", "rel.err", "regs"))
        for v, tf, err, regs in rows:
            print("%-60s %8.1f %8.1e %6s" % (v[:60], tf, err, regs))


if __name__ == "__main__":
    main()
