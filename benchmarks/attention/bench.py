"""Forward attention on the GPU, in one process on the same inputs: PyTorch's scaled_dot_product_attention with
each backend pinned (cuDNN, flash = FlashAttention-2, efficient = memory-efficient, math), a naive attention
(S = Q K^T materialised, softmax, P V), this book's kernels (--ours) and any kernel plugged in with --kernel:

    python benchmarks/attention/bench.py [--seqlens 512 ... 16384] [--dims 64 128] [--dtypes fp16 bf16]
                                         [--masks none causal] [--only cudnn flash ...] [--ours]
                                         [--kernel MODULE:FUNCTION] [--out DIR]

Shapes: B = tokens // S sequences (--tokens, default 16384) and H = width // D heads (--width, default 2048),
so every row moves about the same number of tokens; q, k, v Gaussian, (B, S, H, D) in memory (SDPA gets the
(B, H, S, D) views). Each output is first compared with kernels/attention/reference.py on the last --check-rows
query rows of batch 0, heads 0 and 1 (the last rows of a causal problem are a bottom-right-aligned problem of
their own), ||out - ref|| / ||ref|| below 1e-2; then timed with kernels.timing.gpu_time_ms (GPU time: CUDA
events around launches queued back to back). TFLOP/s counts 4 B H S^2 D (half with a causal mask:
cutelite.teach.attention.attention_flops); GB/s, for the naive attention, the bytes it must move at the least
(cutelite.teach.attention.naive_bytes), beside the copy rate of this GPU measured here (a 1 GiB device-to-device
copy, read + write). A run that does not fit in memory, or that a backend refuses, is a row with its reason.

--ours adds two rows a configuration: "fa3_wgmma", kernels.lib.attention (the library entry) where it picks the
Hopper kernel (an sm_90 GPU; elsewhere a row saying why not), and "fa2_mma", the mma.sync kernel as the entry
builds it off sm_90 (kernels.lib.attention.fa2_kernel). Each is checked through its call (O and LSE poisoned
with NaN first, and none left anywhere) and timed as a prepared launch (its tensor maps or arguments made
once; PyTorch's calls are timed whole, their host work included). Each (D, dtype, mask) is a kernel of its own per
family, compiled once (a minute or so each): the default sweep (2 head dims, 2 dtypes, 2 masks) builds 16. To
build them in parallel, start one run per (dtype, D, mask) at once with `--turns DIR N` (N the number of runs):
each builds its kernels first, then they time one at a time under DIR's lock, the GPU never shared while timing;
join their folders with `python benchmarks/attention/record.py --merge DIR ... --out DIR`.

A kernel plugged in: `--kernel pkg.module:attention` imports attention(q, k, v, causal) -> O or (O, lse), with
q, k, v and O (B, S, H, D) CUDA tensors of the dtype. Writes attention.csv and records.json (what chapter 10
prints: copy it to kernels/attention/records.json) to --out (default: $OUT or .), prints a table last;
`python benchmarks/attention/plot.py DIR` draws the sweep.
"""

import argparse
import datetime
import importlib
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import kernels  # noqa: E402

INFO = kernels.setup()

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

from cutelite.teach.attention import COLUMNS, attention_flops, naive_bytes  # noqa: E402
from kernels.attention.reference import reference  # noqa: E402
from kernels.harness import rel_err  # noqa: E402
from kernels.timing import gpu_time_ms  # noqa: E402
from record import table, write  # noqa: E402

BACKENDS = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION,
            "efficient": SDPBackend.EFFICIENT_ATTENTION, "math": SDPBackend.MATH}
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}
TOL = 1e-2


def sdpa(backend):
    """attention(q, k, v, causal) by SDPA with `backend` pinned, on (B, S, H, D) tensors."""
    def attention(q, k, v, causal):
        with sdpa_kernel([backend]):
            o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                               is_causal=causal)
        return o.transpose(1, 2)
    return attention


def naive(q, k, v, causal):
    """S = (Q / sqrt(D)) K^T in global memory, masked in place, P = softmax(S) in global memory, O = P V."""
    q, k, v = (x.transpose(1, 2) for x in (q, k, v))
    s = torch.matmul(q * q.shape[-1] ** -0.5, k.transpose(-2, -1))
    if causal:
        S_q, S_k = s.shape[-2:]
        s.masked_fill_(torch.ones(S_q, S_k, dtype=torch.bool, device=s.device).triu(S_k - S_q + 1), float("-inf"))
    return torch.matmul(torch.softmax(s, dim=-1), v).transpose(1, 2)


class Ours:
    """One of this book's kernels as a bench entry: attention(q, k, v, causal) -> (O, LSE) for the check, and
    prepare(q, k, v, causal) -> a launch with no arguments for the timing."""

    def __init__(self, name):
        self.name = name

    def why_not(self, q):
        """None where this GPU runs the kernel for q's dtype, else the reason (a row's note)."""
        if self.name == "fa3_wgmma":
            from kernels.lib.attention import pick
            return None if pick(str(q.dtype).replace("torch.", "")) == "hopper" else "not an sm_90 GPU"
        return None

    def _fa2(self, q, causal):
        from kernels.lib.attention import fa2_kernel       # the build attention() makes off sm_90
        D = q.shape[-1]
        return fa2_kernel(D, str(q.dtype).replace("torch.", ""), causal, 1.0 / math.sqrt(D))

    def __call__(self, q, k, v, causal):
        """(O, LSE), both poisoned with NaN before the launch; a RuntimeError if any is left anywhere."""
        if self.name == "fa3_wgmma":
            from kernels.lib.attention import attention
            o, lse = attention(q, k, v, causal, out=torch.full_like(q, math.nan))
        else:
            from kernels.attention import check
            o, lse = check.run(self._fa2(q, causal), q, k, v)
        if o.isnan().any() or lse.isnan().any():
            raise RuntimeError(f"{self.name} left NaN in O or LSE")
        return o, lse

    def prepare(self, q, k, v, causal):
        B, S, H, D = q.shape
        o, lse = torch.empty_like(q), torch.empty((B, H, S), dtype=torch.float32, device=q.device)
        if self.name == "fa3_wgmma":           # the entry's own build: the same (D, dtype, mask, scale, tiles)
            from kernels.attention import fa3_wgmma
            from kernels.lib.attention import HOPPER_BUILD
            return fa3_wgmma.prepare(q, k, v, o, lse, causal, 1.0 / math.sqrt(D), **HOPPER_BUILD[D])
        from kernels.attention.check import device_array
        return self._fa2(q, causal).prepare(*(device_array(x) for x in (q, k, v, o, lse)))


def plugged(spec):
    """(name, attention) of --kernel MODULE:FUNCTION."""
    module, _, name = spec.partition(":")
    if not name:
        raise SystemExit(f"bench: --kernel must be MODULE:FUNCTION, got {spec!r}")
    return spec, getattr(importlib.import_module(module), name)


def copy_gbs():
    """GB/s of a 1 GiB device-to-device copy (bytes read + written), GPU time."""
    a = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    return 2 * a.numel() / gpu_time_ms(lambda: b.copy_(a)) / 1e6


def check(attention, q, k, v, causal, rows):
    """rel_err of attention's output against the reference on the last `rows` queries of batch 0, heads 0-1."""
    out = attention(q, k, v, causal)
    out = out[0] if isinstance(out, tuple) else out
    host = lambda x: x[:1, :, :2].float().cpu().numpy()  # noqa: E731
    want, _ = reference(host(q)[:, -rows:], host(k), host(v), causal=causal)
    return rel_err(out[:1, -rows:, :2], want)


def measure(name, attention, dtype, D, causal, S, args):
    B, H = max(1, args.tokens // S), args.width // D
    row = dict(dtype=dtype, D=D, mask="causal" if causal else "none", S=S, B=B, H=H, kernel=name, ms="",
               **{"TFLOP/s": "", "GB/s": "", "rel_err": "", "note": ""})
    torch.manual_seed(0)
    q, k, v = (torch.randn(B, S, H, D, dtype=DTYPES[dtype], device="cuda") for _ in range(3))
    why_not = getattr(attention, "why_not", lambda q: None)(q)
    if why_not:
        row["note"] = why_not
        return row
    try:
        err = check(attention, q, k, v, causal, min(S, args.check_rows))
        row["rel_err"] = f"{err:.1e}"
        if not err < TOL:
            row["note"] = f"wrong: rel_err {err:.1e} >= {TOL}"
            return row
        launch = attention.prepare(q, k, v, causal) if hasattr(attention, "prepare") else (
            lambda: attention(q, k, v, causal))
        ms = gpu_time_ms(launch)
    except (RuntimeError, torch.cuda.OutOfMemoryError) as e:
        row["note"] = str(e).splitlines()[0][:120]
        return row
    finally:
        torch.cuda.empty_cache()
    row.update(ms=f"{ms:.4f}", **{"TFLOP/s": f"{attention_flops(B, H, S, S, D, causal) / ms / 1e9:.1f}"})
    if name == "naive":
        row["GB/s"] = f"{naive_bytes(B, H, S, S, D, 2, causal) / ms / 1e6:.0f}"
    return row


def build_first(runs, args):
    """Compile every kernel of this book the sweep will time (one small call each), before anything is timed."""
    for dtype in args.dtypes:
        for D in args.dims:
            q, k, v = (torch.randn(1, 256, 2, D, dtype=DTYPES[dtype], device="cuda") for _ in range(3))
            for mask in args.masks:
                for attention in runs.values():
                    if isinstance(attention, Ours) and not attention.why_not(q):
                        attention(q, k, v, mask == "causal")
    torch.cuda.synchronize()


def take_turn(folder, runs_sharing):
    """Wait until `runs_sharing` runs sharing `folder` have built their kernels, then hold its lock until this
    process ends: builds (CPU) run in parallel, timings (GPU) one at a time."""
    import fcntl
    import time
    os.makedirs(folder, exist_ok=True)
    open(os.path.join(folder, "built.%d" % os.getpid()), "w").close()
    while sum(f.startswith("built.") for f in os.listdir(folder)) < runs_sharing:
        time.sleep(1)
    lock = open(os.path.join(folder, "lock"), "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    return lock


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seqlens", type=int, nargs="+", default=[512, 1024, 2048, 4096, 8192, 16384])
    p.add_argument("--dims", type=int, nargs="+", default=[64, 128])
    p.add_argument("--dtypes", nargs="+", default=list(DTYPES), choices=list(DTYPES))
    p.add_argument("--masks", nargs="+", default=["none", "causal"], choices=["none", "causal"])
    p.add_argument("--only", nargs="+", default=list(BACKENDS) + ["naive"], choices=list(BACKENDS) + ["naive"])
    p.add_argument("--ours", action="store_true", help="this book's kernels: fa3_wgmma (sm_90) and fa2_mma")
    p.add_argument("--kernel", action="append", default=[], help="MODULE:FUNCTION, attention(q, k, v, causal)")
    p.add_argument("--tokens", type=int, default=16384)
    p.add_argument("--width", type=int, default=2048)
    p.add_argument("--check-rows", type=int, default=256)
    p.add_argument("--out", default=os.environ.get("OUT", "."))
    p.add_argument("--turns", nargs=2, metavar=("DIR", "N"), help="one of N runs started at once, sharing DIR: "
                   "build this run's kernels first, then time only while holding DIR's lock, once all N have built")
    args = p.parse_args()
    if INFO.simulator:
        raise SystemExit("bench: no GPU here (Numba's simulator is on); run this on a GPU")
    runs = {n: (naive if n == "naive" else sdpa(BACKENDS[n])) for n in args.only}
    if args.ours:
        runs.update((name, Ours(name)) for name in ("fa3_wgmma", "fa2_mma"))
    runs.update(plugged(spec) for spec in args.kernel)
    if args.turns:
        build_first(runs, args)
        lock = take_turn(args.turns[0], int(args.turns[1]))  # noqa: F841 (held until the process ends)
    copy = copy_gbs()
    print(f"{INFO.name}: device-to-device copy {copy:.0f} GB/s", flush=True)
    rows = []
    for dtype in args.dtypes:
        for D in args.dims:
            for mask in args.masks:
                for S in args.seqlens:
                    for name, attention in runs.items():
                        rows.append(measure(name, attention, dtype, D, mask == "causal", S, args))
                        r = rows[-1]
                        print(f"{dtype} D={D} {mask:6s} S={S:5d} B={r['B']:2d} H={r['H']:2d} {name:10s} "
                              f"{r['ms'] or '-':>9s} ms {r['TFLOP/s'] or '-':>6s} TFLOP/s {r['GB/s'] or '':>5s} "
                              f"{r['rel_err']} {r['note']}", flush=True)
    argv = [a for i, a in enumerate(sys.argv[1:]) if not (a.startswith("--out") or sys.argv[i] == "--out")]
    command = "python benchmarks/attention/bench.py " + " ".join(argv)       # where it wrote is not recorded
    run = {"command": command, "date": datetime.date.today().isoformat(),
           "device": f"{INFO.name} (sm_{INFO.gpu_cc[0]}{INFO.gpu_cc[1]})",
           "method": "GPU time (kernels.timing.gpu_time_ms), one process, Gaussian q, k, v",
           "versions": f"torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}",
           "copy_gbs": round(copy)}
    write(rows, run, args.out)
    print(f"\n{INFO.name}, TFLOP/s (4 B H S^2 D, half with a causal mask); copy {copy:.0f} GB/s\n")
    print(table(rows, list(runs)))


if __name__ == "__main__":
    main()
