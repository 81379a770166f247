"""One device run for the TMA-store epilogue (HopperGemm(..., tma_store=True)): the new variant and the
current persistent kernel checked (NaN-poisoned C, NumPy reference, three shapes) and timed at 4096^3
against cuBLAS in the same process; then matmul(kernel="auto") with the new variant on a column-major B.
Short table last.

    PYTHONPATH=. PYTHONUNBUFFERED=1 python3 benchmarks/gemm/hopper_tma_store_run.py
"""
import numpy as np

import kernels

kernels.setup()
from numba import cuda  # noqa: E402

from kernels.harness import check  # noqa: E402
from kernels.hopper import gemm as H  # noqa: E402
from kernels.lib import matmul  # noqa: E402

steps = [H.step("persistent BN256 st4 group16"), H.step("persistent BN256 st4 group16 tma-store")]
steps.append(H.make_step("persistent BN256 st4 group8 tma-store", **dict(steps[1].config, group=8)))
rows = H.main(steps=steps)

H.MATMUL_CONFIG = steps[1].config
S = 4096
rng = np.random.default_rng(3)
a = (rng.standard_normal((S, S)) * 0.5).astype(np.float16)
b_cm = np.asfortranarray((rng.standard_normal((S, S)) * 0.5).astype(np.float16))
ref = a.astype(np.float32) @ b_cm.astype(np.float32)
da, db = cuda.to_device(a), cuda.to_device(b_cm)
out = cuda.device_array((S, S), np.float32)
err = check(lambda: matmul(da, db, out=out, kernel="auto"), out, ref, "matmul('auto')")
print("matmul('auto') with %s, 4096^3, B column-major: rel err %.2e" % (steps[1].name, err))

print("\n== summary (this run) ==")
flops = 2.0 * S ** 3
for name, ok, ms, sass in rows:
    print("%-40s %s %s SASS %s" % (name, "PASS" if ok else "FAIL", "%.3f ms %.1f TFLOP/s" % (ms, flops / ms / 1e9)
                                   if ok else "", sass))
