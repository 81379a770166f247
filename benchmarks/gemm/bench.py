"""The GEMM ladder against cuBLAS, in one process on the same inputs (run on a GPU):

    python benchmarks/gemm/bench.py [--sizes 4096 | --sweep] [--out DIR] [--only NAME,...]

For each size: fresh random inputs; cuBLAS fp32, fp16 -> fp16 and fp16 -> fp32 (the tensor-core rungs'
baseline: same inputs and output type as theirs); every rung's output poisoned (NaN) and compared with the cuBLAS
result (torch, TF32 off for fp32) by ||out - ref|| / ||ref|| (kernels.harness); then timed with CUDA events
(kernels.timing: 3 warm-up launches, median of >= 10 batches of launches queued back to back, so that the host's launch
cost is not counted: GPU time, as a profiler sees it); then the user's call, matmul(A, B, out=C) for f32 and f16 ("matmul auto f32/f16":
any size: edges predicated or padded). Also the mma.sync ceiling (register-only mma loops) and each kernel's SASS
facts (registers, LDGSTS / LDSM / HMMA / LDG.E.128 / LDS.128 counts, local-memory spills).
Writes gemm.csv, sass.csv and gemm.png to --out (default: $OUT or .), prints a short table last.
"""

import argparse
import csv
import os
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import kernels  # noqa: E402

INFO = kernels.setup()

import numpy as np  # noqa: E402
import torch  # noqa: E402
from numba import cuda  # noqa: E402

from kernels import gemm  # noqa: E402
from kernels.lib import matmul  # noqa: E402
from kernels.gemm import ceiling  # noqa: E402
from kernels.harness import check_and_time, cublas_baseline, registers, rel_err, sass_counts, sass_text  # noqa: E402
from kernels.timing import gpu_time_ms  # noqa: E402

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False

SASS_OPS = ["HMMA", "LDGSTS", "LDSM", "LDG.E.128", "LDS.128", "STS.128", "FFMA", "LDL", "STL"]


def sass_facts(kernel):
    """Registers per thread and instruction counts of every specialisation of `kernel` (a Numba kernel)."""
    try:
        facts = dict(regs=registers(kernel), **sass_counts(kernel, SASS_OPS))
    except Exception as e:  # noqa: BLE001
        return {"error": str(e)[:200]}
    try:
        facts["local_bytes"] = max(kernel.get_local_mem_per_thread().values()) if isinstance(
            kernel.get_local_mem_per_thread(), dict) else kernel.get_local_mem_per_thread()
    except Exception:  # noqa: BLE001
        facts["local_bytes"] = ""
    return facts


def measure_ceiling(shape):
    k = ceiling.make_kernel(shape)
    blocks, threads, iters = 132 * 8, 256, 4096
    out = cuda.device_array(blocks * threads, np.float32)
    ms = gpu_time_ms(lambda: k[blocks, threads](out, iters), reps=10)
    return ceiling.flops(k, blocks, threads, iters) / ms / 1e9, k


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="4096", help="comma list of N (N^3), or MxNxK items")
    ap.add_argument("--sweep", action="store_true", help="512..8192 and 4000x3000x2500")
    ap.add_argument("--only", default="", help="comma list of rung names (substring match)")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--explore", action="store_true", help="also the tile/stage variants of gemm.EXPLORE")
    ap.add_argument("--slow-limit-ms", type=float, default=400.0, help="skip larger sizes for rungs slower")
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--dump-sass", action="store_true", help="write each rung's SASS to OUT/sass/")
    args = ap.parse_args()
    from tqdm import tqdm

    sizes = []
    items = "512,1024,2048,4096,8192,4000x3000x2500" if args.sweep else args.sizes
    for it in items.split(","):
        mnk = tuple(int(x) for x in it.split("x")) if "x" in it else (int(it),) * 3
        sizes.append(mnk)
    rungs = [r for r in gemm.LADDER + (gemm.EXPLORE if args.explore else []) if r.runs_on(INFO.cc)
             and (not args.only or any(s in r.name for s in args.only.split(",")))]
    print("device: %s (sm_%d%d), torch %s, %s" % (INFO.name, INFO.cc[0], INFO.cc[1], torch.__version__,
                                                 time.strftime("%Y-%m-%d")), flush=True)

    ceil = {}
    for shape in ("m16n8k16", "m16n8k8"):
        ceil[shape], _ = measure_ceiling(shape)
    rows, too_slow = [], set()
    bar = tqdm(total=len(sizes) * (len(rungs) + 3), file=sys.stderr, mininterval=2)
    for (M, N, K) in sizes:
        g = torch.Generator(device="cuda").manual_seed(M * 7 + N * 3 + K)
        A32 = torch.randn(M, K, device="cuda", generator=g)
        B32 = torch.randn(K, N, device="cuda", generator=g)
        A16, B16 = A32.half(), B32.half()
        flop = 2.0 * M * N * K
        ref = {"f32": A32 @ B32, "f16": A16.float() @ B16.float()}
        label, f16_f32 = cublas_baseline(A16, B16)
        calls = [("cuBLAS fp32 (torch)", cublas_baseline(A32, B32)[1], "f32"),
                 ("cuBLAS fp16 (torch)", lambda: torch.matmul(A16, B16), "f16")]
        calls += [(CUBLAS_F16_F32, f16_f32, "f16")] if "->fp32" in label else []   # else torch has no out_dtype
        bar.update(3 - len(calls))
        for name, fn, dt in calls:
            ms = gpu_time_ms(fn, args.reps)
            err = rel_err(fn(), ref[dt])
            rows.append(dict(rung=name, dtype=dt, M=M, N=N, K=K, ms=ms, tflops=flop / ms / 1e9, rel_err=err))
            bar.update(1)
        for r in rungs:
            bar.set_description("%s %dx%dx%d" % (r.name, M, N, K))
            if r.name in too_slow or not r.fits(M, N, K):
                bar.update(1)
                continue
            A, B = (A32, B32) if r.dtype == "f32" else (A16, B16)
            C = torch.empty(M, N, device="cuda")
            try:
                ms, err = check_and_time(gemm.prepare(r, A, B, C), C, ref[r.dtype], r.name, reps=args.reps)
            except Exception as e:  # noqa: BLE001  (a failing or wrong rung is reported, the others still run)
                print("\n%s failed: %s: %s" % (r.name, type(e).__name__, str(e)[:300]), flush=True)
                too_slow.add(r.name)
                bar.update(1)
                continue
            if ms > args.slow_limit_ms:
                too_slow.add(r.name)
            rows.append(dict(rung=r.name, dtype=r.dtype, M=M, N=N, K=K, ms=ms, tflops=flop / ms / 1e9,
                             rel_err=err))
            bar.update(1)
        for dt, (A, B) in (("f32", (A32, B32)), ("f16", (A16, B16))):   # the user's call: any size (padded)
            C = torch.empty(M, N, device="cuda")
            ms, err = check_and_time(lambda: matmul(A, B, out=C), C, ref[dt], "matmul auto " + dt, reps=args.reps)
            rows.append(dict(rung="matmul auto " + dt, dtype=dt, M=M, N=N, K=K, ms=ms, tflops=flop / ms / 1e9,
                             rel_err=err))
        del A32, B32, A16, B16, ref
        torch.cuda.empty_cache()
    bar.close()

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "gemm.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
        for shape, v in ceil.items():
            w.writerow(dict(rung="mma.sync ceiling " + shape, dtype="f16", M="", N="", K="", ms="", tflops=v,
                            rel_err=""))
    sass_rows = []
    for r in rungs:
        if args.dump_sass:
            os.makedirs(os.path.join(args.out, "sass"), exist_ok=True)
            with open(os.path.join(args.out, "sass", re.sub(r"\W+", "_", r.name) + ".sass"), "w") as f:
                f.write(sass_text(r.kernel.numba))
        facts = sass_facts(r.kernel.numba)
        sass_rows.append(dict(rung=r.name, **facts))
    keys = sorted({k for s in sass_rows for k in s}, key=lambda k: (k != "rung", k))
    with open(os.path.join(args.out, "sass.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(sass_rows)
    try:
        plot(rows, ceil, os.path.join(args.out, "gemm.png"))
    except Exception as e:  # noqa: BLE001
        print("plot failed:", e)

    print("\nSASS (per kernel): regs, HMMA, LDGSTS, LDSM, LDG.E.128, LDS.128, LDL/STL")
    for s in sass_rows:
        print("  %-34s %s" % (s["rung"], " ".join("%s=%s" % (k, s.get(k, "")) for k in
                                                  ("regs", "HMMA", "LDGSTS", "LDSM", "LDG.E.128", "LDS.128",
                                                   "LDL", "STL", "local_bytes", "error") if k in s)))
    print("\nmma.sync ceiling: m16n8k16 %.1f TFLOP/s, m16n8k8 %.1f" % (ceil["m16n8k16"], ceil["m16n8k8"]))
    for (M, N, K) in sizes:
        sel = [x for x in rows if (x["M"], x["N"], x["K"]) == (M, N, K)]
        base = baselines(sel)
        print("\n%dx%dx%d        TFLOP/s   ms      vs cuBLAS   vs ceiling  rel.err   (f16 rungs against %s)"
              % (M, N, K, CUBLAS_F16_F32 if any(x["rung"] == CUBLAS_F16_F32 for x in sel) else "cuBLAS fp16"))
        for x in sel:
            c = ceil["m16n8k8" if "sm75" in x["rung"] else "m16n8k16"] if x["dtype"] == "f16" else float("nan")
            print("  %-30s %7.1f %8.3f  %6.2f      %6.2f     %.1e" % (
                x["rung"], x["tflops"], x["ms"], x["tflops"] / base[x["dtype"]], x["tflops"] / c, x["rel_err"]))


CUBLAS_F16_F32 = "cuBLAS fp16->fp32 (torch)"


def baselines(rows):
    """dtype -> cuBLAS TFLOP/s the rungs of that dtype are compared with. The tensor-core rungs read fp16 and
    write fp32, so their baseline is cuBLAS doing the same (torch.mm out_dtype=float32, issue 9's
    "cuBLAS fp16->fp32"); the fp16-output call (4-6% faster: half the bytes of C) only where torch
    cannot do that."""
    base = {}
    for x in rows:
        if x["rung"].startswith("cuBLAS") and (x["rung"] == CUBLAS_F16_F32 or x["dtype"] not in base):
            base[x["dtype"]] = x["tflops"]
    return base


def plot(rows, ceil, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    sizes = sorted({(x["M"], x["N"], x["K"]) for x in rows})
    big = max(sizes, key=lambda s: (s == (4096,) * 3, s[0] * s[1] * s[2]))
    sel = [x for x in rows if (x["M"], x["N"], x["K"]) == big and not x["rung"].startswith("cuBLAS")]
    fig, ax = plt.subplots(figsize=(10, 5))
    colors = ["tab:blue" if x["dtype"] == "f32" else "tab:orange" for x in sel]
    ax.bar(range(len(sel)), [x["tflops"] for x in sel], color=colors)
    ax.set_xticks(range(len(sel)))
    ax.set_xticklabels([x["rung"] for x in sel], rotation=60, ha="right", fontsize=8)
    for x in rows:
        if (x["M"], x["N"], x["K"]) == big and x["rung"].startswith("cuBLAS"):
            ax.axhline(x["tflops"], ls="--", color="tab:blue" if x["dtype"] == "f32" else "tab:orange",
                       label="%s %.0f" % (x["rung"], x["tflops"]))
    for shape, v in ceil.items():
        ax.axhline(v, ls=":", color="k" if shape == "m16n8k16" else "gray", label="mma.sync %s ceiling %.0f"
                   % (shape, v))
    ax.set_yscale("log")
    ax.set_ylabel("TFLOP/s")
    ax.set_title("GEMM ladder, %dx%dx%d, %s" % (big + (INFO.name,)))
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
