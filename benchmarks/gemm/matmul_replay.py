"""matmul's replayed calls (run on an sm_90 GPU): an `out` that overlaps A (NumPy's temporary), a second call
on the same PyTorch tensors checked again, the host's microseconds per queued call (and torch.mm's in the
same loop), and GPU time against cuBLAS at 4096^3 (B row- and column-major) and 2048^3. The "prepared
calls" run of benchmarks/gemm/RESULTS.md.

    PYTHONPATH=. python3 benchmarks/gemm/matmul_replay.py
"""
import time

import kernels

kernels.setup()
import torch  # noqa: E402

from kernels.lib import matmul  # noqa: E402
from kernels.harness import cublas_baseline, rel_err  # noqa: E402
from kernels.timing import gpu_time_ms  # noqa: E402

# aliasing: out overlaps A
buf = torch.empty(64 * 64, device="cuda")
A = buf.view(torch.float16)[:64 * 64].view(64, 64); A.copy_(torch.randn(64, 64, device="cuda").half())
B = torch.randn(64, 64, device="cuda").half()
ref = A.float() @ B.float()
out = buf.view(64, 64)
matmul(A, B, out=out); torch.cuda.synchronize()
err = rel_err(out, ref); print("aliased out: rel err %.2e" % err, "PASS" if err < 1e-5 else "FAIL")
# repeated calls: the prepared path gives the same result
for bm in ("row", "col"):
    a = torch.randn(4096, 4096, device="cuda").half(); b = torch.randn(4096, 4096, device="cuda").half()
    if bm == "col": b = b.T.contiguous().T
    o = torch.full((4096, 4096), float("nan"), device="cuda")
    matmul(a, b, out=o); o.fill_(float("nan")); matmul(a, b, out=o)
    ref = a.float() @ b.float(); err = rel_err(o, ref)
    print("second call, B %s: rel err %.2e" % (bm, err), "PASS" if err < 1e-5 else "FAIL")
    n = 200; torch.cuda.synchronize(); t0 = time.perf_counter()
    for _ in range(n): matmul(a, b, out=o)
    t1 = time.perf_counter(); torch.cuda.synchronize()
    print("host us per matmul call (queued), B %s: %.1f" % (bm, (t1 - t0) / n * 1e6))
    t0 = time.perf_counter()
    cublas = cublas_baseline(a, b, out=o)[1]
    for _ in range(n): cublas()
    t1 = time.perf_counter(); torch.cuda.synchronize()
    print("host us per torch.mm call (queued): %.1f" % ((t1 - t0) / n * 1e6))
    base = gpu_time_ms(cublas, 30)
    t = gpu_time_ms(lambda: matmul(a, b, out=o), 30)
    print("4096^3 f16 B %s: matmul %.3f ms, cuBLAS %.3f ms: %.2f" % (bm, t, base, base / t))
for S in (2048,):
    a = torch.randn(S, S, device="cuda").half(); b = torch.randn(S, S, device="cuda").half(); o = torch.empty(S, S, device="cuda")
    base = gpu_time_ms(cublas_baseline(a, b, out=o)[1], 30)
    t = gpu_time_ms(lambda: matmul(a, b, out=o), 30)
    print("2048^3 f16 B row: matmul %.3f ms, cuBLAS %.3f ms: %.2f" % (t, base, base / t))
