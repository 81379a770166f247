"""`matmul` as users call it, against cuBLAS and a Triton `tl.dot` kernel in one process (issue 21's sweep).

For every size, dtype (f16, bf16) and majorness of A and B (row- or column-major each): Gaussian inputs as
PyTorch tensors, `matmul(a, b, out=c)` checked against cuBLAS's product (output poisoned with NaN first),
then GPU time (kernels.timing.gpu_time_ms, back-to-back calls, the host's per-call work included in the
queue) of matmul, cuBLAS (`torch.mm(a, b, out_dtype=torch.float32, out=c)`) and the Triton kernel below,
all reading the same tensors and writing fp32, in --rounds interleaved rounds (clock drift hits all three
alike; the table gives the median ratio). Each row names the tile and split of K matmul's rule chose
(kernels.lib.shapes.choose_tile), the TFLOP/s and GB/s of matmul and cuBLAS (A, B read once, C written once),
and issue 30's target for the shape, met or missed (`target`): M <= 64 with N, K >= 4096 (memory-bound) 0.8 of
cuBLAS's bandwidth, else 0.9 of cuBLAS at >= 2^32 multiply-adds, 0.7 at >= 2^28, none below. Prints a Markdown
table (ratios to cuBLAS) and writes it, the raw times (JSON) and a plot (PNG, where matplotlib is installed) to
--out.

First, --fuzz random shapes (drawn so that every tile and split of the rule comes up; the tiles hit are
counted) are checked against cuBLAS with the output poisoned with NaN, each call made twice (the second a
replay of the prepared call); then --splitk-fuzz shapes the rule splits (small M, long K) and --streamk-fuzz
shapes it runs stream-K (a part-full last wave), each into an `out` that is a column slice of a wider tensor
(the memset before split-K's or stream-K's adds must clear C's elements, or the box of the last wave's
tiles, and no byte beside them); a miss stops the script before any timing. Where the rule chose stream-K,
the row also times matmul with stream-K off (the same tile, the last wave part full): what it buys.

    PYTHONPATH=. python3 benchmarks/gemm/matmul_sweep.py --quick              # under 4 minutes on an H100
    PYTHONPATH=. python3 benchmarks/gemm/matmul_sweep.py --set llm --fp16     # one set, fp16 row-major only
    PYTHONPATH=. python3 benchmarks/gemm/matmul_sweep.py [--sizes MxNxK ...] [--rounds 3] [--out DIR]

--quick: fp16, both operands row-major, QUICK's shapes, no Triton, 24 fuzz cases (fp16, row- or
column-major). --set NAME: one of SETS' shape lists (each under 8 minutes with --fp16). The default: every
shape of SIZES, both dtypes and the four majorness pairs, Triton too.
"""
import argparse
import collections
import contextlib
import json
import os
import random
import statistics
import sys
import time

import kernels

kernels.setup()
import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from kernels.lib import matmul  # noqa: E402
from kernels.lib.shapes import choose_tile  # noqa: E402
from cutelite.numeric import numeric  # noqa: E402
from kernels.harness import check, cublas_baseline, time_rounds  # noqa: E402
from plot_matmul_sweep import plot  # noqa: E402  (beside this script)

ISSUE_30 = [(3072, 3072, 3072), (1024, 1024, 1024), (16, 4096, 4096), (128, 11008, 4096), (777, 1333, 2049),
            (4096, 4096, 16384)]
LLM = [(b, n, k) for b in (1, 16, 64, 128)          # decoding batches through a 7B (4096 wide) and a 70B layer
       for n, k in ((4096, 4096), (12288, 4096), (11008, 4096), (4096, 11008), (8192, 8192), (28672, 8192),
                    (8192, 28672))]
SQUARES = [(s, s, s) for s in (256, 512, 1024, 2048, 3072, 4096, 6144, 8192, 16384)]
ODD = [(4000, 3000, 2500), (1000, 1000, 1000), (333, 4097, 999), (5000, 50, 3000), (2049, 2047, 4095),
       (4096, 14336, 4096)]
DECODE = [(b, n, k) for b in (1, 16, 64, 128)       # issue 30's LLM layers at batch 1-128 (7B's 4096 x 11008 MLP,
           for n, k in ((4096, 4096), (4096, 11008), (11008, 4096), (4096, 14336), (14336, 4096))]   # 8B's 14336)
ODD += [(777, 1333, 2049), (1, 1, 8192), (17, 5000, 3333), (100, 777, 12289), (129, 4097, 4097)]
SIZES = list(dict.fromkeys(ISSUE_30 + DECODE + LLM + SQUARES + ODD))
SETS = {"issue30": ISSUE_30, "llm": list(dict.fromkeys(DECODE + LLM)), "squares": SQUARES, "odd": ODD}
QUICK = [(1, 4096, 4096), (16, 4096, 4096), (64, 4096, 11008), (64, 11008, 4096), (64, 14336, 4096),
         (128, 11008, 4096), (128, 4096, 4096),
         (777, 1333, 2049), (1024, 1024, 1024), (3072, 3072, 3072), (4096, 4096, 4096), (4096, 4096, 16384),
         (8192, 8192, 8192)]
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


def oriented(x, major):
    """The CUDA tensor x as a row-major ("row") or column-major ("col") tensor of the same shape."""
    return x if major == "row" else x.T.contiguous().T


def tile_of(M, N, K, dt):
    """matmul's tile for this shape on this GPU, as the rule chose it: "BMxBN" and "/splits" where it splits."""
    t = choose_tile(M, N, K, numeric(str(dt)[6:]), torch.cuda.get_device_properties(0).multi_processor_count)
    return "%dx%d%s%s" % (t.BM, t.BN, "/%d" % t.splits if t.splits > 1 else "", " SK" if t.stream_k else "")


@contextlib.contextmanager
def stream_k_off():
    """matmul's calls prepared inside: the rule's tile without stream-K (kernels.lib.wgmma's choose_tile
    wrapped); a call prepared here keeps its launch when replayed later."""
    wgmma = sys.modules["kernels.lib.wgmma"]
    rule = wgmma.choose_tile
    wgmma.choose_tile = lambda *shape: rule(*shape)._replace(stream_k=False)
    try:
        yield
    finally:
        wgmma.choose_tile = rule


def target(M, N, K):
    """Issue 30's target for an M x N x K product, as (what is compared, the least ratio to cuBLAS), or None."""
    if M <= 64 and N >= 4096 and K >= 4096:
        return "GB/s", 0.8          # memory-bound: the bytes are the same, so the ratio of GB/s is the ratio of times
    if M * N * K >= 2 ** 32:
        return "TFLOP/s", 0.9
    if M * N * K >= 2 ** 28:
        return "TFLOP/s", 0.7
    return None


def splitk_fuzz(cases, dtypes, seed=1, stream_k=False):
    """Check matmul on `cases` random shapes the rule splits (M 1-128, N 64-4096, K 2048-16384), or with
    stream_k runs stream-K (M 1-3000, N 64-12288, K 64-8192), of a dtype of `dtypes`, A and B row- or
    column-major, against cuBLAS, C a column slice of a wider tensor poisoned with NaN and the columns beside
    it holding a sentinel: C must be A @ B, each call twice, and the sentinel untouched. Raises on a miss."""
    rng = random.Random(seed)
    n_sm = torch.cuda.get_device_properties(0).multi_processor_count
    done, splits = 0, collections.Counter()
    name = "stream-K" if stream_k else "split-K"
    while done < cases:
        if stream_k:
            M, N, K = rng.choice((rng.randint(1, 64), rng.randint(65, 3000))), rng.randint(64, 12288), rng.randint(64, 8192)
        else:
            M, N, K = rng.randint(1, 128), rng.randint(64, 4096), rng.randint(2048, 16384)
        dt = rng.choice(dtypes)
        t = choose_tile(M, N, K, numeric(str(dt)[6:]), n_sm)
        if not (t.stream_k if stream_k else t.splits > 1):
            continue
        am, bm = rng.choice(("row", "col")), rng.choice(("row", "col"))
        a = oriented(torch.randn(M, K, device="cuda").to(dt), am)
        b = oriented(torch.randn(K, N, device="cuda").to(dt), bm)
        wide = torch.full((M, N + 8), 7.0, device="cuda")
        c, ref = wide[:, :N], cublas_baseline(a, b)[1]()
        for call in ("first", "again"):
            c.fill_(float("nan"))
            what = "%s fuzz %d: matmul %dx%dx%d %s %s/%s (%s), %s call" % (name, done, M, N, K, str(dt)[6:], am, bm,
                                                                        tile_of(M, N, K, dt), call)
            check(lambda: matmul(a, b, out=c), c, ref, what)
            if not bool((wide[:, N:] == 7.0).all()):
                raise AssertionError(what + ": the columns beside C were overwritten")
        splits[tile_of(M, N, K, dt)] += 1
        done += 1
    print("%s fuzz: %d cases PASS (C poisoned with NaN, the bytes beside it kept, each call twice); tiles: %s"
          % (name, cases, ", ".join("%s: %d" % kv for kv in sorted(splits.items()))), flush=True)


def fuzz(cases, dtypes, majors, seed=0):
    """Check matmul on `cases` random shapes (M of 1-64, 65-400 or 401-3000; N and K up to 12288) against
    cuBLAS, outputs poisoned with NaN, each call twice; print the tiles the rule chose, counted. Raises on a
    miss."""
    rng = random.Random(seed)
    hits = collections.Counter()
    for i in range(cases):
        M = rng.choice((rng.randint(1, 64), rng.randint(65, 400), rng.randint(401, 3000)))
        N, K = rng.randint(1, 12288), rng.choice((rng.randint(1, 1024), rng.randint(1025, 12288)))
        dt, am, bm = rng.choice(dtypes), rng.choice(majors), rng.choice(majors)
        a = oriented(torch.randn(M, K, device="cuda").to(dt), am)
        b = oriented(torch.randn(K, N, device="cuda").to(dt), bm)
        c, ref = torch.empty(M, N, device="cuda"), cublas_baseline(a, b)[1]()
        for call in ("first", "again"):
            check(lambda: matmul(a, b, out=c), c, ref, "fuzz %d: matmul %dx%dx%d %s %s/%s, %s call" % (
                i, M, N, K, str(dt)[6:], am, bm, call))
        tile = tile_of(M, N, K, dt)
        hits[tile.split("/")[0] + (" split-K" if "/" in tile else "")] += 1
    print("fuzz: %d cases PASS (outputs poisoned with NaN, each call twice); tiles: %s" % (
        cases, ", ".join("%s %d" % kv for kv in sorted(hits.items()))), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", nargs="*", default=None, help="MxNxK ...")
    ap.add_argument("--quick", action="store_true", help="QUICK's shapes, fp16 row-major, no Triton (< 4 minutes)")
    ap.add_argument("--set", choices=sorted(SETS), default=None, help="one list of shapes (SETS)")
    ap.add_argument("--fp16", action="store_true", help="fp16, row-major operands only, no Triton")
    ap.add_argument("--fuzz", type=int, default=None, help="random shapes checked first (default 24 quick, else 64)")
    ap.add_argument("--splitk-fuzz", type=int, default=12, help="random split-K shapes checked first")
    ap.add_argument("--streamk-fuzz", type=int, default=16, help="random stream-K shapes checked first")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    sizes = ([tuple(int(x) for x in s.split("x")) for s in args.sizes] if args.sizes else QUICK if args.quick else
             SETS[args.set] if args.set else SIZES)
    short = args.quick or args.fp16
    dtypes = (torch.float16,) if short else (torch.float16, torch.bfloat16)
    pairs = [("row", "row")] if short else [(a, b) for a in ("row", "col") for b in ("row", "col")]
    torch.manual_seed(0)
    fuzz(24 if args.fuzz is None and short else 64 if args.fuzz is None else args.fuzz, dtypes, ("row", "col"))
    splitk_fuzz(args.splitk_fuzz, dtypes)
    splitk_fuzz(args.streamk_fuzz, dtypes, seed=2, stream_k=True)
    lines = ["| M x N x K | dtype | A, B | tile | matmul / cuBLAS | no stream-K / cuBLAS | Triton / cuBLAS | matmul "
             "TFLOP/s | cuBLAS TFLOP/s | matmul GB/s | cuBLAS GB/s | target | matmul rel. err |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    raw = []
    for (M, N, K) in sizes:
        for dt in dtypes:
            a0 = torch.randn(M, K, device="cuda").to(dt)
            b0 = torch.randn(K, N, device="cuda").to(dt)
            c = torch.empty(M, N, device="cuda")
            for am, bm in pairs:
                a, b = oriented(a0, am), oriented(b0, bm)
                ref = cublas_baseline(a, b)[1]()
                err = check(lambda: matmul(a, b, out=c), c, ref, "matmul %dx%dx%d %s" % (M, N, K, dt))
                calls = {"cuBLAS": cublas_baseline(a, b, out=c)[1], "matmul": lambda: matmul(a, b, out=c)}
                if tile_of(M, N, K, dt).endswith("SK"):
                    c_off = torch.empty(M, N, device="cuda")     # its own `out`: its own prepared call
                    with stream_k_off():
                        check(lambda: matmul(a, b, out=c_off), c_off, ref, "matmul %dx%dx%d %s, stream-K off" % (
                            M, N, K, dt))
                    calls["no stream-K"] = lambda: matmul(a, b, out=c_off)
                if not short:
                    triton_mm(a, b, c)              # autotuned here, outside the timing
                    calls["Triton"] = lambda: triton_mm(a, b, c)
                t = time_rounds(calls, args.rounds, args.reps)
                ratio = {name: statistics.median(cu / x for cu, x in zip(t["cuBLAS"], t[name])) for name in t}
                gb = (M * K + K * N) * a.element_size() + M * N * 4          # A, B read once, C written once
                rate = {name: gb / 1e6 / statistics.median(t[name]) for name in t}
                flops = {name: 2e-9 * M * N * K / statistics.median(t[name]) for name in t}
                goal = target(M, N, K)
                verdict = "-" if goal is None else "%s %s >= %.1f" % (
                    "met" if ratio["matmul"] >= goal[1] else "MISSED", goal[0], goal[1])
                cell = dict(M=M, N=N, K=K, dtype=str(dt)[6:], A=am, B=bm, tile=tile_of(M, N, K, dt), ms=t, err=err,
                            target=verdict)
                raw.append(cell)
                line = "| %dx%dx%d | %s | %s, %s | %s | %.2f | %s | %s | %.1f | %.1f | %.0f | %.0f | %s | %.1e |" % (
                    M, N, K, str(dt)[6:], am, bm, cell["tile"], ratio["matmul"],
                    "%.2f" % ratio["no stream-K"] if "no stream-K" in ratio else "-",
                    "%.2f" % ratio["Triton"] if "Triton" in ratio else "-", flops["matmul"], flops["cuBLAS"],
                    rate["matmul"], rate["cuBLAS"], verdict, err)
                print(line, flush=True)
                lines.append(line)
    head = "%s, %s, torch %s, triton %s, GPU time of back-to-back calls (median of %d)" % (
        time.strftime("%Y-%m-%d"), torch.cuda.get_device_name(), torch.__version__, triton.__version__, args.reps)
    head += ", median ratio of %d interleaved rounds" % args.rounds + (", --quick" if args.quick else "")
    head += (", --set " + args.set if args.set else "") + (", --fp16" if args.fp16 else "")
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
