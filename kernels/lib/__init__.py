"""kernels.lib: the library entries a user calls (floor 4), on the kernels of the chapters below.

    from kernels.lib import matmul
    C = matmul(A, B)                        # NumPy, CuPy, PyTorch or Numba arrays; see matmul.py

    operand.py    Operand: one argument described once (element type, shape, major, pitch, alignment,
                  stream, memory span), read by every check
    attention.py  attention(q, k, v, causal, scale, out, layout, lse) -> (O, LSE): chapter 10's kernels (fa3_wgmma
                  on sm_90, fa2_mma elsewhere), for the same arrays
    matmul.py     the entry: describe, check, pick a kernel family, prepare, launch (and launch again)
    simt.py, mma_sync.py, wgmma.py, fp8.py
                  the kernel families, each with can_implement(a, b, c) -> (bool, reason) and
                  prepare(a, b, c, stream) -> a launchable call that returns C
    shapes.py     the rule for a problem's tile, split of K and stream-K (choose_tile), from its shape and the SM count
    epilogue.py   Fused: matmul's epilogue options (out_dtype, alpha, beta, bias, activation) read and checked once
    staging.py    the copies around a kernel (pad, crop, widen to f32, seed C), within CUDA's grid limits

Import after kernels.setup().
"""

from .attention import attention  # noqa: F401
from .matmul import matmul  # noqa: F401
from .operand import Operand, describe  # noqa: F401
