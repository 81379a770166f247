"""matmul's fused epilogues on the GPU (issue 30, point 2): a fuzz, then timings against PyTorch.

1. Fuzz: random shapes (1..700), input dtypes, majorness of A and B, out_dtype, alpha, beta, bias (per row or
   column, its dtype), activation; `out` NaN-poisoned where beta is 0. Each result is compared with the
   float64 NumPy-style reference of the same inputs; each call is made twice (the second a prepared replay).
2. Timing (GPU time, kernels.harness.time_rounds, interleaved rounds), at 4096^3 and 8192^3, bf16 inputs:
     bf16 out            matmul(A, B, out=D16)                    vs torch.mm(A, B, out=D16) (cuBLAS, bf16 out)
     bias + GELU fused   matmul(..., bias=b, activation="gelu")   vs the same matmul without the epilogue,
                                                                    and torch.mm + bias + gelu(tanh) (3 passes)
   Targets (issue 30): bf16 out >= 1.0 of torch.mm; bias + GELU >= 0.95 of the plain GEMM and faster than
   PyTorch's three passes. A table last.

    PYTHONPATH=. python3 benchmarks/gemm/epilogue_bench.py [--cases 60] [--seed 0] [--records PATH]
    PYTHONPATH=. python3 benchmarks/gemm/epilogue_bench.py --cases 12 --only 5 6 --no-bench   # two cases, no timing

--records writes the timings as JSON (device, date, command, rows) to PATH, or to RECORDS
(kernels.lib.epilogue: what chapter 8 reads) with no PATH given.
"""
import argparse
import sys

import kernels

kernels.setup()
import numpy as np  # noqa: E402
import torch  # noqa: E402
from numba import cuda  # noqa: E402

from kernels.harness import time_rounds  # noqa: E402
from kernels.lib import matmul  # noqa: E402
from kernels.lib.epilogue import RECORDS  # noqa: E402

DTYPES = (torch.float32, torch.float16, torch.bfloat16)
OUT = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
TOL = {"float32": 2e-3, "float16": 4e-3, "bfloat16": 1.6e-2}   # GELU's tanh is tanh.approx.f32


def reference(A, B, alpha, beta, C, bias, activation):
    x = alpha * (A.double() @ B.double())
    if beta:
        x = x + beta * C.double()
    if bias is not None:
        x = x + bias.double()
    if activation == "relu":
        x = torch.relu(x)
    elif activation == "gelu":
        x = 0.5 * x * (1 + torch.tanh((2 / np.pi) ** 0.5 * (x + 0.044715 * x ** 3)))
    return x


def case(rng, n, run=True):
    """Draw fuzz case n from rng; with run, check it (True where it passes)."""
    M, N, K = (int(v) for v in rng.integers(1, 701, 3))
    dt = DTYPES[rng.integers(3)]
    out_dtype = ("float32", "float16", "bfloat16")[rng.integers(3)]
    am, bm = ("row", "col")[rng.integers(2)], ("row", "col")[rng.integers(2)]
    alpha = float(rng.choice([1.0, 0.5, -2.0]))
    beta = float(rng.choice([0.0, 0.0, 1.0, -0.5]))
    activation = (None, "relu", "gelu")[rng.integers(3)]
    mode = (None, "col", "row")[rng.integers(3)]
    bias_dtype = DTYPES[rng.integers(3)] if mode else None
    if not run:
        return True
    A = torch.randn(M, K, device="cuda").to(dt)
    B = torch.randn(K, N, device="cuda").to(dt)
    if am == "col":
        A = A.t().contiguous().t()
    if bm == "col":
        B = B.t().contiguous().t()
    bias = None
    if mode:
        bias = torch.randn(*((N,) if mode == "col" else (M, 1)), device="cuda").to(bias_dtype)
    C0 = torch.randn(M, N, device="cuda").to(OUT[out_dtype])
    want = reference(A, B, alpha, beta, C0, bias, activation)
    errs = []
    for _ in range(2):
        out = C0.clone() if beta else torch.full((M, N), float("nan"), device="cuda").to(OUT[out_dtype])
        matmul(A, B, out=out, alpha=alpha, beta=beta, bias=bias, activation=activation)
        torch.cuda.synchronize()
        diff = torch.nan_to_num(out.double() - want, nan=1e30)
        errs.append(float(diff.abs().max() / max(float(want.abs().max()), 1.0)))
    ok = all(e < TOL[out_dtype] for e in errs)
    print("%-4s %3d %4dx%4dx%4d %-8s -> %-8s A %s B %s alpha %4.1f beta %4.1f bias %-4s %-5s err %.1e / %.1e" % (
        "ok" if ok else "FAIL", n, M, N, K, str(dt)[6:], out_dtype, am, bm, alpha, beta, mode, activation,
        errs[0], errs[1]), flush=True)
    return ok


def timings(size):
    """[(row label, ms, ratio label, ratio)] at size^3, bf16 in."""
    A = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
    B = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
    bias = torch.randn(size, device="cuda", dtype=torch.bfloat16)
    D16, T16, F32 = (torch.empty(size, size, device="cuda", dtype=t) for t in (torch.bfloat16, torch.bfloat16,
                                                                             torch.float32))
    G16 = torch.empty_like(D16)
    # each checked once against PyTorch before it is timed (NaN-poisoned first)
    for d in (D16, G16):
        d.fill_(float("nan"))
    matmul(A, B, out=D16)
    matmul(A, B, out=G16, bias=bias, activation="gelu")
    torch.mm(A, B, out=T16)
    ref = torch.nn.functional.gelu(T16.float() + bias.float(), approximate="tanh")
    torch.cuda.synchronize()
    e1 = float((D16.float() - T16.float()).abs().max() / T16.float().abs().max())
    e2 = float((G16.float() - ref).abs().max() / ref.abs().max())
    assert e1 < 2e-2 and e2 < 2e-2, (e1, e2)

    def torch_three():
        torch.mm(A, B, out=T16)
        torch.nn.functional.gelu(T16 + bias, approximate="tanh")

    runs = {"torch.mm bf16 out": lambda: torch.mm(A, B, out=T16),
            "matmul bf16 out": lambda: matmul(A, B, out=D16),
            "matmul bf16 out + bias + gelu": lambda: matmul(A, B, out=G16, bias=bias, activation="gelu"),
            "torch.mm + bias + gelu": torch_three,
            "matmul f32 out (no epilogue)": lambda: matmul(A, B, out=F32)}
    t = {k: float(np.median(v)) for k, v in time_rounds(runs, rounds=3, reps=10 if size < 8192 else 5).items()}
    flops = 2.0 * size ** 3
    return [(size, name, ms, flops / ms / 1e9) for name, ms in t.items()], t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=60)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--records", nargs="?", const=RECORDS, default=None)
    ap.add_argument("--only", type=int, nargs="*", default=None, help="check these cases of the --cases drawn")
    ap.add_argument("--no-bench", action="store_true", help="the fuzz only")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    torch.manual_seed(args.seed)
    run = set(range(args.cases) if args.only is None else args.only)
    bad = sum(not case(rng, n, n in run) for n in range(args.cases))
    print("epilogue fuzz: %d of %d cases, %s" % (len(run), args.cases, "all pass" if bad == 0 else "%d FAIL" % bad),
          flush=True)
    if args.no_bench:
        sys.exit(bad)
    rows, ratios = [], []
    for size in (4096, 8192):
        r, t = timings(size)
        rows += r
        ratios.append((size, t["torch.mm bf16 out"] / t["matmul bf16 out"],
                       t["matmul bf16 out"] / t["matmul bf16 out + bias + gelu"],
                       t["torch.mm + bias + gelu"] / t["matmul bf16 out + bias + gelu"]))
    name = cuda.get_current_device().name
    print("\n%s, GPU time (median of 3 interleaved rounds)\n" % (name.decode() if isinstance(name, bytes) else name))
    print("| size | run | ms | TFLOP/s |\n|---|---|---|---|")
    for size, run, ms, tf in rows:
        print("| %d^3 | %s | %.3f | %.1f |" % (size, run, ms, tf))
    print("\n| size | bf16 out / torch.mm (target >= 1.0) | fused bias+gelu / plain bf16 (>= 0.95) "
          "| fused / torch.mm+bias+gelu (> 1) |\n|---|---|---|---|")
    for size, a, b, c in ratios:
        print("| %d^3 | %.2f | %.2f | %.2f |" % (size, a, b, c))
    if args.records:
        import datetime
        import json
        rec = {"about": "GPU time (ms, median of 3 interleaved rounds) and TFLOP/s of each run, bf16 inputs",
               "device": name.decode() if isinstance(name, bytes) else name, "date": str(datetime.date.today()),
               "command": "python benchmarks/gemm/epilogue_bench.py " + " ".join(sys.argv[1:]),
               "fuzz": {"cases": args.cases, "failed": bad},
               "rows": [dict(size=size, run=run, ms=ms, tflops=tf) for size, run, ms, tf in rows]}
        with open(args.records, "w") as f:
            json.dump(rec, f, indent=1)
            f.write("\n")
    sys.exit(bad)


if __name__ == "__main__":
    main()
