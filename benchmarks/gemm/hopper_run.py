"""One device run for the Hopper GEMM (issue 11, part B): every step of kernels.hopper checked
(NaN-poisoned C, NumPy reference, three shapes) and timed at 4096^3 against cuBLAS in the same process,
then kernels.lib.matmul(kernel="auto") (on sm_90 the Hopper kernel, here set to this run's fastest
step) against kernel="tc_sm80", chapter 8's time_vs_cublas, and the host's launch cost of the fastest
step and of cuBLAS (kernels.timing.launch_overhead_ms). Times: kernels.timing.gpu_time_ms. Short table last.

    PYTHONUNBUFFERED=1 python3 benchmarks/gemm/hopper_run.py
"""
import numpy as np

import kernels

kernels.setup()
from numba import cuda  # noqa: E402

from kernels.harness import check_and_time, cublas_baseline  # noqa: E402
from kernels.hopper import gemm as H  # noqa: E402
from kernels.lib import matmul  # noqa: E402
from kernels.timing import gpu_time_ms, launch_overhead_ms  # noqa: E402

rows = H.main()
passed = [(ms, name) for name, ok, ms, _ in rows if ok]
best = min(passed)[1]
H.MATMUL_CONFIG = H.step(best).config      # matmul("auto") below runs this run's fastest step
print("matmul('auto') runs %r: %s" % (best, H.MATMUL_CONFIG), flush=True)

S = 4096
rng = np.random.default_rng(3)
a = (rng.standard_normal((S, S)) * 0.5).astype(np.float16)
b_cm = np.asfortranarray((rng.standard_normal((S, S)) * 0.5).astype(np.float16))   # B column-major
ref = a.astype(np.float32) @ b_cm.astype(np.float32)
da, db = cuda.to_device(a), cuda.to_device(b_cm)
res = {}
for which in ("auto", "tc_sm80"):
    out = cuda.device_array((S, S), np.float32)
    ms, err = check_and_time(lambda: matmul(da, db, out=out, kernel=which), out, ref, "matmul(kernel=%r)" % which,
                             reps=20)
    extra = launch_overhead_ms(lambda: matmul(da, db, out=out, kernel=which))
    res[which] = (err, ms)
    print("matmul(kernel=%r) 4096^3, B column-major: rel err %.2e, %.3f ms (a call from an idle GPU: %.3f ms more)"
          % (which, err, ms, extra))
small = matmul(a[:256, :320], np.asfortranarray(b_cm[:320, :512]))
print("matmul auto 256x512x320 from NumPy: max err %.2e" % np.abs(small - a[:256, :320].astype(np.float32)
                                                                  @ b_cm[:320, :512].astype(np.float32)).max())
print(H.time_vs_cublas(H.HopperGemm(**H.MATMUL_CONFIG)))

# what timing single launches from an idle GPU (this file's method before 2026-11-24) adds to each
import torch  # noqa: E402
g = H.step(best).kernel
ta, tbt = torch.from_numpy(a).cuda(), torch.from_numpy(np.ascontiguousarray(b_cm.T)).cuda()
tc = torch.empty(S, S, device="cuda")
ca, cbt, cc = (cuda.as_cuda_array(x) for x in (ta, tbt, tc))
for name, fn in (("kernel %r" % best, lambda: g(ca, cbt, cc)),
                 ("cuBLAS fp16->fp32", cublas_baseline(ta, tbt.T, out=tc)[1])):
    print("launch from an idle GPU, %s: %.3f ms more than its GPU time %.3f ms"
          % (name, launch_overhead_ms(fn, 20), gpu_time_ms(fn, 20)))

print("\n== summary (this run) ==")
flops = 2.0 * S ** 3
for name, ok, ms, sass in rows:
    print("%-34s %s %s SASS %s" % (name, "PASS" if ok else "FAIL", "%.3f ms %.1f TFLOP/s" % (ms, flops / ms / 1e9)
                                   if ok else "", sass))
for which, (err, ms) in res.items():
    print("matmul %-8s err %.1e %.3f ms %.1f TFLOP/s" % (which, err, ms, flops / ms / 1e9))
