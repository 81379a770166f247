"""kernels: the toolchain every CuTe-from-Scratch kernel uses.

    import kernels
    info = kernels.setup()          # GPU or simulator; prints a banner. Call it before importing numba.

Then:
  * `from kernels.intrinsics import ...`: inline-PTX intrinsics (mma.sync m8n8k4 / m16n8k8 / m16n8k16,
    ldmatrix x1/x2/x4 (.trans), cp.async + commit/wait, 128-bit global loads/stores, shuffles, f16/bf16
    packing) that also run, with the same numbers, in Numba's CUDA simulator.
  * `kernels.layout_fn(layout)`: a cutelite Layout / swizzled ComposedLayout as a device function.
  * `kernels.best_mma_for(cc)`, `kernels.require(name)`: what a GPU supports (a T4 is sm_75).
  * `kernels.fragments`: which lane holds which matrix element, for every warp-wide instruction.
  * `python -m kernels.gpu_check`: every demo kernel (kernels.demos) against NumPy on this GPU.

Importing this package does not import numba: Numba reads NUMBA_ENABLE_CUDASIM when it is first imported,
and `setup()` has to set it first on a machine without a GPU.
"""

from .capability import CapabilityError, best_mma_for, supports  # noqa: F401
from .layout_codegen import layout_fn, layout_pyfunc, layout_source  # noqa: F401
from .runtime import DeviceInfo, in_simulator, pick_size, require, setup  # noqa: F401
