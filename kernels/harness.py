"""The harness every chapter and benchmark measures kernels with: cuBLAS as the baseline, a kernel checked
against a reference before it is timed, and what ptxas made of a kernel.

    label, run = cublas_baseline(A, B)               # run() computes A @ B with cuBLAS, as the kernels do
    ms, err = check_and_time(launch, C, want, "tc sm80")   # C poisoned, launch() checked, then timed
    sass_counts(kernel.numba, ("HMMA", "LDSM"))      # {"HMMA": 64, "LDSM": 16}

Times are GPU time (kernels.timing.gpu_time_ms). Import after kernels.setup().
"""

import numpy as np

from .timing import gpu_time_ms

__all__ = ["blas", "cublas_baseline", "rel_err", "check", "check_and_time", "time_rounds", "MARKERS", "sass_text",
           "sass_counts", "registers"]


def blas():
    """(module, None): what calls cuBLAS here, PyTorch (TF32 off) where it sees a GPU, else CuPy; (None, why
    not) where neither is installed."""
    try:
        import torch
        if torch.cuda.is_available():
            torch.backends.cuda.matmul.allow_tf32 = False
            return torch, None
    except ImportError:
        pass
    try:
        import cupy
        return cupy, None
    except ImportError:
        return None, "neither torch nor CuPy is installed: no cuBLAS baseline (pip install torch, or cupy-cuda12x)"


def cublas_baseline(A, B, out=None):
    """(label, run): run() computes A @ B with cuBLAS the way the book's kernels do: float32 in float32 (TF32
    off), fp16 or bf16 into a float32 C (torch.mm's out_dtype). A, B: PyTorch tensors or CuPy arrays on the GPU
    (B may be a transposed view), or NumPy arrays, copied there first; run() writes `out` when given, else
    returns a new C. The label names the types and the library, "cuBLAS fp16->fp32 (torch 2.11.0)"; a torch
    without out_dtype, or CuPy, gives a 16-bit C, labelled "cuBLAS fp16 (...)"."""
    lib, why = blas()
    if lib is None:
        raise RuntimeError("cublas_baseline: " + why)
    if isinstance(A, np.ndarray):
        A, B = ((lib.from_numpy(x).cuda() if lib.__name__ == "torch" else lib.asarray(x)) for x in (A, B))
    t = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}[str(A.dtype).rsplit(".", 1)[-1]]
    name = "%s %s" % (lib.__name__, lib.__version__)
    if lib.__name__ == "torch" and t != "fp32":
        try:
            lib.mm(A[:1], B[:, :1], out_dtype=lib.float32)
            return "cuBLAS %s->fp32 (%s)" % (t, name), lambda: lib.mm(A, B, out_dtype=lib.float32, out=out)
        except (TypeError, RuntimeError):
            pass
    return "cuBLAS %s (%s)" % (t, name), lambda: lib.matmul(A, B, out=out)


def _host(x):
    """A NumPy copy of x (a Numba, PyTorch or CuPy array on the GPU, or a NumPy array)."""
    if hasattr(x, "copy_to_host"):
        return x.copy_to_host()
    if hasattr(x, "detach"):
        return x.detach().float().cpu().numpy()
    return x.get() if hasattr(x, "get") else np.asarray(x)


def rel_err(C, want):
    """||C - want|| / ||want|| (Frobenius, in float64), infinite where C holds a NaN (an element never written)
    or an infinity."""
    C, want = (np.asarray(_host(x), np.float64) for x in (C, want))
    return float(np.linalg.norm(C - want) / np.linalg.norm(want)) if np.isfinite(C).all() else float("inf")


def check(run, C, want, what, tol=1e-3):
    """Check a kernel: C, its output on the GPU (Numba, PyTorch or CuPy), is poisoned with NaN, run() runs once
    and C is compared with `want` (rel_err); an error of `tol` or more is an AssertionError naming `what`.
    Returns the error."""
    if hasattr(C, "copy_to_device"):
        C.copy_to_device(np.full(C.shape, np.nan, C.dtype))
    else:
        (C.fill_ if hasattr(C, "fill_") else C.fill)(float("nan"))
    run()
    err = rel_err(C, want)
    if not err < tol:
        raise AssertionError("check: %s differs from the reference: relative error %.2e (tolerance %.0e)"
                             % (what, err, tol))
    return err


def check_and_time(run, C, want, what, tol=1e-3, reps=10):
    """check(run, C, want, what, tol), then time run(): (GPU milliseconds of one run(), the error)."""
    err = check(run, C, want, what, tol)
    return gpu_time_ms(run, reps), err


def time_rounds(runs, rounds=3, reps=10):
    """{name: [GPU milliseconds of one run, each round]} for runs {name: run}, timed in `rounds` interleaved
    rounds (every run once a round), so that a clock that drifts hits them all alike."""
    times = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            times[name].append(gpu_time_ms(run, reps))
    return times


MARKERS = ("HMMA", "HGMMA", "LDSM", "LDGSTS", "UTMALDG", "UTMASTG", "LDG.E.128", "LDS.128", "STS.128", "FFMA", "LDL",
           "STL")


def sass_text(kernel):
    """The SASS of a compiled Numba kernel, every specialisation of it (Numba asks nvdisasm)."""
    texts = kernel.inspect_sass()
    return "\n".join(texts.values()) if isinstance(texts, dict) else str(texts)


def sass_counts(kernel, markers=MARKERS):
    """{marker: how many instructions of the kernel's SASS contain it} for a compiled Numba kernel (or its
    SASS text), never-run padding (@!PT) left out. A marker is text: "LDG.E " (with its space) counts 32-bit
    global loads only, "LDG.E" every one."""
    text = kernel if isinstance(kernel, str) else sass_text(kernel)
    lines = [ln for ln in text.splitlines() if "/*" in ln and "@!PT" not in ln]
    return {m: sum(m in ln for ln in lines) for m in markers}


def registers(kernel):
    """Registers per thread of a compiled Numba kernel (the most of its specialisations)."""
    regs = kernel.get_regs_per_thread()
    return max(regs.values()) if isinstance(regs, dict) else regs
