"""`matmul` as users call it, against cuBLAS and a Triton `tl.dot` kernel in one process (issue 21's sweep).

For every size, dtype (f16, bf16) and majorness of A and B (row- or column-major each): Gaussian inputs as
PyTorch tensors, `matmul(a, b, out=c)` checked against cuBLAS's product (output poisoned with NaN first),
then GPU time (kernels.timing.gpu_time_ms, back-to-back calls, the host's per-call work included in the
queue) of matmul, cuBLAS (`torch.mm(a, b, out_dtype=torch.float32, out=c)`) and the Triton kernel below,
all reading the same tensors and writing fp32, in --rounds interleaved rounds (clock drift hits all three
alike; the table gives the median ratio). Prints a Markdown table (ratios to cuBLAS) and writes it, the raw
times (JSON) and a plot (PNG, where matplotlib is installed) to --out.

    PYTHONPATH=. python3 benchmarks/gemm/matmul_sweep.py [--sizes ...] [--rounds 3] [--out DIR]
"""
import argparse
import json
import os
import statistics
import time

import kernels

kernels.setup()
import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from kernels.lib import matmul  # noqa: E402
from kernels.harness import check, cublas_baseline, time_rounds  # noqa: E402
from plot_matmul_sweep import plot  # noqa: E402  (beside this script)

SIZES = [(1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192), (4096, 14336, 4096),
         (4000, 3000, 2500)]
_CONFIGS = [triton.Config({"BM": bm, "BN": bn, "BK": 64, "G": 8}, num_stages=s, num_warps=w)
            for bm, bn, s, w in ((128, 256, 3, 8), (128, 128, 4, 4), (128, 128, 4, 8), (256, 128, 3, 8),
                                 (64, 128, 4, 4))]


@triton.autotune(configs=_CONFIGS, key=["M", "N", "K", "sam", "sak", "sbk", "sbn"])
@triton.jit
def _tl_gemm(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
             G: tl.constexpr):
    pid = tl.program_id(0)
    tiles_m, tiles_n = tl.cdiv(M, BM), tl.cdiv(N, BN)
    group = pid // (G * tiles_n)                       # G row-tiles at a time, column by column
    rows = tl.minimum(tiles_m - group * G, G)
    pm = group * G + (pid % (G * tiles_n)) % rows
    pn = (pid % (G * tiles_n)) // rows
    rm, rn, rk = pm * BM + tl.arange(0, BM), pn * BN + tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        kk = k * BK + rk
        x = tl.load(a + rm[:, None] * sam + kk[None, :] * sak, mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        y = tl.load(b + kk[:, None] * sbk + rn[None, :] * sbn, mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(x, y, acc)
    tl.store(c + rm[:, None] * scm + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def triton_mm(a, b, c):
    M, K = a.shape
    N = b.shape[1]
    grid = lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]),)  # noqa: E731
    _tl_gemm[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", nargs="*", default=None, help="MxNxK ...")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    sizes = [tuple(int(x) for x in s.split("x")) for s in args.sizes] if args.sizes else SIZES
    lines = ["| M x N x K | dtype | A, B | matmul / cuBLAS | Triton / cuBLAS | cuBLAS TFLOP/s | matmul rel. err |",
             "|---|---|---|---|---|---|---|"]
    torch.manual_seed(0)
    raw = []
    for (M, N, K) in sizes:
        for dt in (torch.float16, torch.bfloat16):
            a0 = torch.randn(M, K, device="cuda").to(dt)
            b0 = torch.randn(K, N, device="cuda").to(dt)
            c = torch.empty(M, N, device="cuda")
            for am in ("row", "col"):
                for bm in ("row", "col"):
                    a = a0 if am == "row" else a0.T.contiguous().T
                    b = b0 if bm == "row" else b0.T.contiguous().T
                    ref = cublas_baseline(a, b)[1]()
                    err = check(lambda: matmul(a, b, out=c), c, ref, "matmul %dx%dx%d %s" % (M, N, K, dt))
                    triton_mm(a, b, c)              # autotuned here, outside the timing
                    calls = {"cuBLAS": cublas_baseline(a, b, out=c)[1],
                             "matmul": lambda: matmul(a, b, out=c), "Triton": lambda: triton_mm(a, b, c)}
                    t = time_rounds(calls, args.rounds, args.reps)
                    ratio = {name: statistics.median(cu / x for cu, x in zip(t["cuBLAS"], t[name])) for name in t}
                    cell = dict(M=M, N=N, K=K, dtype=str(dt)[6:], A=am, B=bm, ms=t, err=err)
                    raw.append(cell)
                    line = "| %dx%dx%d | %s | %s, %s | %.2f | %.2f | %.0f | %.1e |" % (
                        M, N, K, str(dt)[6:], am, bm, ratio["matmul"], ratio["Triton"],
                        2e-9 * M * N * K / statistics.median(t["cuBLAS"]), err)
                    print(line, flush=True)
                    lines.append(line)
    head = "%s, %s, torch %s, triton %s, GPU time of back-to-back calls (median of %d)" % (
        time.strftime("%Y-%m-%d"), torch.cuda.get_device_name(), torch.__version__, triton.__version__, args.reps)
    head += ", median ratio of %d interleaved rounds" % args.rounds
    print("\n" + head + "\n\n" + "\n".join(lines))
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "matmul_sweep.md"), "w") as f:
            f.write(head + "\n\n" + "\n".join(lines) + "\n")
        with open(os.path.join(args.out, "matmul_sweep.json"), "w") as f:
            json.dump(dict(head=head, cells=raw), f, indent=1)
        plot(raw, os.path.join(args.out, "matmul_sweep.png"), head)


if __name__ == "__main__":
    main()
