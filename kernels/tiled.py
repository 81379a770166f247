"""Chapter 6's kernels in one import: a TiledCopy and a TiledMMA, run on the GPU or in the simulator.

    import kernels; kernels.setup()
    from kernels.tiled import run_tiled_copy, run_warp_gemm
    out, ms = run_tiled_copy(src, bits=128)          # (M, N) float32 through SMEM; ms with reps=20
    C = run_warp_gemm(A, B, path="sm75")             # f16 (M, K) @ (K, N) -> f32, sides multiples of 32

The objects they are compiled from: `make_copy(bits, path)` (kernels.tiled_copy) and
`make_gemm_objects(path)` (kernels.tiled_mma). `python -m kernels.tiled_check` runs both on a GPU with
SASS evidence and timings. Import after kernels.setup().
"""

from .tiled_copy import make_copy, make_copy_kernel, run_tiled_copy, thread_maps, vector_width  # noqa: F401
from .tiled_mma import GemmObjects, make_gemm_kernel, make_gemm_objects, run_warp_gemm  # noqa: F401
