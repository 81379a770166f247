"""Chapter 8's fastest kernels against cuBLAS over sizes, in one process, on the same Gaussian data, GPU time.

For each size: every kernel's C is checked against cuBLAS's (poisoned with NaN first, kernels.harness), then kernels and
cuBLAS are timed in `rounds` interleaved rounds (kernels.timing.gpu_time_ms, median of `reps` launches
each), so that clock drift hits everyone alike. Prints a Markdown table (median ratio, and the spread of
the ratio over the rounds) and writes it, with the raw times, to --out (JSON).

    PYTHONUNBUFFERED=1 python3 benchmarks/gemm/hopper_sweep.py [--out DIR] [--rounds 3]
"""
import argparse
import json
import os
import time

import numpy as np

import kernels

kernels.setup()
from numba import cuda  # noqa: E402
import torch  # noqa: E402

from kernels.harness import check, cublas_baseline, time_rounds  # noqa: E402
from kernels.hopper import step  # noqa: E402

SIZES = [(2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192), (4096, 14336, 4096)]
KERNELS = ["persistent BN256 st4 group16 tma-store", "persistent BN256 st4 group16"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=30)
    args = ap.parse_args()
    gemms = {name: step(name).kernel for name in KERNELS}
    rng = np.random.default_rng(5)
    raw = {}
    for (M, N, K) in SIZES:
        ta, tbt, cublas, ref = inputs(rng, M, N, K)
        da, dbt = cuda.as_cuda_array(ta), cuda.as_cuda_array(tbt)
        runs = {"cuBLAS": cublas}
        for name, g in gemms.items():
            dc = cuda.device_array((M, N), np.float32)
            runs[name] = (lambda g=g, dc=dc: g(da, dbt, dc))
            err = check(runs[name], dc, ref, "%s at %s" % (name, (M, N, K)), tol=1e-5)
            print("%s %s: rel err vs cuBLAS %.2e" % (name, (M, N, K), err), flush=True)
        raw["%dx%dx%d" % (M, N, K)] = time_rounds(runs, args.rounds, args.reps)
    report(raw, "cuBLAS", args, "hopper_sweep.json")


def inputs(rng, M, N, K):
    """Gaussian fp16 A (M, K) and Bt (N, K), standard deviation 0.5, on the GPU (torch), cuBLAS computing
    A @ Bt.T into fp32 (kernels.harness) and its C: (A, Bt, cuBLAS's launch, C)."""
    a = (rng.standard_normal((M, K)) * 0.5).astype(np.float16)
    bt = (rng.standard_normal((N, K)) * 0.5).astype(np.float16)
    ta, tbt = torch.from_numpy(a).cuda(), torch.from_numpy(bt).cuda()
    cublas = cublas_baseline(ta, tbt.T)[1]
    return ta, tbt, cublas, cublas()


def report(raw, base, args, filename):
    """Print, and write to args.out/filename with the raw times, a Markdown table of raw ({"MxNxK": {kernel:
    [ms per round]}}): each kernel's median time and TFLOP/s, its median ratio to kernel `base` over the
    rounds, and the ratio's range."""
    dev = cuda.get_current_device().name
    dev = dev.decode() if isinstance(dev, bytes) else dev
    lines = ["%s, %s, torch %s, GPU time, %d rounds x median of %d" % (time.strftime("%Y-%m-%d"), dev,
                                                                       torch.__version__, args.rounds, args.reps),
             "", "| M x N x K | kernel | ms | TFLOP/s | / cuBLAS (median) | min - max over rounds |",
             "|---|---|---|---|---|---|"]
    for size, times in raw.items():
        M, N, K = (int(x) for x in size.split("x"))
        for name, ts in times.items():
            ratios = [b / t for b, t in zip(times[base], ts)]
            ms = float(np.median(ts))
            lines.append("| %s | %s | %.3f | %.1f | %.2f | %.2f - %.2f |" % (
                size, name, ms, 2.0 * M * N * K / ms / 1e9, float(np.median(ratios)), min(ratios), max(ratios)))
    print("\n".join(lines))
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, filename), "w") as f:
            json.dump({"table": lines, "raw_ms": raw}, f, indent=1)


if __name__ == "__main__":
    main()
