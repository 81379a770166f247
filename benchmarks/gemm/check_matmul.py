"""kernels.gemm.matmul on a GPU: odd shapes, both majornesses, NumPy / Numba / CuPy / PyTorch inputs,
f32 / f16 / bf16, outputs compared with float64 references (prints one line per case, FAIL on a miss)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import kernels  # noqa: E402

kernels.setup()
import numpy as np  # noqa: E402
import torch  # noqa: E402

from kernels.gemm import matmul  # noqa: E402

bad = 0
g = torch.Generator(device="cuda").manual_seed(0)
for (M, N, K) in [(4000, 3000, 2500), (128, 256, 64), (1, 7, 3), (300, 130, 1000)]:
    for dt in (torch.float32, torch.float16, torch.bfloat16):
        A = torch.randn(M, K, device="cuda", generator=g).to(dt)
        B = torch.randn(K, N, device="cuda", generator=g).to(dt)
        ref = A.double() @ B.double()
        for how in ("torch", "torch col-major", "numpy", "cupy"):
            if how == "numpy" and dt == torch.bfloat16:
                continue
            if how == "torch":
                C = matmul(A, B)
            elif how == "torch col-major":
                C = matmul(A.t().contiguous().t(), B.t().contiguous().t())
            elif how == "numpy":
                C = matmul(A.cpu().numpy(), B.cpu().numpy())
            else:
                import cupy
                if dt == torch.bfloat16:
                    continue
                C = matmul(cupy.asarray(A), cupy.asarray(B))
            C = torch.as_tensor(C if isinstance(C, np.ndarray) else C.copy_to_host(), device="cuda").double()
            err = float(torch.linalg.norm(C - ref) / torch.linalg.norm(ref))
            tol = 1e-5 if dt == torch.float32 else 1e-4
            ok = bool(torch.isfinite(C).all()) and err < tol
            bad += not ok
            print("%-4s %dx%dx%d %-9s %-16s rel.err %.1e" % ("ok" if ok else "FAIL", M, N, K, str(dt)[6:], how, err))
print("matmul checks: %s" % ("all pass" if bad == 0 else "%d FAIL" % bad))
