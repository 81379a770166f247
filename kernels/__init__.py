"""kernels: the toolchain every CuTe-from-Scratch kernel uses.

    import kernels
    info = kernels.setup()          # GPU or simulator; prints a banner; call it before importing numba

then `from kernels.intrinsics import ...` for inline-PTX intrinsics (mma, ldmatrix, cp.async, 128-bit
loads) that also run in Numba's CUDA simulator, `kernels.layout_codegen.layout_fn` to turn a cutelite
layout into a device function, and `kernels.capability` to ask what a GPU (a T4 is sm_75) supports.

Importing this package does not import numba: Numba reads NUMBA_ENABLE_CUDASIM when it is first imported,
and `setup()` has to set it first on a machine without a GPU.
"""

from .capability import CapabilityError, best_mma_for, require, supports  # noqa: F401
from .runtime import DeviceInfo, in_simulator, pick_size, setup  # noqa: F401
