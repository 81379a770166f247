"""What matmul's epilogue options ask of a call, read and checked once: `Fused`.

    D = activation(alpha * A @ B + beta * C + bias)        C: `out`'s values before the call

The kernels compute it in registers on their float32 accumulators (kernels.cutejit.epilogue.Epilogue says
what, once); here the options become that Epilogue and the run-time values the kernels read: alpha and beta
as float32 scalars, the bias as a zero-padded device vector seen as a stride-0 (M, N) matrix.
"""

from dataclasses import dataclass, replace
from numbers import Real
from typing import Any

import numpy as np
from numba import cuda

from cutelite.numeric import BFloat16, Float16, Float32, numeric

from ..arrays import broadcast, device_view, is_device_array
from ..cutejit.epilogue import ACTIVATIONS, Epilogue
from ..numeric import storage
from . import staging

__all__ = ["Fused", "fuse", "PLAIN", "OUT_DTYPES", "out_type", "traffic", "RECORDS", "recorded"]

OUT_DTYPES = (Float32, Float16, BFloat16)


def out_type(out_dtype, op="matmul"):
    """The element type (cutelite.numeric) of an out_dtype: a name, a NumPy dtype or a PyTorch dtype; a
    ValueError naming `op` unless it is float32, float16 or bfloat16."""
    name = str(out_dtype).replace("torch.", "") if not isinstance(out_dtype, type) else np.dtype(out_dtype).name
    try:
        t = numeric(np.dtype(name).name if name not in ("bfloat16", "bf16") else "bfloat16", op)
    except (TypeError, ValueError, KeyError):
        t = None
    if t not in OUT_DTYPES:
        raise ValueError("%s: out_dtype must be one of float32, float16, bfloat16, got %r" % (op, out_dtype))
    return t


@dataclass(frozen=True)
class Fused:
    """A call's epilogue: `epi` (the kernels' Epilogue), alpha and beta as float32, and the bias as a 1-D
    device array of its element type's storage (None: no bias)."""
    epi: Epilogue
    alpha: np.float32
    beta: np.float32
    bias: Any = None

    @property
    def plain(self) -> bool:
        return self.epi.plain

    def for_kernel(self, f32_bias=False):
        """(the Epilogue a kernel is built with, None for none; whether it reads the bias as float32): where
        `f32_bias` asks (the SIMT kernel), and for a 16-bit row bias, whose values a thread holds are not
        adjacent (the CuTe layer's copies make no 2-byte loads)."""
        if self.plain:
            return None, False
        wide = self.epi.bias is not None and (f32_bias or self.epi.bias == "row")
        return (replace(self.epi, bias_dtype="float32") if wide else self.epi), wide

    def arguments(self, D, stream=0, bias_f32=False, C=None):
        """(the kernel's run-time arguments after D, the copies to run before the kernel). D is written, of
        shape (rows, cols), which may be padded past (M, N). The arguments, those the Epilogue reads: C (D
        itself, or `C`, D's buffer seen wider: it holds C's old values when beta is on), the bias seen as a
        (rows, cols) matrix, alpha,
        beta. The copy, if any: the bias into a zero-padded float32 vector where `bias_f32` asks (a kernel built
        for a float32 bias), else into a zero-padded vector of its type where it is shorter than D's mode (an
        even count: the tensor-core kernels read two values at a time) or is not 16-byte aligned."""
        rows, cols = D.shape
        args, before = [], []
        if self.epi.beta:
            args.append(D if C is None else C)
        if self.epi.bias:
            n = rows if self.epi.bias == "row" else cols
            if n % 2 and not bias_f32:
                n += 1            # read two at a time (a thread's pair of columns), kept or dropped whole: even
            v = self.bias
            if bias_f32 and self.epi.bias_dtype != "float32":       # widened and padded in one pass
                v, widen = staging.widen_to_f32(v.reshape(1, v.shape[0]), self.epi.bias_dtype == "bfloat16", stream,
                                                (1, staging.ceil_to(n, 8)))
                before.append(widen)
                v = v.reshape(v.shape[1])
            elif v.shape[0] < n or _address(v) % 16:
                v, fill = staging.staged(v.reshape(1, v.shape[0]), 1, staging.ceil_to(n, 8), stream)
                before.append(fill)
                v = v.reshape(v.shape[1])
            args.append(broadcast(v, (n, cols) if self.epi.bias == "row" else (rows, n),
                                  1 if self.epi.bias == "row" else 0))
        if self.epi.alpha:
            args.append(self.alpha)
        if self.epi.beta:
            args.append(self.beta)
        return tuple(args), before


def _address(v):
    face = getattr(v, "__cuda_array_interface__", None)
    if face is not None:
        return face["data"][0]
    return np.asarray(getattr(v, "_ary", v)).__array_interface__["data"][0]


def fuse(out_type_, alpha, beta, bias, activation, M, N, out, on_device) -> Fused:
    """The Fused of matmul's options, or an error naming matmul, the argument and its value: alpha and beta
    real numbers, beta != 0 only with `out`, an activation of ACTIVATIONS, a bias of shape (N,) or (1, N)
    (one per column, as NumPy broadcasts it) or (M, 1) (one per row), of float32, float16 or bfloat16, in
    GPU memory where the product is (`on_device`)."""
    for name, x in (("alpha", alpha), ("beta", beta)):
        if not isinstance(x, Real) or isinstance(x, bool):
            raise TypeError("matmul: %s must be a real number, got %r" % (name, x))
    if beta != 0 and out is None:
        raise ValueError("matmul: beta=%r adds beta * C, the values of `out`; pass out (C) or beta=0" % (beta,))
    if activation not in ACTIVATIONS:
        raise ValueError("matmul: activation must be one of %s, got %r" % (", ".join(map(repr, ACTIVATIONS)),
                                                                         activation))
    mode, vector, dtype = None, None, Float32
    if bias is not None:
        mode, vector, dtype = _bias(bias, M, N, on_device)
    epi = Epilogue(out=out_type_.name, alpha=alpha != 1, beta=beta != 0, bias=mode, bias_dtype=dtype.name,
                   activation=activation)
    return Fused(epi, np.float32(alpha), np.float32(beta), vector)


def _bias(bias, M, N, on_device):
    """(mode, a 1-D device array of its values (storage type), its element type) of matmul's bias."""
    shape = tuple(getattr(bias, "shape", ()))
    if shape in ((N,), (1, N)):
        mode = "col"
    elif shape == (M, 1):
        mode = "row"
    else:
        raise ValueError("matmul: bias must have shape (%d,) or (1, %d) (one value per column of C) or (%d, 1) "
                         "(one per row), got %s" % (N, N, M, shape or type(bias).__name__))
    device = is_device_array(bias)
    if on_device and not device:
        raise ValueError("matmul: bias is in host memory but the product is computed from device arrays: pass "
                         "the bias on the same GPU (a %s)" % ("CUDA tensor" if "torch" in type(bias).__module__
                                                               else "device array"))
    dtype = getattr(bias, "dtype", None)
    name = str(dtype).replace("torch.", "")
    if name == "bfloat16" and device:
        import torch
        bias, name = bias.view(torch.int16), "bfloat16"
    try:
        t = numeric(name if name == "bfloat16" else np.dtype(name).name, "matmul")
    except (TypeError, ValueError, KeyError):
        t = None
    if t not in OUT_DTYPES:
        raise TypeError("matmul: bias must be float32, float16 or bfloat16, got %s" % dtype)
    held = storage(t)
    if device:
        v = device_view(bias)
        v = v.reshape(v.size) if len(v.shape) == 2 and (v.shape[0] == 1 or v.shape[1] == 1) and _contiguous(v) else v
        if len(v.shape) != 1:
            raise ValueError("matmul: bias on the device must be contiguous, got strides %s" % (v.strides,))
    else:
        v = cuda.to_device(np.ascontiguousarray(np.asarray(bias).reshape(-1)))
    v = v if np.dtype(v.dtype) == np.dtype(held) else v.view(held)
    return mode, v, t


def _contiguous(v):
    return v.strides[0 if v.shape[0] > 1 else 1] == v.dtype.itemsize or v.size <= 1


PLAIN = Fused(Epilogue(), np.float32(1), np.float32(0))      # no epilogue: D = A @ B in float32


def traffic(M, N, K, in_bytes=2, out_bytes=2, passes=("bias", "gelu")):
    """{plan: [(step, bytes read, bytes written)]} of D = act(A @ B + bias) in DRAM, each matrix moved once
    a step (a model: no cache reuse between steps): "fused" is one GEMM that reads A, B and the bias and
    writes D; "separate" is the GEMM writing C, then one elementwise pass per entry of `passes`, each
    reading the matrix the step before wrote (the bias pass also the bias) and writing it again."""
    ab, mn, bias = (M * K + K * N) * in_bytes, M * N * out_bytes, N * out_bytes
    fused = [("GEMM + " + " + ".join(passes), ab + (bias if "bias" in passes else 0), mn)]
    separate = [("GEMM", ab, mn)] + [(p, mn + (bias if p == "bias" else 0), mn) for p in passes]
    return {"fused": fused, "separate": separate}


RECORDS = "benchmarks/gemm/epilogue_records.json"    # written by benchmarks/gemm/epilogue_bench.py --records


def recorded(root=None):
    """The recorded timings of the fused epilogues (RECORDS under `root`, default: this checkout) as a
    Markdown table under the run's device, date, command and fuzz result, or a line saying there is no record
    yet."""
    import json
    import os
    root = root or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.path.join(root, RECORDS)
    if not os.path.exists(path):
        return "no record yet: %s is written by `python benchmarks/gemm/epilogue_bench.py --records`" % RECORDS
    rec = json.load(open(path))
    fuzz = rec["fuzz"]
    note = " (%s)" % fuzz["note"] if fuzz.get("note") else ""
    lines = ["%s, %s: `%s`; its fuzz: %d of %d cases failed%s" % (rec["device"], rec["date"], rec["command"],
                                                                   fuzz["failed"], fuzz["cases"], note), "",
             "| size | run | ms | TFLOP/s |", "|---|---|---|---|"]
    lines += ["| %d^3 | %s | %.3f | %.1f |" % (r["size"], r["run"], r["ms"], r["tflops"]) for r in rec["rows"]]
    return "\n".join(lines)
