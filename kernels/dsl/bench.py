"""Chapter 6's GEMM tile and chapter 7's best tensor-core kernel, ours (Numba, written with cutelite's
objects) and the CuTe DSL's (kernels/dsl), timed against cuBLAS in one process on the same data.

    python -m kernels.dsl.bench [--sizes 4096 8192] [--out DIR]
    python -m kernels.dsl.bench --check [--sizes 256 1024]      # correctness only, no timing

Needs an sm_80+ GPU, PyTorch (for cuBLAS and the arrays) and nvidia-cutlass-dsl. The data are Gaussian
fp16 A (M, K) and B (K, N), row-major; C is fp32. Every kernel's C is poisoned (NaN) and checked against
cuBLAS's before it is timed (kernels.harness); the time is GPU time (kernels.timing.gpu_time_ms: CUDA events
around batches of launches queued back to back, median). The DSL's kernels are compiled once for run-time
shapes, as ours are. Prints a Markdown table; --out DIR also writes DIR/RESULTS.md and DIR/records.json (the
figures chapter 9 shows where it cannot measure: copy it over kernels/dsl/records.json, and RESULTS.md to
benchmarks/dsl/).
"""

import argparse
import datetime
import os
import sys

import numpy as np

from cutelite.teach.records import dump, load

__all__ = ["why_not", "KERNELS", "measure", "table", "main"]

KERNELS = [   # (name, builder name): the rows of the table, in order
    ("cuBLAS (torch.mm, fp16 in, fp32 out)", "cublas"),
    ("ch. 6 GEMM tile, ours (Numba)", "tile_ours"),
    ("ch. 6 GEMM tile, CuTe DSL", "tile_dsl"),
    ("ch. 7 tc sm80 128x128x32 4st, ours (Numba)", "tc_ours"),
    ("ch. 7 tc sm80 128x128x32 4st, CuTe DSL", "tc_dsl"),
]


def why_not(info):
    """None when this machine can run the comparison, else why not (info: kernels.setup()'s DeviceInfo)."""
    from . import missing
    if info.simulator or info.cc is None:
        return "no GPU here (Numba's simulator): the DSL compiles real GPU code and cuBLAS needs a GPU"
    if info.cc < (8, 0):
        return f"this is {info.label} ({info.sm}); the kernels use cp.async and mma.m16n8k16 (sm_80+)"
    if missing():
        return missing()
    try:
        import torch
    except ImportError:
        return "PyTorch is not installed: no cuBLAS to compare with (pip install torch)"
    if not torch.cuda.is_available():
        return "PyTorch sees no GPU: no cuBLAS to compare with"
    from kernels.harness import cublas_baseline
    x = torch.ones(8, 8, device="cuda", dtype=torch.float16)
    if "->fp32" not in cublas_baseline(x, x)[0]:
        return "this PyTorch has no torch.mm(..., out_dtype=float32): no fp16-in, fp32-out cuBLAS to compare with"
    return None


# ---- one launcher per kernel: f(A, B, C) -> a no-argument function that computes C = A @ B ---------------
def cublas(A, B, C):
    from kernels.harness import cublas_baseline
    return cublas_baseline(A, B, out=C)[1]


def _numba(A, B, C):
    from numba import cuda
    return cuda.as_cuda_array(A).view(np.uint16), cuda.as_cuda_array(B).view(np.uint16), cuda.as_cuda_array(C)


def tile_ours(A, B, C):
    from kernels.tiled.mma import make_gemm_kernel
    k, (a, b, c) = make_gemm_kernel("sm80"), _numba(A, B, C)
    return lambda: k.launch(a, b, c)


def tc_ours(A, B, C):
    from kernels.gemm import prepare, step
    return prepare(step("tc sm80 128x128x32 4st"), A, B, C)


def _dsl(module, A, B, C):
    import cutlass.cute as cute
    from cuda.bindings import driver
    from .build import runtime_tensor
    args = [runtime_tensor(x) for x in (A, B, C)] + [driver.CUstream(0)]   # stream 0: the legacy stream
    compiled = cute.compile(module.host, *args)                            # for run-time sizes, as ours
    return lambda: compiled(*args)


def tile_dsl(A, B, C):
    from . import gemm_tile
    return _dsl(gemm_tile, A, B, C)


def tc_dsl(A, B, C):
    from . import tc_sm80
    return _dsl(tc_sm80, A, B, C)


# ---- measuring ------------------------------------------------------------------------------------------------
def measure(size, seed=0, timed=True):
    """{row name: TFLOP/s} at size^3, every kernel in this process on the same Gaussian fp16 inputs, each
    checked against cuBLAS first (kernels.harness.check: relative error under 1e-3, or AssertionError).
    timed=False: {row name: that error}, nothing timed."""
    import torch
    from kernels.harness import check, check_and_time, cublas_baseline
    gen = torch.Generator(device="cuda").manual_seed(seed)
    A = torch.randn(size, size, generator=gen, device="cuda").half()
    B = torch.randn(size, size, generator=gen, device="cuda").half()
    want = cublas_baseline(A, B)[1]()
    out = {}
    for name, builder in KERNELS:
        C = torch.empty(size, size, device="cuda")
        run, what = globals()[builder](A, B, C), f"{name} at {size}^3"
        out[name] = (2.0 * size ** 3 / check_and_time(run, C, want, what)[0] / 1e9 if timed
                     else check(run, C, want, what))
    return out


def table(results, device):
    """Markdown: one row per kernel, one column per size: TFLOP/s and the fraction of cuBLAS's, or "not
    yet measured" where results ({size: {row name: TFLOP/s}}) has no figure."""
    sizes = sorted(results)
    lines = [f"| kernel, {device} | " + " | ".join(f"{s}^3: TFLOP/s (of cuBLAS)" for s in sizes) + " |",
             "|---|" + "---|" * len(sizes)]
    for name, _ in KERNELS:
        cells = []
        for s in sizes:
            tf, base = results[s].get(name), results[s].get(KERNELS[0][0])
            cells.append("not yet measured" if tf is None else f"{tf:.1f}" + (f" ({tf / base:.2f})" if base else ""))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=None, help="M = N = K (multiples of 128)")
    p.add_argument("--out", help="a folder for RESULTS.md and records.json")
    p.add_argument("--check", action="store_true", help="check every kernel against cuBLAS, time nothing")
    args = p.parse_args(argv)
    import kernels
    info = kernels.setup()
    why = why_not(info)
    if why:
        raise SystemExit(f"bench: {why}")
    if args.check:
        for size in args.sizes or [256, 1024]:
            for name, err in measure(size, timed=False).items():
                print(f"PASS {name}, {size}^3: ||C - cuBLAS|| / ||cuBLAS|| = {err:.1e}")
        return
    args.sizes = args.sizes or [4096, 8192]
    import torch
    import cutlass
    results = {s: measure(s) for s in args.sizes}
    run = {"date": datetime.date.today().isoformat(), "device": f"{info.name} ({info.sm})",
           "command": "python -m kernels.dsl.bench " + " ".join(sys.argv[1:] if argv is None else argv),
           "versions": f"nvidia-cutlass-dsl {cutlass.__version__}, torch {torch.__version__}",
           "method": "GPU time (kernels.timing.gpu_time_ms), one process, Gaussian fp16 A and B, fp32 C"}
    text = table(results, info.name)
    print(text)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "RESULTS.md"), "w") as f:
            f.write("# The CuTe DSL beside our kernels and cuBLAS\n\n" + "\n".join(f"- {k}: {v}" for k, v in run.items())
                    + "\n\n" + text + "\n")
        rows = {s: {n: round(tf, 1) for n, tf in r.items()} for s, r in results.items()}
        dump(dict(load("kernels/dsl"), run=run, rows=rows), os.path.join(args.out, "records.json"))


if __name__ == "__main__":
    main()
