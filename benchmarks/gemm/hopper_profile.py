"""Launch one Hopper GEMM variant a few times at 4096^3, for a profiler (the device machine has ncu):

    ncu --kernel-name regex:gemm_ --launch-skip 2 --launch-count 1 --section SpeedOfLight \
        --section WarpStateStats python3 benchmarks/gemm/hopper_profile.py [persistent|tma_store|ws]

`cublas` launches cuBLAS fp16 -> fp32 (torch.mm out_dtype=float32) on the same inputs instead, for the same
sections at ncu's fixed clock (name filter regex:"gemm|nvjet|xmma|cutlass").
"""
import sys

import numpy as np

import kernels

kernels.setup()
from numba import cuda  # noqa: E402

from kernels.hopper import gemm as H  # noqa: E402

CONFIGS = {"tma_store": H.MATMUL_CONFIG, "persistent": H.step("persistent BN256 st4 group16").config,
           "ws": H.step("ws BN256 st4 setmaxnreg group8").config}
S = 4096
rng = np.random.default_rng(0)
a = cuda.to_device((rng.standard_normal((S, S)) * 0.5).astype(np.float16))
bt = cuda.to_device((rng.standard_normal((S, S)) * 0.5).astype(np.float16))
c = cuda.device_array((S, S), np.float32)
which = sys.argv[1] if len(sys.argv) > 1 else "tma_store"
if which == "cublas":
    import torch
    from kernels.harness import cublas_baseline
    cublas = cublas_baseline(torch.as_tensor(a, device="cuda"), torch.as_tensor(bt, device="cuda").T)[1]
    for _ in range(4):
        cublas()
    torch.cuda.synchronize()
    print("ran cuBLAS fp16->fp32 4 times")
else:
    gemm = H.HopperGemm(**CONFIGS[which])
    for _ in range(4):
        gemm(a, bt, c)
    cuda.synchronize()
    print("ran", gemm.kernel.function.__name__, "4 times")
