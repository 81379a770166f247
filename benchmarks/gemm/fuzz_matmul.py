"""A GPU fuzz of kernels.lib.matmul (issue 21): random shapes 1..1000, dtypes, majorness of A and B, array
libraries, `out` given (poisoned with NaN) or not, and `out` aliasing A. Each result is compared with the
float64 product of the same inputs; every call is made twice, so the second (a replay of a prepared call
where matmul prepares one) is checked too. One line per case, a summary last; the exit status counts misses.

    PYTHONPATH=. python3 benchmarks/gemm/fuzz_matmul.py [--cases 200] [--seed 0]
"""
import argparse
import sys

import kernels

kernels.setup()
import numpy as np  # noqa: E402
import torch  # noqa: E402
from numba import cuda  # noqa: E402

from kernels.lib import matmul  # noqa: E402

DTYPES = (torch.float32, torch.float16, torch.bfloat16)
try:
    import cupy
    LIBS = ("torch", "numpy", "numba", "cupy")
except ImportError:
    LIBS = ("torch", "numpy", "numba")


def operand(x, major, lib):
    """x (a CUDA tensor) in the given majorness, as the given library holds it."""
    if major == "col":
        x = x.t().contiguous().t()
    if lib == "numpy":
        return x.cpu().numpy()
    if lib == "numba":
        return cuda.as_cuda_array(x)
    if lib == "cupy":
        return cupy.asarray(x)          # the same memory, through __cuda_array_interface__
    return x


def case(rng, n):
    M, N, K = (int(v) for v in rng.integers(1, 1001, 3))
    dt = DTYPES[rng.integers(len(DTYPES))]
    lib = LIBS[rng.integers(len(LIBS))]
    if lib != "torch" and dt == torch.bfloat16:
        lib = "torch"                   # NumPy, Numba and CuPy hold no bfloat16
    am, bm = ("row", "col")[rng.integers(2)], ("row", "col")[rng.integers(2)]
    with_out = bool(rng.integers(2))
    alias = bool(rng.integers(6) == 0)  # out's memory holds A: f32 A is out itself, 16-bit A a view of out's bytes
    if alias:
        lib, am = "torch", "row"
        if dt == torch.float32:
            N = K
        else:
            K = min(K, 2 * N)
    A = torch.randn(M, K, device="cuda").to(dt)
    B = torch.randn(K, N, device="cuda").to(dt)
    ref = A.double() @ B.double()
    a, b = operand(A, am, lib), operand(B, bm, lib)
    errs = []
    shared = torch.empty(M, N, device="cuda")
    for _ in range(2):
        if alias:                       # NumPy computes as if into a temporary
            Aa = shared if dt == torch.float32 else shared.view(dt)[:, :K]
            Aa.copy_(A)
            C = matmul(Aa, b, out=shared)
            got = shared
        elif with_out:
            out = torch.full((M, N), float("nan"), device="cuda")
            o = {"numba": cuda.as_cuda_array, "numpy": lambda t: t.cpu().numpy(),
                 "cupy": lambda t: cupy.asarray(t)}.get(lib, lambda t: t)(out)
            C = matmul(a, b, out=o)
            got = torch.as_tensor(o, device="cuda") if lib == "numpy" else out
        else:
            C = matmul(a, b)
            got = torch.as_tensor(C if isinstance(C, np.ndarray) else C.copy_to_host(), device="cuda")
        torch.cuda.synchronize()
        got = got.double()
        errs.append(float(torch.linalg.norm(torch.nan_to_num(got - ref, nan=1e30)) / max(torch.linalg.norm(ref), 1e-30)))
        del C
    tol = 1e-5 if dt == torch.float32 else 1e-4
    ok = all(e < tol for e in errs)
    print("%-4s %3d %4dx%4dx%4d %-8s %-5s A %s B %s %s rel.err %.1e / %.1e" % (
        "ok" if ok else "FAIL", n, M, N, K, str(dt)[6:], lib, am, bm,
        "out=A" if alias else ("out" if with_out else "   "), errs[0], errs[1]), flush=True)
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    torch.manual_seed(args.seed)
    bad = sum(not case(rng, n) for n in range(args.cases))
    print("matmul fuzz: %d cases, %s" % (args.cases, "all pass" if bad == 0 else "%d FAIL" % bad))
    sys.exit(bad)


if __name__ == "__main__":
    main()
