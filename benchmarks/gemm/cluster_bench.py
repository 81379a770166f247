"""Chapter 8's cluster kernel (kernels.hopper.cluster: 1x1, 2x1, 1x2 clusters with TMA multicast) on an H100 or
H200: a correctness fuzz, then timing against chapter 8's best step, cuBLAS and, where installed, NVIDIA's CuTe
DSL persistent example with the same cluster shapes. One process, the same Gaussian fp16 data for everyone, fp32
out, GPU time (kernels.harness.time_rounds, interleaved rounds).

1. Fuzz: random and edge shapes (partial tiles in M, N and K, fewer tiles than a cluster, more tiles than
   SMs), C poisoned with NaN before each launch (kernels.harness.check), compared with cuBLAS's C.
2. Timing at 4096^3, 8192^3 and 4096 x 14336 x 4096. The DSL example is
   `examples/python/CuTeDSL/cute/hopper/kernel/dense_gemm/dense_gemm_persistent.py` (benchmarks/gemm/hopper_vs_dsl.py
   builds it); left out where --dsl-example is not given or does not import.
Writes --out/cluster_records.json: {"cluster": {"run", "about", "bytes", "rows"}}, the entry chapter 8 reads
from kernels/hopper/records.json (kernels.hopper.chapter.cluster_lines). Prints a table last.

    PYTHONPATH=.:benchmarks/gemm[:DSL_SITE] python3 benchmarks/gemm/cluster_bench.py --out DIR [--dsl-example PATH]
"""
import argparse
import json
import os
import sys
import time

import numpy as np

import kernels

kernels.setup()
from numba import cuda  # noqa: E402
import torch  # noqa: E402

from kernels.harness import check, time_rounds  # noqa: E402
from kernels.hopper import cluster, step  # noqa: E402
from hopper_sweep import inputs  # noqa: E402  (this folder: the same data)

SIZES = [(4096, 4096, 4096), (8192, 8192, 8192), (4096, 14336, 4096)]
FUZZ = [(128, 256, 64), (200, 136, 72), (300, 520, 136), (1000, 777 + 3, 328), (129, 4096, 1024),
        (4096, 260, 2056), (2048, 2048, 8), (3000, 5000, 1000)]
BEST = "persistent BN256 st4 group16 tma-store"


def fuzz(kernels_, rng):
    worst = {}
    shapes = FUZZ + [(int(rng.integers(1, 40)) * 64 + int(rng.integers(0, 64)),
                      int(rng.integers(1, 40)) * 4 * 16 + 4 * int(rng.integers(0, 16)),
                      8 * int(rng.integers(1, 300))) for _ in range(6)]
    for M, N, K in shapes:
        ta, tbt, _, ref = inputs(rng, M, N, K)
        for shape, k in kernels_.items():
            c = torch.empty(M, N, device="cuda")
            da, dbt, dc = (cuda.as_cuda_array(x) for x in (ta, tbt, c))
            err = check(cluster.launcher(k, da, dbt, dc), dc, ref, "cluster %s at %s" % (shape, (M, N, K)), tol=1e-5)
            worst[shape] = max(worst.get(shape, 0.0), err)
        print("fuzz %s: PASS" % ((M, N, K),), flush=True)
    return worst


def dsl_runs(path, shapes):
    """{name: make(ta, tbt, tc) -> launch} of the DSL's persistent example with these clusters, or {} (and why)."""
    if not path:
        print("CuTe DSL: no --dsl-example given: left out")
        return {}
    try:
        from hopper_vs_dsl import dsl_gemm
        return {"CuTe DSL persistent %dx%d" % s: dsl_gemm(path, s) for s in shapes}
    except Exception as e:  # noqa: BLE001  (a missing or different DSL: report it and time the rest)
        print("CuTe DSL: left out (%s: %s)" % (type(e).__name__, e))
        return {}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    ap.add_argument("--dsl-example", default=None)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    t0 = time.time()
    built = {s: cluster.make(s) for s in cluster.CLUSTERS}
    rng = np.random.default_rng(30)
    worst = fuzz(built, rng)
    print("fuzz done in %.0f s; worst rel err vs cuBLAS: %s" % (time.time() - t0, worst), flush=True)
    best = step(BEST).kernel
    dsl = dsl_runs(args.dsl_example, cluster.CLUSTERS)
    raw = {}
    for M, N, K in SIZES:
        ta, tbt, cublas, ref = inputs(rng, M, N, K)
        da, dbt = cuda.as_cuda_array(ta), cuda.as_cuda_array(tbt)
        runs, outs = {"cuBLAS": cublas}, {}
        outs[BEST] = torch.empty(M, N, device="cuda")
        dc = cuda.as_cuda_array(outs[BEST])
        runs[BEST] = lambda dc=dc: best(da, dbt, dc)
        for s, k in built.items():
            name = "cluster %dx%d" % s
            outs[name] = torch.empty(M, N, device="cuda")
            runs[name] = cluster.launcher(k, da, dbt, cuda.as_cuda_array(outs[name]))
        for name, make in dsl.items():
            outs[name] = torch.empty(M, N, device="cuda")
            runs[name] = make(ta, tbt, outs[name])
        for name, out in outs.items():
            check(runs[name], out, ref, "%s at %s" % (name, (M, N, K)), tol=1e-4)
        raw["%dx%dx%d" % (M, N, K)] = time_rounds(runs, args.rounds, args.reps)
        print("timed %s" % ((M, N, K),), flush=True)
    dev = cuda.get_current_device().name
    dev = dev.decode() if isinstance(dev, bytes) else dev
    rows = []
    for size, times in raw.items():
        M, N, K = (int(x) for x in size.split("x"))
        for name, ts in times.items():
            ratios = [b / t for b, t in zip(times["cuBLAS"], ts)]
            ms = float(np.median(ts))
            rows.append([size, name, round(ms, 4), round(2.0 * M * N * K / ms / 1e9, 1),
                         round(float(np.median(ratios)), 3), round(min(ratios), 3), round(max(ratios), 3)])
    record = {"cluster": {
        "run": {"date": time.strftime("%Y-%m-%d"), "device": dev, "torch": torch.__version__,
                "command": "python3 benchmarks/gemm/cluster_bench.py" + (" --dsl-example PATH" if dsl else "")},
        "about": "kernels.hopper.cluster (128 x 256 tiles, 4 stages, TMA-store epilogue) in 1x1, 2x1 and 1x2 "
                 "clusters, chapter 8's best step and, where listed, the CuTe DSL's persistent example with the "
                 "same clusters; fp16 in, fp32 out, Gaussian data (sd 0.5), GPU time, %d interleaved rounds x "
                 "median of %d. A row: [M x N x K, kernel, ms, TFLOP/s, ratio to cuBLAS (median), min, max over "
                 "the rounds]. fuzz: the worst relative error against cuBLAS over %d shapes, C poisoned with NaN."
                 % (args.rounds, args.reps, len(FUZZ) + 6),
        "fuzz": {"%dx%d" % s: float("%.3g" % e) for s, e in worst.items()},
        "rows": rows}}
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "cluster_records.json"), "w") as f:
            json.dump(record, f, indent=1)
    print("\n%s, %s, GPU time" % (record["cluster"]["run"]["date"], dev))
    print("| M x N x K | kernel | ms | TFLOP/s | / cuBLAS | min - max |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print("| %s | %s | %.3f | %.1f | %.2f | %.2f - %.2f |" % tuple(r))
    print("total %.0f s" % (time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
