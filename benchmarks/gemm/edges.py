"""Chapter 7's tensor-core steps built with edges=True (every copy predicated: M, N, K need not be multiples of
the tile, only of 8 elements along a unit stride), the kernels `matmul` runs on sm_75 and sm_80 for ragged
sizes: each checked against cuBLAS's product (fp16 inputs, fp32 output, poisoned first), then timed (GPU time,
kernels.harness.time_rounds: --rounds interleaved rounds, the median printed).

    PYTHONPATH=. python3 benchmarks/gemm/edges.py [--size 4000x3000x2504] [--rounds 3]
"""
import argparse
import dataclasses
import statistics

import kernels

INFO = kernels.setup()
import torch  # noqa: E402

from kernels import gemm  # noqa: E402
from kernels.harness import check, time_rounds  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="4000x3000x2504", help="MxNxK (N and K multiples of 8)")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    M, N, K = (int(x) for x in args.size.split("x"))
    g = torch.Generator(device="cuda").manual_seed(0)
    A = torch.randn(M, K, device="cuda", generator=g).half()
    B = torch.randn(K, N, device="cuda", generator=g).half()
    want = A.float() @ B.float()
    runs = {}
    for s in gemm.LADDER:
        if s.name.startswith("tc ") and s.runs_on(INFO.cc):
            step = dataclasses.replace(s, config=dict(s.config, edges=True))
            C = torch.empty(M, N, device="cuda")
            runs[s.name] = gemm.prepare(step, A, B, C)
            check(runs[s.name], C, want, s.name + " edges")
    times = time_rounds(runs, args.rounds)
    print("%s (sm_%d%d), %dx%dx%d, edges=True" % (INFO.name, INFO.cc[0], INFO.cc[1], M, N, K))
    for name, ms in times.items():
        med = statistics.median(ms)
        print("  %-30s %8.3f ms %7.1f TFLOP/s" % (name, med, 2.0 * M * N * K / med / 1e9))


if __name__ == "__main__":
    main()
