"""python -m kernels.attention.check [--cases N] [--seed S] [--dims 64,128] [--dtypes float16,bfloat16]
[--config BM,BN,warps] [--no-fuzz] [--no-bench] [--variants NAME,...]: fa2_mma on the GPU, checked and timed
against PyTorch.

First a fuzz: random shapes (S_q and S_k of any length, not multiples of a tile, S_q != S_k), both masks,
grouped-query heads, fp16 and bf16, D 64 and 128, Q/K/V as (B, S, H, D) arrays or transposed views of
(B, H, S, D) ones; O and LSE poisoned with NaN before each call and compared element-wise with a float32
reference on the GPU (torch's scaled_dot_product_attention for O, logsumexp of the same scores for LSE), one
PASS or FAIL line a case. Then the speed, in GPU time (CUDA events, interleaved rounds, the median), against
SDPA's flash backend (FlashAttention-2) at B = 4, H = 16, D = 128 and H = 32, D = 64, S = 4096, fp16,
Gaussian data: TFLOP/s counted as 4 B H S_q S_k D (half with the causal mask) and the ratio.
Each (D, dtype, mask) is a kernel of its own, compiled once (a minute or two each): --dims and --dtypes keep
the fuzz to some of them.

--variants compares make's build options (VARIANTS: the old default and what FlashAttention-2 does) in one
process instead: each variant's kernels at the four speed shapes, a short NaN-poisoned fuzz of each kernel at
random shapes, then one table of every variant against the flash backend, last.
"""

import argparse
import math

import numpy as np

TOL = {"float16": 1e-2, "bfloat16": 4e-2}     # max |O - reference|: P and O rounded to 16 bits
LSE_TOL = 2e-3


def _torch():
    import torch
    return torch, {"float16": torch.float16, "bfloat16": torch.bfloat16}


def device_array(x):
    """A torch tensor on the GPU as the Numba device array the kernel takes (16-bit floats as their bits)."""
    from numba import cuda
    torch, _ = _torch()
    if x.dtype in (torch.float16, torch.bfloat16):
        return cuda.as_cuda_array(x.view(torch.int16), sync=False).view(np.uint16)
    return cuda.as_cuda_array(x, sync=False)


def reference(q, k, v, causal, scale):
    """(O, LSE) in float32 on the GPU for q (B, S_q, H, D), k and v (B, S_k, H_kv, D): SDPA's math on float32
    copies, the causal mask aligned bottom-right, a row with no key O = 0 and LSE = -inf."""
    torch, _ = _torch()
    F = torch.nn.functional
    S_q, H, S_k = q.shape[1], q.shape[2], k.shape[1]
    qf, kf, vf = (x.float().transpose(1, 2) for x in (q, k, v))          # (B, H, S, D)
    kf, vf = (x.repeat_interleave(H // x.shape[1], dim=1) for x in (kf, vf))
    keep = torch.ones(S_q, S_k, dtype=torch.bool, device=q.device)
    if causal:
        keep = torch.arange(S_k, device=q.device)[None, :] <= torch.arange(S_q, device=q.device)[:, None] + S_k - S_q
    o = F.scaled_dot_product_attention(qf, kf, vf, attn_mask=keep, scale=scale)
    o = torch.nan_to_num(o.transpose(1, 2), nan=0.0)                     # a row with no key: 0, as the kernel
    s = (qf @ kf.transpose(-1, -2)) * scale
    lse = torch.logsumexp(s.masked_fill(~keep, -math.inf), dim=-1)
    return o, lse


_KERNELS = {}
CONFIG = {}         # the tile configuration (BM, BN, warps): fa2_mma.make's defaults unless --config says
# make's options compared by --variants, by D and mask (None: no such kernel, or the default's): the causal grid
# heaviest q-tiles first; 4 warps of 32 rows (one ldmatrix of K or V feeds 4 mma, not 2: half the shared-memory
# reads of 8 warps of 16 rows), longest-first when causal: with Q in registers at D = 64 (ROWS32), and with
# FlashAttention-2's own tiles for A100 and H100 (fa2_mma.FA2_TILES, from its flash_fwd_launch_template.h, cited
# in book/references.bib: Q read from shared memory beside each K tile, 128 keys a tile at D = 64 and 64 at D = 128).
# ptxas fits each in 255 registers with about 90 bytes spilled (at D = 128 about ten local loads and stores an
# iteration, beside 256 mma; `python tests/test_attention_ptx.py --variants` prints registers and spills)
ROWS32 = {64: dict(BM=128, BN=64, warps=4)}
VARIANTS = {"default": lambda D, causal: {},
            "longest_first": lambda D, causal: dict(longest_first=True) if causal else None,
            "rows32": lambda D, causal: dict(ROWS32[D], longest_first=causal) if D in ROWS32 else None,
            "fa2_tiles": lambda D, causal: dict(_fa2_tiles(D), longest_first=causal)}


def _fa2_tiles(D):
    from .fa2_mma import FA2_TILES
    return FA2_TILES[D]


def kernel(D, dtype, causal, scale, **options):
    """fa2_mma for this configuration, built once (options: make's; CONFIG where none are given)."""
    from . import fa2_mma
    options = options or CONFIG
    key = (D, dtype, causal, scale, tuple(sorted(options.items())))
    if key not in _KERNELS:
        _KERNELS[key] = fa2_mma.make(D=D, dtype=dtype, causal=causal, scale=scale, **options)
    return _KERNELS[key]


def inputs(B, S_q, S_k, H, H_kv, D, dtype, heads_first, seed):
    """Gaussian q (B, S_q, H, D), k and v (B, S_k, H_kv, D) on the GPU; with heads_first, views of (B, H, S, D)
    arrays."""
    torch, types = _torch()
    g = torch.Generator(device="cuda").manual_seed(seed)

    def make(S, h):
        shape = (B, h, S, D) if heads_first else (B, S, h, D)
        x = torch.randn(shape, generator=g, device="cuda", dtype=torch.float32).to(types[dtype])
        return x.transpose(1, 2) if heads_first else x

    return make(S_q, H), make(S_k, H_kv), make(S_k, H_kv)


def run(k, q, kk, v):
    """(O, LSE) of the kernel, both poisoned with NaN first."""
    torch, _ = _torch()
    B, S_q, H, D = q.shape
    o = torch.full((B, S_q, H, D), math.nan, dtype=q.dtype, device="cuda")
    lse = torch.full((B, H, S_q), math.nan, dtype=torch.float32, device="cuda")
    k.launch(*(device_array(x) for x in (q, kk, v, o, lse)))
    torch.cuda.synchronize()
    return o, lse


def fuzz(cases, seed, dims=(64, 128), dtypes=("float16", "bfloat16"), causal=None, options=None, label=""):
    """Random cases, one PASS / FAIL line each; the number that failed. causal: both masks (None) or one;
    options: make's (the kernel of each case built with them)."""
    rng = np.random.default_rng(seed)
    failed = 0
    for case in range(cases):
        D, dtype = int(rng.choice(dims)), str(rng.choice(dtypes))
        mask, heads_first = bool(rng.integers(2)), bool(rng.integers(2))
        mask = mask if causal is None else causal
        H_kv, group = int(rng.choice([1, 2, 4])), int(rng.choice([1, 2, 4]))
        B, S_q, S_k = int(rng.integers(1, 3)), int(rng.integers(1, 700)), int(rng.integers(1, 700))
        if case < 4:                          # the edges first: one row, one key, a tile and one more
            S_q, S_k = [(1, 1), (1, 300), (129, 65), (300, 1)][case]
        q, kk, v = inputs(B, S_q, S_k, H_kv * group, H_kv, D, dtype, heads_first, seed + case)
        scale = 1.0 / math.sqrt(D)
        o, lse = run(kernel(D, dtype, mask, scale, **(options or {})), q, kk, v)
        want_o, want_lse = reference(q, kk, v, mask, scale)
        err = (o.float() - want_o).abs().max().item() if o.numel() else 0.0
        both_inf = (lse == want_lse) & want_lse.isinf()
        lse_err = (lse - want_lse).abs().masked_fill(both_inf, 0).max().item()
        ok = err < TOL[dtype] and lse_err < LSE_TOL and not (o.isnan().any() or lse.isnan().any())
        failed += not ok
        print("%s  %sB=%d S_q=%-4d S_k=%-4d H=%-2d H_kv=%d D=%-3d %-8s %-7s %-10s  max|dO| %.2e  max|dLSE| %.2e" % (
            "PASS" if ok else "FAIL", label, B, S_q, S_k, H_kv * group, H_kv, D, dtype, "causal" if mask else "full",
            "(B,H,S,D)" if heads_first else "(B,S,H,D)", err, lse_err))
    return failed


def bench(B, H, S, D, causal, dtype="float16", rounds=5, variants=None):
    """GPU milliseconds of fa2_mma (one kernel per variant: {name: make's options}; default: the default
    kernel, and a printed line) and of SDPA's flash backend, interleaved in rounds: {name: median ms}."""
    from ..harness import time_rounds
    torch, _ = _torch()
    from torch.nn.attention import SDPBackend, sdpa_kernel
    q, kk, v = inputs(B, S, S, H, H, D, dtype, False, 1)
    scale = 1.0 / math.sqrt(D)
    o = torch.empty_like(q)
    lse = torch.empty((B, H, S), dtype=torch.float32, device="cuda")
    args = [device_array(x) for x in (q, kk, v, o, lse)]
    runs = {name: kernel(D, dtype, causal, scale, **opts).prepare(*args)
            for name, opts in (variants or {"fa2_mma": {}}).items()}
    qt, kt, vt = (x.transpose(1, 2) for x in (q, kk, v))

    def flash():
        torch.nn.functional.scaled_dot_product_attention(qt, kt, vt, is_causal=causal, scale=scale)

    runs["flash"] = flash
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):        # the flash backend only: an error if it cannot run
        for go in runs.values():
            go()
        torch.cuda.synchronize()
        times = {name: float(np.median(t)) for name, t in time_rounds(runs, rounds=rounds).items()}
    if variants is None:
        rate = {n: tflops(B, H, S, D, causal, ms) for n, ms in times.items()}
        print("B=%d H=%-2d S=%-5d D=%-3d %-6s %-8s  fa2_mma %8.3f ms %6.1f TFLOP/s   flash %8.3f ms %6.1f TFLOP/s   "
              "ratio %.2f" % (B, H, S, D, "causal" if causal else "full", dtype, times["fa2_mma"], rate["fa2_mma"],
                              times["flash"], rate["flash"], rate["fa2_mma"] / rate["flash"]))
    return times


def tflops(B, H, S, D, causal, ms):
    """TFLOP/s of a forward attention at (B, H, S, S, D) taking `ms`: 4 B H S^2 D FLOPs, half with the mask."""
    return 4 * B * H * S * S * D / (2 if causal else 1) / (ms * 1e-3) / 1e12


SHAPES = ((4, 16, 128), (4, 32, 64))     # (B, H, D) of the speed runs, at S = 4096


def compare(names, dims=(64, 128), cases=6, seed=0):
    """--variants: each variant's kernels fuzzed (`cases` random shapes per kernel, NaN-poisoned) and timed
    at the speed shapes of head dims `dims` beside the flash backend, then a table of TFLOP/s and ratios; the
    number of failed cases."""
    failed, rows = 0, []
    for B, H, D in (s for s in SHAPES if s[2] in dims):
        for causal in (False, True):
            variants = {n: VARIANTS[n](D, causal) for n in names}
            variants = {n: opts for n, opts in variants.items() if opts is not None}   # None: same as default
            for n, opts in variants.items():
                failed += fuzz(cases, seed, (D,), ("float16",), causal, opts, label="%-13s " % n)
            times = bench(B, H, 4096, D, causal, variants=variants)
            rows += [(B, H, D, causal, n, tflops(B, H, 4096, D, causal, times[n]),
                      tflops(B, H, 4096, D, causal, times["flash"])) for n in variants]
    print("\n| B | H | D | S | mask | variant | fa2_mma TFLOP/s | flash TFLOP/s | / flash |")
    print("|---|---|---|---|---|---|---|---|---|")
    for B, H, D, causal, n, ours, flash in rows:
        print("| %d | %d | %d | 4096 | %s | %s | %.1f | %.1f | %.2f |" % (B, H, D, "causal" if causal else "full", n,
                                                                         ours, flash, ours / flash))
    return failed


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cases", type=int, default=40)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dims", default="64,128", help="head dims of the fuzz (and of --variants' runs)")
    p.add_argument("--dtypes", default="float16,bfloat16", help="element types of the fuzz")
    p.add_argument("--no-fuzz", action="store_true")
    p.add_argument("--no-bench", action="store_true")
    p.add_argument("--config", help="BM,BN,warps of every kernel (default: fa2_mma.make's)")
    p.add_argument("--variants", help="compare these of %s (comma-separated) instead" % ", ".join(VARIANTS))
    args = p.parse_args(argv)
    names = args.variants.split(",") if args.variants else []
    if any(n not in VARIANTS for n in names):
        raise SystemExit("kernels.attention.check: --variants takes %s, got %r" % (", ".join(VARIANTS), args.variants))
    if args.config:
        CONFIG.update(zip(("BM", "BN", "warps"), (int(x) for x in args.config.split(","))))
    import kernels
    info = kernels.setup()
    if info.simulator:
        raise SystemExit("kernels.attention.check needs a GPU (the simulator runs tests/test_cutejit_attention.py)")
    if names:
        return 1 if compare(names, [int(d) for d in args.dims.split(",")], seed=args.seed) else 0
    failed = 0
    if not args.no_fuzz:
        failed = fuzz(args.cases, args.seed, [int(d) for d in args.dims.split(",")], args.dtypes.split(","))
        print("%d of %d cases passed" % (args.cases - failed, args.cases))
    if not args.no_bench:
        for B, H, D in SHAPES:
            for causal in (False, True):
                bench(B, H, 4096, D, causal)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
