"""Which configuration of the persistent Hopper kernel should `matmul` run for a shape? Each configuration
below against cuBLAS, on the same Gaussian PyTorch tensors: GPU time of prepared
launches in --rounds interleaved rounds; every output checked against cuBLAS first (poisoned with NaN).

    PYTHONPATH=. python3 benchmarks/gemm/matmul_configs.py [--sizes MxNxK ...] [--majors K,MN ...]
"""
import argparse
import statistics

import kernels

kernels.setup()
import torch  # noqa: E402
from numba import cuda  # noqa: E402

from kernels.arrays import transposed  # noqa: E402
from kernels.harness import check, cublas_baseline, time_rounds  # noqa: E402
from kernels.hopper import MATMUL_CONFIG, HopperGemm  # noqa: E402

CONFIGS = {
    "matmul (group 16)": MATMUL_CONFIG,
    "group 8": dict(MATMUL_CONFIG, group=8),
    "group 32": dict(MATMUL_CONFIG, group=32),
    "BN128": dict(MATMUL_CONFIG, BN=128, stages=6),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", nargs="*", default=["8192x8192x8192", "4096x14336x4096", "4000x3000x2504"])
    ap.add_argument("--majors", nargs="*", default=["K,MN", "K,K"])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=10)
    args = ap.parse_args()
    torch.manual_seed(0)
    rows = []
    for size in args.sizes:
        M, N, K = (int(x) for x in size.split("x"))
        for majors in args.majors:
            am, bm = majors.split(",")          # B's majorness as Bt (N, K) sees it: "K" = B column-major
            a = torch.randn(M, K, device="cuda").half()
            b = torch.randn(K, N, device="cuda").half()
            if am == "MN":
                a = a.T.contiguous().T
            if bm == "K":
                b = b.T.contiguous().T
            c = torch.empty(M, N, device="cuda")
            ref = cublas_baseline(a, b)[1]()
            da, dbt, dc = (cuda.as_cuda_array(x) for x in (a.view(torch.int16), b.view(torch.int16), c))
            dbt = transposed(dbt)
            calls = {"cuBLAS": cublas_baseline(a, b, out=c)[1]}
            for name, cfg in CONFIGS.items():
                try:
                    g = HopperGemm(majors=(am, bm), **cfg)
                    run = g.prepare(da, dbt, dc)
                except Exception as e:  # noqa: BLE001  (a configuration that does not build: say so, go on)
                    print("%s: %s" % (name, str(e)[:120]), flush=True)
                    continue
                try:
                    check(run, c, ref, "%s %s %s" % (name, size, majors), tol=1e-5)
                except AssertionError as e:       # a wrong configuration: say so, go on
                    print("FAIL", e, flush=True)
                    continue
                calls[name] = run
            t = time_rounds(calls, args.rounds, args.reps)
            for name in calls:
                if name != "cuBLAS":
                    r = statistics.median(cu / x for cu, x in zip(t["cuBLAS"], t[name]))
                    rows.append("| %s | %s | %s | %.3f | %.2f |" % (size, majors, name, statistics.median(t[name]), r))
                    print(rows[-1], flush=True)
    print("\n| M x N x K | A, Bt major | configuration | ms | / cuBLAS |\n|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
