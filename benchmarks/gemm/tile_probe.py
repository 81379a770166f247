"""Which tile should matmul run where its rule misses issue 30's targets? Every candidate Tile (rows, columns,
splits of K, stream-K) forced on matmul's Hopper path (kernels.lib.wgmma's choose_tile replaced), checked
against cuBLAS with the output poisoned with NaN, then timed beside cuBLAS (GPU time of back-to-back calls,
kernels.harness.time_rounds, interleaved rounds; fp16 row-major in, fp32 out, Gaussian data). The rule's own
choice is marked. A table last: per shape, the rule's ratio to cuBLAS and the best candidate's.

    PYTHONPATH=. python3 benchmarks/gemm/tile_probe.py [--sizes MxNxK ...] [--build 128x128/split ...] [--out F]
                                                       [--stages 4 ...]   # each candidate also with 4 stages

A build is one compiled kernel (rows x columns, plain, split or stream-K; the number of splits is an argument
of the launch): --build keeps the candidates of those builds only, so that several processes can compile in
parallel (--barrier: all check before any times; each times under CUTE_GPU_LOCK, kernels.timing) and write
their rows to --out (JSON lines);
`--table F ...` prints the table of such files.
"""
import argparse
import contextlib
import json
import os
import statistics
import sys
import time

SIZES = [(1024, 1024, 1024), (2048, 2048, 2048), (3072, 3072, 3072), (128, 4096, 4096), (16, 4096, 4096),
         (1, 4096, 4096), (128, 11008, 4096), (64, 11008, 4096), (256, 4096, 4096), (512, 512, 512),
         (777, 1333, 2049), (4096, 4096, 4096)]


def build_of(tile):
    return "%dx%d/%s" % (tile.BM, tile.BN, "split" if tile.splits > 1 else "sk" if tile.stream_k else "plain")


def candidates(M, N, K, n_sm):
    """The Tiles worth timing for an M x N x K fp16 product: 64 or 128 rows (64 only where M <= 64), 128 or
    256 columns, no split,
    2-8 splits of at least 2 k-tiles each where the tiles fill at most the SMs, and stream-K where the tiles
    do not fill whole waves."""
    from kernels.lib.shapes import Tile
    out = []
    k_tiles = -(-K // 64)
    for BM in (64, 128) if M > 64 else (64,):
        for BN in (128, 256):
            tiles = -(-M // BM) * -(-N // BN)
            out.append(Tile(BM, BN, 1))
            out += [Tile(BM, BN, s) for s in (2, 4, 8) if k_tiles >= 2 * s and tiles * s <= 2 * n_sm]
            if tiles % n_sm:
                out.append(Tile(BM, BN, 1, True))
    return out


@contextlib.contextmanager
def forced(tile, stages=None):
    """matmul's calls prepared inside run `tile` (kernels.lib.wgmma's choose_tile replaced), with `stages`
    stages where given (its config_for's count otherwise)."""
    wgmma = sys.modules["kernels.lib.wgmma"]
    rule, config_for = wgmma.choose_tile, wgmma.config_for
    wgmma.choose_tile = lambda *shape: tile
    if stages:
        wgmma.config_for = lambda t: dict(config_for(t), stages=stages)
    try:
        yield
    finally:
        wgmma.choose_tile, wgmma.config_for = rule, config_for


def meet(barrier, name):
    """Wait (at most 9 minutes) until the processes sharing `barrier` = "DIR N" have all arrived: N files in DIR,
    this one's (`name`) among them; a wrapper may add the same name for a process that ended early. So that no
    process compiles while another times."""
    folder, n = barrier.split()
    os.makedirs(folder, exist_ok=True)
    open(os.path.join(folder, name), "w").close()
    end = time.time() + 540
    while len(os.listdir(folder)) < int(n) and time.time() < end:
        time.sleep(1)


def probe(sizes, builds, rounds, reps, out, barrier=None, stages=()):
    import kernels
    kernels.setup(verbose=False)
    import torch
    from kernels.harness import check, cublas_baseline, time_rounds
    from kernels.lib import matmul
    from kernels.lib.shapes import choose_tile
    from cutelite.numeric import numeric
    n_sm = torch.cuda.get_device_properties(0).multi_processor_count
    torch.manual_seed(0)
    checked = []
    for M, N, K in sizes:
        rule = choose_tile(M, N, K, numeric("float16"), n_sm)
        tiles = [t for t in candidates(M, N, K, n_sm) if not builds or build_of(t) in builds]
        if not tiles:
            continue
        a = torch.randn(M, K, device="cuda").half()
        b = torch.randn(K, N, device="cuda").half()
        ref = cublas_baseline(a, b)[1]()
        calls, outs = {"cuBLAS": cublas_baseline(a, b, out=torch.empty(M, N, device="cuda"))[1]}, []
        for t, st in [(t, st) for t in tiles for st in (None,) + tuple(stages)]:
            c = torch.empty(M, N, device="cuda")
            outs.append(c)                          # alive: each candidate its own prepared call
            with forced(t, st):
                try:
                    check(lambda: matmul(a, b, out=c), c, ref, "matmul %dx%dx%d as %s" % (M, N, K, t))
                except Exception as e:  # noqa: BLE001  (a candidate the kernel refuses: say so, time the rest)
                    print("%dx%dx%d %s: %s: %s" % (M, N, K, t, type(e).__name__, str(e)[:200]), flush=True)
                    continue
            calls[t, st] = lambda a=a, b=b, c=c: matmul(a, b, out=c)
        checked.append(((M, N, K), rule, calls, outs))
    if barrier:
        meet(barrier, os.path.basename(out or str(os.getpid())))
    for (M, N, K), rule, calls, _ in checked:
        times = time_rounds(calls, rounds, reps)
        for key in calls:
            if key == "cuBLAS":
                continue
            t, st = key
            ratio = statistics.median(cu / x for cu, x in zip(times["cuBLAS"], times[key]))
            row = dict(M=M, N=N, K=K, BM=t.BM, BN=t.BN, splits=t.splits, stream_k=t.stream_k, stages=st,
                       rule=t == rule and st is None, ratio=round(ratio, 3), ms=round(statistics.median(times[key]), 5),
                       cublas_ms=round(statistics.median(times["cuBLAS"]), 5))
            print(json.dumps(row), flush=True)
            if out:
                with open(out, "a") as f:
                    f.write(json.dumps(row) + "\n")


def table(files):
    rows = [json.loads(line) for f in files for line in open(f) if line.strip()]
    shapes = sorted({(r["M"], r["N"], r["K"]) for r in rows}, key=lambda s: s[0] * s[1] * s[2])
    print("| M x N x K | rule's tile | rule / cuBLAS | best tile | best / cuBLAS | candidates |")
    print("|---|---|---|---|---|---|")
    name = lambda r: "%dx%d%s%s%s" % (r["BM"], r["BN"], "/%d" % r["splits"] if r["splits"] > 1 else "",  # noqa: E731
                                       " SK" if r["stream_k"] else "", " st%d" % r["stages"] if r.get("stages") else "")
    for s in shapes:
        rs = [r for r in rows if (r["M"], r["N"], r["K"]) == s]
        best = max(rs, key=lambda r: r["ratio"])
        rule = [r for r in rs if r["rule"]]
        print("| %dx%dx%d | %s | %s | %s | %.2f | %s |" % (
            s + (name(rule[0]) if rule else "-", "%.2f" % rule[0]["ratio"] if rule else "-", name(best),
                 best["ratio"], ", ".join("%s %.2f" % (name(r), r["ratio"]) for r in
                                           sorted(rs, key=lambda r: -r["ratio"])))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", nargs="*", default=None, help="MxNxK ...")
    ap.add_argument("--build", nargs="*", default=None, help="e.g. 128x128/split 64x128/sk 128x256/plain")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--out", default=None)
    ap.add_argument("--stages", type=int, nargs="*", default=(), help="also each candidate with these stages")
    ap.add_argument("--barrier", default=None, help='"DIR N": time only once N processes have checked')
    ap.add_argument("--table", nargs="*", default=None, help="print the table of these --out files")
    args = ap.parse_args()
    if args.table:
        return table(args.table)
    sizes = [tuple(int(x) for x in s.split("x")) for s in args.sizes] if args.sizes else SIZES
    probe(sizes, set(args.build or ()), args.rounds, args.reps, args.out, args.barrier, args.stages)


if __name__ == "__main__":
    main()
