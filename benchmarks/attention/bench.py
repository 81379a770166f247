"""Forward attention on the GPU, in one process on the same inputs: PyTorch's scaled_dot_product_attention with
each backend pinned (cuDNN, flash = FlashAttention-2, efficient = memory-efficient, math), a naive attention
(S = Q K^T materialised, softmax, P V) and any kernel plugged in with --kernel:

    python benchmarks/attention/bench.py [--seqlens 512 ... 16384] [--dims 64 128] [--dtypes fp16 bf16]
                                         [--masks none causal] [--kernel MODULE:FUNCTION] [--out DIR]

Shapes: B = tokens // S sequences (--tokens, default 16384) and H = width // D heads (--width, default 2048),
so every row moves about the same number of tokens; q, k, v Gaussian, (B, S, H, D) in memory (SDPA gets the
(B, H, S, D) views). Each output is first compared with kernels/attention/reference.py on the last --check-rows
query rows of batch 0, heads 0 and 1 (the last rows of a causal problem are a bottom-right-aligned problem of
their own), ||out - ref|| / ||ref|| below 1e-2; then timed with kernels.timing.gpu_time_ms (GPU time: CUDA
events around launches queued back to back). TFLOP/s counts 4 B H S^2 D (half with a causal mask:
cutelite.teach.attention.attention_flops); GB/s, for the naive attention, the bytes it must move at the least
(cutelite.teach.attention.naive_bytes), beside the copy rate of this GPU measured here (a 1 GiB device-to-device
copy, read + write). A run that does not fit in memory, or that a backend refuses, is a row with its reason.

A kernel plugged in: `--kernel pkg.module:attention` imports attention(q, k, v, causal) -> O or (O, lse), with
q, k, v and O (B, S, H, D) CUDA tensors of the dtype. Writes attention.csv and records.json (what chapter 10
prints: copy it to kernels/attention/records.json) to --out (default: $OUT or .), prints a table last.
"""

import argparse
import csv
import datetime
import importlib
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import kernels  # noqa: E402

INFO = kernels.setup()

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

from cutelite.teach.attention import attention_flops, naive_bytes  # noqa: E402
from cutelite.teach.records import dump  # noqa: E402
from kernels.attention.reference import reference  # noqa: E402
from kernels.harness import rel_err  # noqa: E402
from kernels.timing import gpu_time_ms  # noqa: E402

BACKENDS = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION,
            "efficient": SDPBackend.EFFICIENT_ATTENTION, "math": SDPBackend.MATH}
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}
COLUMNS = ["dtype", "D", "mask", "S", "B", "H", "kernel", "ms", "TFLOP/s", "GB/s", "rel_err", "note"]
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
    try:
        err = check(attention, q, k, v, causal, min(S, args.check_rows))
        row["rel_err"] = f"{err:.1e}"
        if not err < TOL:
            row["note"] = f"wrong: rel_err {err:.1e} >= {TOL}"
            return row
        ms = gpu_time_ms(lambda: attention(q, k, v, causal))
    except (RuntimeError, torch.cuda.OutOfMemoryError) as e:
        row["note"] = str(e).splitlines()[0][:120]
        return row
    finally:
        torch.cuda.empty_cache()
    row.update(ms=f"{ms:.4f}", **{"TFLOP/s": f"{attention_flops(B, H, S, S, D, causal) / ms / 1e9:.1f}"})
    if name == "naive":
        row["GB/s"] = f"{naive_bytes(B, H, S, S, D, 2, causal) / ms / 1e6:.0f}"
    return row


def number(cell):
    """A cell of the CSV as the record holds it: a number as a number, "" (not measured) as None, text as text."""
    if cell == "" or not isinstance(cell, str):
        return None if cell == "" else cell
    try:
        return int(cell) if cell.lstrip("-").isdigit() else float(cell)
    except ValueError:
        return cell


def table(rows, names):
    """The TFLOP/s of each kernel (columns) for each configuration (rows), as Markdown."""
    configs = list(dict.fromkeys((r["dtype"], r["D"], r["mask"], r["S"]) for r in rows))
    got = {(r["dtype"], r["D"], r["mask"], r["S"], r["kernel"]): r["TFLOP/s"] or "-" for r in rows}
    lines = ["| dtype | D | mask | S | " + " | ".join(names) + " | naive GB/s |",
             "|---|---|---|---|" + "---|" * (len(names) + 1)]
    gbs = {(r["dtype"], r["D"], r["mask"], r["S"]): r["GB/s"] or "-" for r in rows if r["kernel"] == "naive"}
    for c in configs:
        lines.append("| " + " | ".join(map(str, c)) + " | " + " | ".join(got.get(c + (n,), "") for n in names)
                     + f" | {gbs.get(c, '')} |")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seqlens", type=int, nargs="+", default=[512, 1024, 2048, 4096, 8192, 16384])
    p.add_argument("--dims", type=int, nargs="+", default=[64, 128])
    p.add_argument("--dtypes", nargs="+", default=list(DTYPES), choices=list(DTYPES))
    p.add_argument("--masks", nargs="+", default=["none", "causal"], choices=["none", "causal"])
    p.add_argument("--only", nargs="+", default=list(BACKENDS) + ["naive"], choices=list(BACKENDS) + ["naive"])
    p.add_argument("--kernel", action="append", default=[], help="MODULE:FUNCTION, attention(q, k, v, causal)")
    p.add_argument("--tokens", type=int, default=16384)
    p.add_argument("--width", type=int, default=2048)
    p.add_argument("--check-rows", type=int, default=256)
    p.add_argument("--out", default=os.environ.get("OUT", "."))
    args = p.parse_args()
    if INFO.simulator:
        raise SystemExit("bench: no GPU here (Numba's simulator is on); run this on a GPU")
    runs = {n: (naive if n == "naive" else sdpa(BACKENDS[n])) for n in args.only}
    runs.update(plugged(spec) for spec in args.kernel)
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
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "attention.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, COLUMNS)
        w.writeheader()
        w.writerows(rows)
    command = "python benchmarks/attention/bench.py " + " ".join(sys.argv[1:])
    record = {"about": "Chapter 10's record: forward attention measured by benchmarks/attention/bench.py (its "
                       "attention.csv). run: where and how, copy_gbs the device-to-device copy rate measured in the "
                       "same process; rows: " + ", ".join(COLUMNS) + " (null where not measured; note says why).",
              "run": {"command": command, "date": datetime.date.today().isoformat(),
                      "device": f"{INFO.name} (sm_{INFO.gpu_cc[0]}{INFO.gpu_cc[1]})",
                      "method": "GPU time (kernels.timing.gpu_time_ms), one process, Gaussian q, k, v",
                      "versions": f"torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}",
                      "copy_gbs": round(copy)},
              "rows": [[number(r[c]) for c in COLUMNS] for r in rows]}
    dump(record, os.path.join(args.out, "records.json"))
    print(f"\n{INFO.name}, TFLOP/s (4 B H S^2 D, half with a causal mask); copy {copy:.0f} GB/s\n")
    print(table(rows, list(runs)))


if __name__ == "__main__":
    main()
