"""kernels: the GPU half of the book, in floors, each built on the one below.

    import kernels
    info = kernels.setup()          # GPU or simulator; prints a banner. Call it before importing numba.
    kernels.setup(profile="sm_75")  # ... deciding every capability as on a T4 (or CUTE_PROFILE=sm_75)

  * kernels.instructions: every instruction a kernel calls (mma.sync, ldmatrix, cp.async, 16-byte loads
    and stores, shuffles; wgmma, TMA, mbarrier on Hopper): inline PTX on a GPU, a pure-Python twin in
    Numba's simulator; an MMA or ldmatrix atom's intrinsic is built from the cutelite atom itself.
    `python -m kernels.gpu_check` runs every instruction's self-test.
  * kernels.cutejit: the CuTe layer. A kernel written with cutelite's TiledCopy, TiledMMA and layouts
    (partition_S, copy, retile_D, gemm, ...) is traced into straight-line Numba code, every layout folded.
  * the kernels, by chapter: kernels.tiled (chapter 6: a TiledCopy and a TiledMMA tile), kernels.gemm
    (chapter 7: the GEMM ladder, SIMT and tensor cores), kernels.hopper (chapter 8: wgmma and TMA).
  * kernels.lib: the library entries on the chapters' best kernels, for NumPy, CuPy, PyTorch and Numba arrays:
    matmul (D = act(alpha A @ B + beta C + bias), 16-bit, float32 and FP8 inputs) and attention ((O, LSE) of
    forward attention, chapter 10's kernels).
Beside them: kernels.expr (a run-time integer as source text, constants folded), kernels.layout_codegen (a
static layout evaluated at run-time coordinates: cutejit indexes memory with it, and layout_fn writes it as a
device function for the kernels written by hand, the SIMT steps and chapters 1-4),
kernels.capability (which GPU runs what; kernels.supports, require and why_not ask it about current_cc(),
this GPU's or the profile's), kernels.timing (GPU time), kernels.arrays (device arrays as Numba views).

Importing this package does not import numba: Numba reads NUMBA_ENABLE_CUDASIM when it is first imported,
and `setup()` has to set it first on a machine without a GPU.
"""

from .capability import CapabilityError, best_mma_for  # noqa: F401
from .layout_codegen import layout_fn, layout_pyfunc, layout_source  # noqa: F401
from .runtime import (DeviceInfo, current_cc, in_simulator, pick_size, require, setup, supports,  # noqa: F401
                      why_not)
