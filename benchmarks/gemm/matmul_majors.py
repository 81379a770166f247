"""matmul's Hopper path in every majorness (run on an sm_90 GPU): f16 and bf16, A and B each row- or
column-major, three shapes, each output NaN-poisoned and compared with the float32 product; then 4096^3 f16
with B row- and column-major timed against cuBLAS (GPU time). The run of benchmarks/gemm/RESULTS.md's
"matmul on Hopper" section.

    PYTHONPATH=. python3 benchmarks/gemm/matmul_majors.py
"""
import kernels

kernels.setup()
import torch  # noqa: E402
from kernels.lib import matmul  # noqa: E402
from kernels.harness import cublas_baseline, rel_err  # noqa: E402
from kernels.hopper import gemm as H  # noqa: E402
from kernels.timing import gpu_time_ms  # noqa: E402

for dt in (torch.float16, torch.bfloat16):
    for (M, N, K) in ((1000, 1000, 1000), (129, 264, 72), (4096, 4096, 4096)):
        for am, bm in (("row", "row"), ("row", "col"), ("col", "row"), ("col", "col")):
            a = torch.randn(M, K, device="cuda").to(dt)
            b = torch.randn(K, N, device="cuda").to(dt)
            if am == "col": a = a.T.contiguous().T
            if bm == "col": b = b.T.contiguous().T
            out = torch.full((M, N), float("nan"), device="cuda")
            matmul(a, b, out=out)
            ref = a.float() @ b.float()
            err = rel_err(out, ref)
            print(str(dt)[6:], (M, N, K), "A", am, "B", bm, "rel err %.2e" % err, "PASS" if err < 1e-5 else "FAIL", flush=True)
print("kernels:", [k[:2] for k in H._MATMUL])
S = 4096
a = torch.randn(S, S, device="cuda").half(); b = torch.randn(S, S, device="cuda").half()
out = torch.empty(S, S, device="cuda")
base = gpu_time_ms(cublas_baseline(a, b)[1], 30)
for bm in ("row", "col"):
    bb = b if bm == "row" else b.T.contiguous().T
    t = gpu_time_ms(lambda: matmul(a, bb, out=out), 30)
    print("4096^3 f16 matmul, B %s-major: %.3f ms, %.2f of cuBLAS (%.3f ms)" % (bm, t, base / t, base))
