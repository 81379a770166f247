"""kernels.lib: the library entries a user calls (floor 4), on the kernels of the chapters below.

    from kernels.lib import matmul
    C = matmul(A, B)                        # NumPy, CuPy, PyTorch or Numba arrays; see matmul.py

    operand.py    Operand: one argument described once (element type, shape, major, pitch, alignment,
                  stream, memory span), read by every check
    matmul.py     the entry: describe, check, pick a kernel family, prepare, launch (and launch again)
    simt.py, mma_sync.py, wgmma.py, fp8.py
                  the kernel families, each with can_implement(a, b, c) -> (bool, reason) and
                  prepare(a, b, c, stream) -> a launchable call that returns C
    shapes.py     the rule for a problem's tile and split of K (choose_tile), from its shape and the SM count
    staging.py    the copies around a kernel (pad, crop, widen to f32, add split-K slices), within CUDA's
                  grid limits

Import after kernels.setup().
"""

from .matmul import matmul  # noqa: F401
from .operand import Operand, describe  # noqa: F401
