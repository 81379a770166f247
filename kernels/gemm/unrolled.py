"""Straight-line device functions for the SIMT k-tile, written out as Python source.

Numba keeps a local array in registers only when every index is a constant once LLVM has unrolled the
loops around it; the 8 rank-1 updates of a k-tile of an 8x8 thread tile (512 FMA) are past LLVM's
unrolling budget, and the accumulators then live in local memory. So, as `kernels.layout_codegen` does for
layouts, the unrolled code is written out as source: accumulators are tuples, every index is a literal.
(The tensor-core steps get the same from the CuTe layer, kernels.cutejit, which writes whole kernels.)

Each function's source is kept in `.source` (the chapter prints them).
"""

from numba import cuda

from ..source import compile_function


def _compile(src, name, env):
    """The function `name` of `src` (`env` its globals) as a device function inlined into its caller."""
    fn = cuda.jit(device=True, inline="always")(compile_function(src, name, env, "unrolled"))
    fn.source = src
    return fn


def _tuple(items):
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def zeros_source(n):
    return "def zeros():\n    z = float32(0.0)\n    return %s\n" % _tuple(["z"] * n)


def zeros(n):
    """zeros() -> a tuple of n float32 zeros (the accumulators' start)."""
    import numpy as np
    return _compile(zeros_source(n), "zeros", {"float32": np.float32})


def outer_products_source(BK, a_row, b_row, a_gap, b_gap):
    """steps(sA, sB, a, b, acc): BK rank-1 updates of a thread's 8x8 fp32 block, straight-line.
    At step k the thread reads A^T[k, a .. a + 3] and [a + a_gap ...] (two ld.shared.v4: its 8 rows) and
    B[k, b .. b + 3], [b + b_gap ...] (its 8 columns); row k starts k * a_row (k * b_row) further on;
    acc[8 i + j] += A row i x B column j."""
    lines = ["def steps(sA, sB, a, b, acc):"]
    cur = ["acc[%d]" % i for i in range(64)]
    for k in range(BK):
        lines.append("    x0 = ld_a(sA, a + %d)" % (k * a_row))
        lines.append("    x1 = ld_a(sA, a + %d)" % (k * a_row + a_gap))
        lines.append("    y0 = ld_b(sB, b + %d)" % (k * b_row))
        lines.append("    y1 = ld_b(sB, b + %d)" % (k * b_row + b_gap))
        for i in range(8):
            for j in range(8):
                v = "c%d_%d" % (k, 8 * i + j)
                lines.append("    %s = %s + x%d[%d] * y%d[%d]" % (v, cur[8 * i + j], i // 4, i % 4, j // 4, j % 4))
                cur[8 * i + j] = v
    lines.append("    return " + _tuple(cur))
    return "\n".join(lines) + "\n"


def outer_products(ld, BK, a_row, b_row, a_gap, b_gap):
    return _compile(outer_products_source(BK, a_row, b_row, a_gap, b_gap), "steps", {"ld_a": ld, "ld_b": ld})
