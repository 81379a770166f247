"""kernels.lib.matmul on a GPU: odd shapes, both majornesses, NumPy / Numba / CuPy / PyTorch inputs,
f32 / f16 / bf16, outputs compared with float64 references, stream order (matmul queues its work on the
operands' stream without making the host wait) and operands of 600,000 rows (CUDA's grid limits). One line per
case, FAIL on a miss."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import kernels  # noqa: E402

kernels.setup()
import numpy as np  # noqa: E402
import torch  # noqa: E402

from kernels.lib import matmul  # noqa: E402

bad = 0
g = torch.Generator(device="cuda").manual_seed(0)
for (M, N, K) in [(4000, 3000, 2500), (128, 256, 64), (1, 7, 3), (300, 130, 1000), (520, 264, 136)]:
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

# Stream order: on a side stream, a long spin, then A *= 2, matmul(out=C), C += 1. matmul must queue its
# kernels on that stream (reading the scaled A, before C += 1) and return without waiting for the spin.
import time  # noqa: E402
for dt, b_major in ((torch.float32, "row"), (torch.float16, "row"), (torch.float16, "col")):
    S = 2048
    A = torch.randn(S, S, device="cuda", generator=g).to(dt)
    B = torch.randn(S, S, device="cuda", generator=g).to(dt)
    if b_major == "col":
        B = B.t().contiguous().t()
    ref = 2 * A.double() @ B.double() + 1
    C = torch.full((S, S), float("nan"), device="cuda")
    matmul(A, B, out=C)                 # compiled and warm before the timed call
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        torch.cuda._sleep(200_000_000)  # about 0.1 s of GPU spin on the side stream
        A.mul_(2)
        t0 = time.perf_counter()
        matmul(A, B, out=C)
        host_ms = (time.perf_counter() - t0) * 1e3
        C.add_(1)
    side.synchronize()
    err = float(torch.linalg.norm(C.double() - ref) / torch.linalg.norm(ref))
    ok = bool(torch.isfinite(C).all()) and err < (1e-5 if dt == torch.float32 else 1e-4) and host_ms < 50
    bad += not ok
    print("%-4s stream order %s B %s-major: rel.err %.1e, host returned after %.2f ms (spin ~100 ms)"
          % ("ok" if ok else "FAIL", str(dt)[6:], b_major, err, host_ms))
# The T4 path's predicated edges (in place, both majornesses), on any GPU it runs on
for major in ("row", "col"):
    A = torch.randn(520, 136, device="cuda", generator=g).half()
    B = torch.randn(136, 264, device="cuda", generator=g).half()
    if major == "col":
        A, B = A.t().contiguous().t(), B.t().contiguous().t()
    C = torch.as_tensor(matmul(A, B, kernel="tc_sm75"), device="cuda")
    ref = A.double() @ B.double()
    err = float(torch.linalg.norm(C.double() - ref) / torch.linalg.norm(ref))
    ok = bool(torch.isfinite(C).all()) and err < 1e-4
    bad += not ok
    print("%-4s 520x264x136 float16 tc_sm75 %s-major edges: rel.err %.1e" % ("ok" if ok else "FAIL", major, err))

# Tall operands (issue 30): 600,000 rows take the staging copies past CUDA's 65,535 blocks down gridDim.y (rows of
# 160 or 100 bytes: copied to 128-byte rows); 64 columns of f16 the TMA path in place.
for (M, N, K), dt, kernels_ in (((600000, 40, 48), torch.float32, ("auto",)),
                                ((600000, 40, 50), torch.float16, ("auto", "tc_sm80", "simt")),
                                ((600000, 64, 64), torch.float16, ("auto",))):
    A = torch.randn(M, K, device="cuda", generator=g).to(dt)
    B = torch.randn(K, N, device="cuda", generator=g).to(dt)
    ref = A.double() @ B.double()
    for k in kernels_:
        C = torch.full((M, N), float("nan"), device="cuda")
        matmul(A, B, out=C, kernel=k)
        err = float(torch.linalg.norm(C.double() - ref) / torch.linalg.norm(ref))
        ok = bool(torch.isfinite(C).all()) and err < (1e-5 if dt == torch.float32 else 1e-4)
        bad += not ok
        print("%-4s %dx%dx%d %-9s %-8s tall: rel.err %.1e" % ("ok" if ok else "FAIL", M, N, K, str(dt)[6:], k, err))

# Where the kernels used to differ from NumPy: out overlapping A, K = 0, f16 on the SIMT kernels, bad out.
A = torch.randn(512, 512, device="cuda", generator=g)
ref = A.double() @ A.double()
matmul(A, A, out=A)
torch.cuda.synchronize()
err = float(torch.linalg.norm(A.double() - ref) / torch.linalg.norm(ref))
for name, ok in (("out is A (a temporary, as NumPy)", err < 1e-5),
                 ("K = 0 gives zeros", bool((torch.as_tensor(matmul(torch.ones(5, 0, device="cuda"),
                                                                     torch.ones(0, 3, device="cuda")),
                                                             device="cuda") == 0).all())),
                 ("f16 on simt / simt_warptile", all(bool((torch.as_tensor(matmul(
                     torch.ones(16, 16, device="cuda", dtype=torch.float16),
                     torch.ones(16, 16, device="cuda", dtype=torch.float16), kernel=k), device="cuda") == 16).all())
                     for k in ("simt", "simt_warptile")))):
    bad += not ok
    print("%-4s %s" % ("ok" if ok else "FAIL", name))
try:
    matmul(A, A, out=[[0.0]])
    bad += 1
    print("FAIL out of a wrong kind accepted")
except TypeError as e:
    print("ok   out of a wrong kind:", str(e)[:80])
print("matmul checks: %s" % ("all pass" if bad == 0 else "%d FAIL" % bad))
