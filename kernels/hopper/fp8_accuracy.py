"""How accurate the FP8 kernel is: on the same data, each variant's error against a float64 product of its own
dequantized inputs, so the error measured is the accumulation's and the output's, not the quantization's.

    errors(x, y)    x (M, K), y (N, K) floats -> {"no promotion": e, "promotion every k-tile": e, "blockwise": e}

The variants are kernels.hopper.fp8's (VARIANTS): per-tensor scales without promotion and with promotion every
k-tile (128 of K), and blockwise scales (A per 1 x 128, B per 128 x 128, promoted every k-tile). `others` adds
any other GEMM on the same per-tensor data (cuBLAS's torch._scaled_mm, in benchmarks/gemm/fp8_bench.py).

On a GPU the tensor cores add FP8 products with fewer mantissa bits than float32 (kernels.hopper.fp8), which
promotion repairs. Numba's simulator sums the products exactly (kernels.instructions.hopper_model): there the
variants differ only by the output's rounding, and the GPU's record holds the difference.
"""

import numpy as np

from cutelite.numeric import numeric

from ..harness import rel_err
from ..numeric import decode, encode
from ..runtime import in_simulator
from . import fp8

__all__ = ["VARIANTS", "largest", "quantize", "dequantize", "run", "errors"]

VARIANTS = {"no promotion": dict(promote=0), "promotion every k-tile": dict(promote=1),
            "blockwise": dict(promote=1, scales="blockwise")}


def largest(dtype):
    """The largest finite value of an 8-bit float type (448 for e4m3, 57344 for e5m2), read off all its codes."""
    values = decode(np.arange(256, dtype=np.uint8), dtype)
    return float(np.nanmax(values[np.isfinite(values)]))


def quantize(x, dtype, block=None):
    """(x's elements as `dtype` codes (uint8), the float32 scales): one scale for the tensor (block None, a (1, 1)
    array) or one per (bmn, bk) block (an (MN blocks, K blocks) array), each mapping its block's largest
    magnitude to the type's largest value."""
    x = np.asarray(x, np.float64)
    bmn, bk = block or x.shape
    blocks = -(-x.shape[0] // bmn), -(-x.shape[1] // bk)
    padded = np.zeros((blocks[0] * bmn, blocks[1] * bk))
    padded[:x.shape[0], :x.shape[1]] = np.abs(x)
    amax = padded.reshape(blocks[0], bmn, blocks[1], bk).max(axis=(1, 3))
    scales = (np.maximum(amax, 1e-12) / largest(dtype)).astype(np.float32)
    return encode(x / _per_element(scales, block, x.shape), dtype), scales


def dequantize(codes, scales, dtype, block=None):
    """float64 values of `codes` times their scales (quantize's inverse, exact)."""
    return decode(codes, dtype).astype(np.float64) * _per_element(scales, block, codes.shape)


def _per_element(scales, block, shape):
    bmn, bk = block or shape
    full = np.repeat(np.repeat(np.asarray(scales, np.float64), bmn, 0), bk, 1)
    return full[:shape[0], :shape[1]]


_BUILT = {}


def run(a, bt, sa, sb, out="float32", dtype="float8_e4m3fn", **config):
    """C (float64, M x N) of kernels.hopper.fp8 built with `config` on host arrays: A (M, K) and Bt (N, K) codes,
    the scales as quantize gives them (the kernel's MN-major order is made here). In the simulator the
    model plays the Hopper instructions (one persistent block); on a GPU each configuration is built once."""
    from numba import cuda
    if in_simulator():
        from ..instructions.hopper_model import HopperModel
        model = HopperModel()
        k = fp8.make(dtype=dtype, out=out, overrides=model.overrides(), **config)
        tensor_map, grid = model.tensor_map, 1
    else:
        from ..cutejit import encode_tensor_map as tensor_map
        key = (dtype, out) + tuple(sorted(config.items()))
        k = _BUILT[key] = _BUILT.get(key) or fp8.make(dtype=dtype, out=out, **config)
        a, bt, grid = cuda.to_device(a), cuda.to_device(bt), None
    held = numeric(out).numpy
    C = np.full((a.shape[0], bt.shape[0]), 0x7FFF if held == "uint16" else np.nan, held)   # NaN: poisoned
    C = C if in_simulator() else cuda.to_device(C)
    o = k.objects
    k.launch(a, bt, C, np.asfortranarray(sa), np.asfortranarray(sb), tensor_map(a, o.tmA), tensor_map(bt, o.tmB),
             grid=grid)
    C = C if in_simulator() else C.copy_to_host()
    return (decode(C, out) if held == "uint16" else C).astype(np.float64)


def errors(x, y, dtype="float8_e4m3fn", out="float32", others=None):
    """{variant: relative (Frobenius) error} of each VARIANTS kernel, then each of `others` ({name: f(a, bt, sa,
    sb) -> C} on the per-tensor codes and scales), on x (M, K) and y (N, K) quantized to `dtype`, against the
    float64 product of the dequantized inputs the variant was given. An output left unwritten is infinite."""
    blocks = {"tensor": (None, None), "blockwise": fp8.SCALE_BLOCKS["blockwise"]}
    data = {}
    for scales, (block_a, block_b) in blocks.items():
        (a, sa), (bt, sb) = quantize(x, dtype, block_a), quantize(y, dtype, block_b)
        want = dequantize(a, sa, dtype, block_a) @ dequantize(bt, sb, dtype, block_b).T
        data[scales] = a, bt, sa, sb, want
    result = {}
    for name, config in VARIANTS.items():
        *args, want = data[config.get("scales", "tensor")]
        result[name] = rel_err(run(*args, out=out, dtype=dtype, **config), want)
    for name, f in (others or {}).items():
        *args, want = data["tensor"]
        result[name] = rel_err(f(*args), want)
    return result
