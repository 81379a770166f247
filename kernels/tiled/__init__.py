"""Chapter 6's kernels: a TiledCopy and a TiledMMA, written with the CuTe layer (kernels.cutejit), run on
the GPU or in the simulator.

    import kernels; kernels.setup()
    from kernels.tiled import run_tiled_copy, run_warp_gemm
    out, ms = run_tiled_copy(src, bits=128, reps=20)   # (M, N) float32 through shared memory
    C = run_warp_gemm(A, B, path="sm75")             # f16 (M, K) @ (K, N) -> f32, sides multiples of 32

The kernels are `copy.tile_copy` and `mma.gemm_tile`; the objects they are built from `make_copy(bits,
path)` and `make_gemm_objects(path)`. `python -m kernels.tiled.check` runs both on a GPU with SASS evidence
and timings. Import after kernels.setup().
"""

from .copy import TIMED_SIZES, make_copy, make_copy_kernel, run_tiled_copy, tile_copy  # noqa: F401
from .mma import GemmObjects, gemm_tile, make_gemm_kernel, make_gemm_objects, run_warp_gemm  # noqa: F401
