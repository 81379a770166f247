"""python -m kernels.lib.check_attention [--seed S] [--kernels picked,mma_sync]: kernels.lib.attention on the
GPU, every path a call takes.

Each case is one call, checked element-wise against a float32 reference of the same inputs on the GPU
(kernels.attention.check.reference) with its outputs poisoned with NaN first (`out` and `lse` where the case
passes them; where attention allocates them, its allocator is wrapped to fill each new array with NaN): PyTorch
float16 and bfloat16 in (B, S, H, D) and (B, H, S, D), CuPy (if installed), Numba device arrays, NumPy (the copy
path), `out` and `lse` given, a non-default PyTorch stream (the inputs written on it just before the call),
grouped-query heads, S_q != S_k, both masks, and a replayed call (the same arrays again, the outputs poisoned
between). On sm_90 the cases run twice: the kernel attention picks (fa3_wgmma) and fa2_mma. Then the host's
cost of a call at a small shape: GPU time of one launch against the wall time of 100 back-to-back calls,
prepared (out and lse given) and not, beside PyTorch's SDPA; a table last. About 3 fa2_mma configurations
(and 3 fa3_wgmma ones on sm_90) are compiled: a minute or so each.
"""

import argparse
import contextlib
import importlib
import importlib.util
import math
import time

import numpy as np

TOL = {"float16": 1e-2, "bfloat16": 4e-2}     # max |O - reference|, as kernels.attention.check
LSE_TOL = 2e-3
# (library, dtype, layout, causal, B, S_q, S_k, H, H_kv, D, what is passed); three kernel configurations:
# (64, float16, full), (64, float16, causal), (128, bfloat16, causal)
CASES = [("torch", "float16", "BSHD", False, 2, 300, 500, 8, 2, 64, ""),
         ("torch", "float16", "BHSD", True, 1, 513, 200, 4, 4, 64, "out lse"),
         ("torch", "bfloat16", "BSHD", True, 2, 200, 700, 4, 1, 128, "out stream"),
         ("torch", "bfloat16", "BHSD", True, 1, 129, 129, 2, 2, 128, ""),
         ("cupy", "float16", "BSHD", False, 1, 77, 333, 4, 2, 64, "out"),
         ("numba", "float16", "BHSD", True, 2, 100, 130, 2, 1, 64, "out lse"),
         ("numpy", "float16", "BSHD", False, 1, 65, 64, 4, 2, 64, "out"),
         ("torch", "float16", "BSHD", True, 1, 1000, 1000, 2, 2, 64, "out lse replay")]


def _torch():
    import torch
    return torch


def as_library(x, library):
    """Torch tensor x (on the GPU) as an array of `library` ("torch", "cupy", "numba", "numpy"), same layout."""
    if library == "torch":
        return x
    if library == "numpy":
        return x.cpu().numpy()
    if library == "cupy":
        import cupy
        return cupy.asarray(x)
    from numba import cuda
    return cuda.as_cuda_array(x, sync=False)


def as_torch(x):
    """An output of attention (any library) as a torch tensor on the GPU."""
    torch = _torch()
    if isinstance(x, np.ndarray):
        return torch.from_numpy(x).cuda()
    return torch.as_tensor(x, device="cuda")


def compare(label, O, LSE, q, k, v, causal, scale, layout, dtype):
    """One PASS / FAIL line: O and LSE (torch) against the reference of torch q, k, v in `layout`."""
    from ..attention.check import reference
    torch = _torch()
    bshd = (lambda x: x) if layout == "BSHD" else (lambda x: x.transpose(1, 2))
    want_o, want_lse = reference(bshd(q), bshd(k), bshd(v), causal, scale)
    err = (bshd(O).float() - want_o).abs().max().item()
    both_inf = (LSE == want_lse) & want_lse.isinf()
    lse_err = (LSE - want_lse).abs().masked_fill(both_inf, 0).max().item()
    ok = err < TOL[dtype] and lse_err < LSE_TOL and not (O.isnan().any() or LSE.isnan().any())
    torch.cuda.synchronize()
    print("%s  %-58s max|dO| %.2e  max|dLSE| %.2e" % ("PASS" if ok else "FAIL", label, err, lse_err))
    return ok


def run_case(case, seed):
    """One case (CASES); True when it passes (or cannot run here: a line says why)."""
    from ..attention.check import inputs
    from . import attention
    torch = _torch()
    library, dtype, layout, causal, B, S_q, S_k, H, H_kv, D, passed = case
    label = "%s %s %s %s B=%d S_q=%d S_k=%d H=%d H_kv=%d D=%d %s" % (
        library, dtype, layout, "causal" if causal else "full", B, S_q, S_k, H, H_kv, D, passed)
    if library == "cupy" and importlib.util.find_spec("cupy") is None:
        print("SKIP  %s: CuPy is not installed" % label)
        return True
    q, k, v = inputs(B, S_q, S_k, H, H_kv, D, dtype, layout == "BHSD", seed)      # (B, S, H, D) views
    if layout == "BSHD":
        q, k, v = (x.contiguous() for x in (q, k, v))
    else:
        q, k, v = (x.transpose(1, 2).contiguous() for x in (q, k, v))             # (B, H, S, D) arrays
    stream = torch.cuda.Stream() if "stream" in passed else None
    with torch.cuda.stream(stream) if stream else contextlib.nullcontext():
        if stream:                        # inputs written on the stream just before the call: ordered after them
            q, k, v = (x * 1 for x in (q, k, v))
        args = [as_library(x, library) for x in (q, k, v)]
        out = torch.full_like(q, math.nan) if "out" in passed else None
        lse = torch.full((B, H, S_q), math.nan, device="cuda") if "lse" in passed else None
        out, lse = (None if x is None else as_library(x, library) for x in (out, lse))
        O, LSE = attention(*args, causal=causal, out=out, layout=layout, lse=lse)
        ok = True
        if "replay" in passed:            # the same call again, its outputs poisoned first
            ok = compare(label + " (first)", as_torch(O), as_torch(LSE), q, k, v, causal, 1 / math.sqrt(D), layout,
                         dtype)
            as_torch(O).fill_(math.nan), as_torch(LSE).fill_(math.nan)
            lib = importlib.import_module("kernels.lib.attention")
            checks, check_arrays = [], lib._check_arrays
            lib._check_arrays = lambda a: checks.append(a) or check_arrays(a)   # a replay checks nothing
            try:
                O2, LSE2 = attention(*args, causal=causal, out=out, layout=layout, lse=lse)
            finally:
                lib._check_arrays = check_arrays
            replayed = not checks and O2 is out and LSE2 is lse
            print("%s  the second call is the prepared launch again" % ("PASS" if replayed else "FAIL"))
            ok &= replayed
    if stream:
        stream.synchronize()
    if out is not None and O is not out:
        print("FAIL  %s: attention did not return out" % label)
        return False
    return ok & compare(label, as_torch(O), as_torch(LSE), q, k, v, causal, 1 / math.sqrt(D), layout, dtype)


@contextlib.contextmanager
def checked_calls(kernel):
    """attention with its pick made `kernel` ("mma_sync", "hopper"; None: left alone), every array it
    allocates filled with NaN (so one it never writes shows), and no prepared calls carried in or out."""
    lib = importlib.import_module("kernels.lib.attention")
    pick, empty = lib.pick, lib._empty

    def poisoned(like, shape, dtype):
        x = empty(like, shape, dtype)
        if hasattr(x, "fill_"):                                    # PyTorch
            x.fill_(math.nan)
        elif hasattr(x, "fill"):                                   # CuPy
            x.fill(math.nan)
        else:                                                       # Numba (bfloat16 as its NaN's bits)
            nan = np.full(shape, 0x7FC0, np.uint16) if x.dtype == np.uint16 else np.full(shape, math.nan, x.dtype)
            x.copy_to_device(nan)
        return x
    if kernel:
        lib.pick = lambda dtype, device=None: kernel
    lib._empty = poisoned
    lib._PREPARED.clear()
    try:
        yield
    finally:
        lib.pick, lib._empty = pick, empty
        lib._PREPARED.clear()


def host_cost(B=1, H=8, S=256, D=64, calls=100):
    """[(what, microseconds per call)]: GPU time of one prepared launch, then the wall time of `calls`
    back-to-back calls (until the GPU is done) of attention with out and lse (the replay), without them
    (the whole call each time), and of SDPA (its default backend)."""
    from ..attention.check import inputs
    from ..timing import gpu_time_ms
    from . import attention
    torch = _torch()
    q, k, v = (x.contiguous() for x in inputs(B, S, S, H, H, D, "float16", False, 0))
    out, lse = torch.empty_like(q), torch.empty((B, H, S), device="cuda")
    qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))
    runs = {"attention(out=, lse=): the replay": lambda: attention(q, k, v, out=out, lse=lse),
            "attention(): every check, new O and LSE": lambda: attention(q, k, v),
            "torch SDPA": lambda: torch.nn.functional.scaled_dot_product_attention(qt, kt, vt)}
    rows = [("GPU time of one launch (events)", 1e3 * gpu_time_ms(runs["attention(out=, lse=): the replay"]))]
    for name, go in runs.items():
        for _ in range(3):
            go()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(calls):
            go()
        queued = time.perf_counter()
        torch.cuda.synchronize()
        done = time.perf_counter()
        rows.append(("%s: host, queued" % name, 1e6 * (queued - t0) / calls))
        rows.append(("%s: wall, to the GPU's end" % name, 1e6 * (done - t0) / calls))
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--kernels", default="picked,mma_sync",
                   help="the cases with the kernel attention picks, and/or with fa2_mma (on sm_90 a second run)")
    args = p.parse_args(argv)
    import kernels
    info = kernels.setup()
    if info.simulator:
        raise SystemExit("kernels.lib.check_attention needs a GPU (the simulator runs tests/test_attention_lib.py)")
    from .attention import pick
    auto = pick("float16")
    failed = total = 0
    wanted = args.kernels.split(",")
    runs = [None] if "picked" in wanted else []
    if "mma_sync" in wanted and not (runs and auto == "mma_sync"):    # off sm_90 the picked kernel is fa2_mma
        runs.append("mma_sync")
    for kernel in runs:
        print("-- attention on %s" % (kernel or auto))
        with checked_calls(kernel):
            for i, case in enumerate(CASES):
                total += 1
                failed += not run_case(case, args.seed + i)
    print("%d of %d cases passed" % (total - failed, total))
    rows = host_cost()
    print("\n| at B=1 H=8 S=256 D=64 float16, %s | us per call |\n|---|---|" % auto)
    for what, us in rows:
        print("| %s | %.1f |" % (what, us))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
