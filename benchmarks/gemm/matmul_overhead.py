"""Host time of one matmul call from torch tensors at 4096^3 f16 (device machine): cProfile of 20 calls,
the top entries by cumulative time. `python3 benchmarks/gemm/matmul_overhead.py`"""
import cProfile
import pstats

import kernels

kernels.setup()
import torch  # noqa: E402
from numba import cuda  # noqa: E402

from kernels.lib import matmul  # noqa: E402

A = torch.randn(4096, 4096, device="cuda").half()
B = torch.randn(4096, 4096, device="cuda").half()
C = torch.empty(4096, 4096, device="cuda")
for _ in range(3):
    matmul(A, B, out=C)
cuda.synchronize()
pr = cProfile.Profile()
pr.enable()
for _ in range(20):
    matmul(A, B, out=C)
cuda.synchronize()
pr.disable()
pstats.Stats(pr).sort_stats("cumulative").print_stats(18)
