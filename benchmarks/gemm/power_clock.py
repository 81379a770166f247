"""Clock and power under load (device machine): each GEMM runs back to back for a few seconds at 4096^3
while nvidia-smi samples the SM clock and the board power; prints TFLOP/s, the median clock and power, and
the FLOP per SM per cycle that the TFLOP/s and the clock imply (the dense fp16 tensor peak is 4096 on an
H100 SXM). Tells a kernel that is slow per cycle from one that runs at a lower clock.

    python3 benchmarks/gemm/power_clock.py [seconds]
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import kernels  # noqa: E402

kernels.setup(verbose=False)
import numpy as np  # noqa: E402
import torch  # noqa: E402
from numba import cuda  # noqa: E402

from kernels.harness import check, cublas_baseline  # noqa: E402
from kernels.hopper import gemm as H  # noqa: E402
from kernels.gemm import tc_sm80_prefetch  # noqa: E402

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
S = 4096
FLOP = 2.0 * S ** 3
SMS = cuda.get_current_device().MULTIPROCESSOR_COUNT
torch.backends.cuda.matmul.allow_tf32 = False
g = torch.Generator(device="cuda").manual_seed(5)
A = torch.randn(S, S, device="cuda", generator=g).half()
Bt = torch.randn(S, S, device="cuda", generator=g).half()        # B = Bt.T: column-major, K-major
B_rm = Bt.t().contiguous()                                          # B row-major, for the sm_80 rung
C = torch.empty(S, S, device="cuda")
ref = A.float() @ Bt.float().T
ca, cbt, cb, cc = (cuda.as_cuda_array(x) for x in (A, Bt, B_rm, C))
a16, bt16, b16 = (x.view(np.uint16) for x in (ca, cbt, cb))
sm80 = tc_sm80_prefetch.make(**tc_sm80_prefetch.BEST)
hopper = {name: H.step(name).kernel for name in ("persistent BN256 st4 group16",
                                                  "persistent BN256 st4 group16 tma-store")}
runs = [("cuBLAS fp16->fp32", cublas_baseline(A, Bt.T, out=C)[1]),
        ("cuBLAS fp16->fp16", lambda: torch.mm(A, Bt.T))]
runs += [(name, (lambda h: lambda: h(ca, cbt, cc))(h)) for name, h in hopper.items()]
runs += [("tc sm80 prefetch (mma.sync)", lambda: sm80.launch(a16, b16, cc))]


def start_sampler():
    """nvidia-smi printing "SM clock MHz, power W" every 100 ms until terminated."""
    return subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader,nounits",
                             "-lms", "100"], stdout=subprocess.PIPE, text=True)


for name, fn in runs:
    if name != "cuBLAS fp16->fp16":             # that one writes a C of its own, in fp16
        check(fn, C, ref, name, tol=1e-5)
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    p = start_sampler()
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < SECONDS:
        for _ in range(20):
            fn()
        n += 20
        torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    p.terminate()
    out = p.communicate()[0].strip().splitlines()
    vals = np.array([[float(v) for v in line.split(",")] for line in out[2:-1] if line.count(",") == 1])
    mhz, watts = np.median(vals[:, 0]), np.median(vals[:, 1])
    tflops = n * FLOP / dt / 1e12
    per_clk = tflops * 1e12 / (SMS * mhz * 1e6)
    print("%-40s %6.1f TFLOP/s  %5.0f MHz  %4.0f W  %5.0f FLOP/SM/cycle (%.0f%% of 4096)"
          % (name, tflops, mhz, watts, per_clk, 100 * per_clk / 4096), flush=True)
