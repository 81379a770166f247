"""What `python -m kernels.hopper` checks beside the ladder (issue 30): the cluster kernel (2 x 1 and 1 x 2
clusters, TMA multicast), split-K (TMA reduce-adds into a zeroed C) and the fused epilogues (bf16 and f16 out,
alpha, beta, a bias per row or per column, ReLU and GELU), each on a few shapes with partial tiles in M, N and
K, against NumPy in float64, its output poisoned with NaN first (where beta reads it, it holds C instead).

Each variant is one build, and Numba compiles a Hopper configuration in about a minute: `check_all` checks
them in parallel, one process each, and prints a PASS or FAIL line for each.
"""

import concurrent.futures
import multiprocessing
from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np

from ..cutejit.epilogue import Epilogue
from .gemm import MATMUL_CONFIG

__all__ = ["Variant", "VARIANTS", "reference", "check", "check_all"]

CLUSTER_SHAPES = ((200, 136, 72), (1000, 784, 328), (129, 4096, 1024))     # fewer tiles than SMs, and more
EPILOGUE_SHAPES = ((200, 136, 72), (1000, 784, 328), (129, 520, 1024))     # N * 2 bytes: 16-byte rows of D


@dataclass(frozen=True)
class Variant:
    """One build to check. config: HopperGemm's configuration, or the cluster kernel's (with "cluster"); shapes:
    (M, N, K), or (M, N, K, splits) for split-K; epi, alpha, beta: the Epilogue and its run-time scalars; tol:
    the largest error allowed, |D - reference| / max(|reference|, 1) (16-bit D: its rounding)."""
    name: str
    config: dict
    shapes: Tuple[tuple, ...]
    epi: Optional[Epilogue] = None
    alpha: float = 1.0
    beta: float = 0.0
    tol: float = 1e-4


VARIANTS = (
    Variant("cluster 2x1", dict(cluster=(2, 1)), CLUSTER_SHAPES),
    Variant("cluster 1x2", dict(cluster=(1, 2)), CLUSTER_SHAPES),
    Variant("split-K 64x128", dict(MATMUL_CONFIG, BN=128, consumers=1, regs=None, split_k=True),   # matmul's, M <= 64
            ((16, 1024, 4096, 4), (50, 200, 2056, 3), (1, 8, 512, 2))),
    Variant("epilogue bf16 out, alpha, beta, row bias, ReLU", MATMUL_CONFIG, EPILOGUE_SHAPES,
            Epilogue(out="bfloat16", alpha=True, beta=True, bias="row", activation="relu"), 0.5, -1.5, 1.6e-2),
    Variant("epilogue f16 out, alpha, f16 column bias, GELU", MATMUL_CONFIG, EPILOGUE_SHAPES,
            Epilogue(out="float16", alpha=True, bias="col", bias_dtype="float16", activation="gelu"), 2.0, 0.0, 4e-3),
)


def reference(A, Bt, alpha=1.0, beta=0.0, C=None, bias=None, activation=None):
    """D = activation(alpha A @ Bt.T + beta C + bias) in float64 NumPy (bias: (M, 1) or (N,), as NumPy
    broadcasts), GELU in its tanh form (Hendrycks and Gimpel)."""
    x = alpha * (A.astype(np.float64) @ Bt.astype(np.float64).T)
    if beta:
        x = x + beta * C.astype(np.float64)
    if bias is not None:
        x = x + bias.astype(np.float64)
    if activation == "relu":
        return np.maximum(x, 0)
    if activation == "gelu":
        return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    return x


def _build(v):
    from . import cluster
    from .gemm import HopperGemm
    if "cluster" in v.config:
        return cluster.make(**v.config)
    return HopperGemm(**v.config, **({"epi": v.epi} if v.epi else {}))


def _launch(v, kernel, a, bt, d, splits, args):
    """The prepared launch of v's kernel on device arrays A, Bt, D and the Epilogue's arguments."""
    from . import cluster
    if "cluster" in v.config:
        return cluster.launcher(kernel, a, bt, d)
    return kernel.prepare(a, bt, d, splits=splits, epilogue=args)


def _inputs(v, rng, M, N, K):
    """(A, Bt, C's values or None, bias as the reference reads it or None, D as the kernel starts from (C's
    bits where beta reads it, else NaN), the Epilogue's run-time arguments after D (host arrays: their device
    copies are made by `check`), the bias vector as the kernel reads it)."""
    from ..numeric import decode, encode
    from cutelite.numeric import numeric
    A = (rng.standard_normal((M, K)) * 0.5).astype(np.float16)
    Bt = (rng.standard_normal((N, K)) * 0.5).astype(np.float16)
    epi = v.epi or Epilogue()
    out = numeric(epi.out)
    D0 = encode(np.full((M, N), np.nan, np.float32), out)
    C = None
    if epi.beta:
        D0 = encode(rng.standard_normal((M, N)).astype(np.float32), out)
        C = decode(D0, out)
    bias = vector = None
    if epi.bias:
        n = M if epi.bias == "row" else N
        vector = encode(np.zeros(-(-n // 8) * 8, np.float32), numeric(epi.bias_dtype))   # padded to 16 bytes
        vector[:n] = encode(rng.standard_normal(n).astype(np.float32), numeric(epi.bias_dtype))
        values = decode(vector[:n], numeric(epi.bias_dtype))
        bias = values.reshape(M, 1) if epi.bias == "row" else values
    return A, Bt, C, bias, D0, vector


def check(v, rng=None, kernel=None):
    """Check Variant v on its shapes on this GPU: (passed, worst error, a line per shape). `kernel`: v's kernel,
    else built here."""
    from numba import cuda
    from ..arrays import broadcast
    from ..numeric import decode
    from cutelite.numeric import numeric
    rng = rng or np.random.default_rng(7)
    epi = v.epi or Epilogue()
    lines, worst = [], 0.0
    try:
        kernel = kernel or _build(v)
        for shape in v.shapes:
            M, N, K = shape[:3]
            splits = shape[3] if len(shape) > 3 else 1
            A, Bt, C, bias, D0, vector = _inputs(v, rng, M, N, K)
            want = reference(A, Bt, v.alpha, v.beta, C, bias, epi.activation)
            a, bt, d = cuda.to_device(A), cuda.to_device(Bt), cuda.to_device(D0)
            args = [d] if epi.beta else []
            if epi.bias:
                args.append(broadcast(cuda.to_device(vector), (M, N), 1 if epi.bias == "row" else 0))
            args += [np.float32(x) for x, on in ((v.alpha, epi.alpha), (v.beta, epi.beta)) if on]
            _launch(v, kernel, a, bt, d, splits, tuple(args))()
            got = decode(d.copy_to_host(), numeric(epi.out)).astype(np.float64)
            err = float(np.max(np.abs(np.nan_to_num(got - want, nan=np.inf)))) / max(1.0, float(np.max(np.abs(want))))
            worst = max(worst, err)
            lines.append("%s at %s: max error %.1e (tolerance %.0e)%s" % (v.name, shape, err, v.tol,
                                                                       "" if err <= v.tol else ": FAIL"))
    except Exception as e:  # noqa: BLE001  (report the variant as failed and go on)
        lines.append("%s: FAILED: %s" % (v.name, str(e)[:1500]))
        return False, float("nan"), lines
    return worst <= v.tol, worst, lines


def _check_named(name, seed):
    """check() of the variant called `name`, in a process of its own (kernels.setup() first)."""
    import kernels
    kernels.setup()
    v = next(v for v in VARIANTS if v.name == name)
    return check(v, np.random.default_rng(seed))


def check_all(variants=VARIANTS, jobs=None, seed=7):
    """Check each of `variants`, `jobs` processes at a time (default: one each; 1: in this process), printing
    its lines and a PASS / FAIL line as each finishes. Returns [(name, passed, worst error)]."""
    jobs = jobs or len(variants)
    if jobs == 1:
        results = [(v.name, check(v, np.random.default_rng(seed))) for v in variants]
        return [_report(name, r) for name, r in results]
    spawn = multiprocessing.get_context("spawn")        # CUDA does not survive a fork
    with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=spawn) as pool:
        futures = {pool.submit(_check_named, v.name, seed): v.name for v in variants}
        rows = [_report(futures[f], f.result()) for f in concurrent.futures.as_completed(futures)]
    order = [v.name for v in variants]
    return sorted(rows, key=lambda r: order.index(r[0]))


def _report(name, result):
    passed, worst, lines = result
    for line in lines:
        print(line, flush=True)
    print("%s: %s (worst error %.1e)" % (name, "PASS" if passed else "FAIL", worst), flush=True)
    return name, passed, worst
