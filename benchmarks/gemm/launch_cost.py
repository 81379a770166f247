"""Host cost of one call (device machine): microseconds the host spends per call of each launch path, while
the GPU is kept busy (so no call waits for the GPU), and cProfile's top entries for the Hopper kernel and
matmul. `python3 benchmarks/gemm/launch_cost.py`"""
import cProfile
import os
import pstats
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import kernels  # noqa: E402

kernels.setup()
import numpy as np  # noqa: E402
import torch  # noqa: E402
from numba import cuda  # noqa: E402

from kernels.harness import cublas_baseline  # noqa: E402
from kernels.timing import host_us  # noqa: E402
from kernels.hopper import gemm as H  # noqa: E402
from kernels.lib import matmul  # noqa: E402


@cuda.jit
def tiny(x, y, z):
    i = cuda.grid(1)
    if i < x.size:
        z[i] = x[i] + y[i]


S = 4096
ta = torch.randn(S, S, device="cuda").half()
tb = torch.randn(S, S, device="cuda").half()
tbt = tb.T.contiguous()
tc = torch.empty(S, S, device="cuda")
da, dbt, dc = (cuda.as_cuda_array(t) for t in (ta, tbt, tc))
x = cuda.device_array(1024, np.float32)
g = H.HopperGemm(**H.MATMUL_CONFIG)
rows = [("numba 3 arrays, tiny kernel", host_us(lambda: tiny[4, 256](x, x, x))),
        ("HopperGemm(da, dbt, dc)", host_us(lambda: g(da, dbt, dc))),
        ("matmul(torch A, torch B col-major, out=C)", host_us(lambda: matmul(ta, tbt.T, out=tc))),
        ("matmul(torch A, torch B row-major, out=C)", host_us(lambda: matmul(ta, tb, out=tc))),
        ("torch.mm fp16->fp32", host_us(cublas_baseline(ta, tbt.T, out=tc)[1]))]
for name, fn in (("HopperGemm", lambda: g(da, dbt, dc)), ("matmul", lambda: matmul(ta, tbt.T, out=tc))):
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(50):
        fn()
    pr.disable()
    cuda.synchronize()
    print("== cProfile, 50 calls of", name)
    pstats.Stats(pr).sort_stats("tottime").print_stats(14)
print("| path | host us per call |\n|---|---|")
for name, us in rows:
    print("| %s | %.1f |" % (name, us))
