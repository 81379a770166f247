"""What the persistent Hopper kernel pays at 4000x3000x2500 (issue 21's odd shape), both operands MN-major
(A column-major, B row-major, read in place): the same kernel on the same values with the operands' pitches
rounded up to 128 bytes (views into wider buffers), and at 4096x3072x2560 (every extent a tile multiple), against
cuBLAS on the same tensors; plus the staging copy `matmul` makes of a K-major operand with K = 2500. GPU time,
prepared launches, 3 interleaved rounds; outputs checked against cuBLAS first.

    PYTHONPATH=. python3 benchmarks/gemm/odd_shape_probe.py
"""
import statistics

import kernels

kernels.setup()
import torch  # noqa: E402
from numba import cuda  # noqa: E402

from cutelite.numeric import Float16  # noqa: E402
from kernels.harness import check, cublas_baseline, time_rounds  # noqa: E402
from kernels.hopper import MATMUL_CONFIG, HopperGemm  # noqa: E402
from kernels.lib import describe  # noqa: E402
from kernels.lib.wgmma import tma_view  # noqa: E402
from kernels.timing import gpu_time_ms  # noqa: E402



def mn_major(x, pitch_rows):
    """x (rows, K) column-major in a buffer whose columns hold pitch_rows elements (a view of x's shape)."""
    buf = torch.empty(x.shape[1], pitch_rows, device="cuda", dtype=x.dtype)
    buf[:, :x.shape[0]] = x.T
    return buf[:, :x.shape[0]].T


def main():
    torch.manual_seed(0)
    g = HopperGemm(majors=("MN", "MN"), **MATMUL_CONFIG)
    rows = []
    for (M, N, K), (pm, pn) in (((4000, 3000, 2500), (4000, 3000)), ((4000, 3000, 2500), (4032, 3008)),
                                ((4000, 3000, 2500), (4096, 3072)), ((4096, 3072, 2560), (4096, 3072))):
        a0 = torch.randn(M, K, device="cuda").half()
        bt0 = torch.randn(N, K, device="cuda").half()
        a, bt = mn_major(a0, pm), mn_major(bt0, pn)
        c = torch.empty(M, N, device="cuda")
        cublas = cublas_baseline(a, bt.T, out=c)[1]
        ref = cublas().clone()
        da, dbt, dc = (cuda.as_cuda_array(x.view(torch.int16)) if x.dtype != torch.float32 else cuda.as_cuda_array(x)
                       for x in (a, bt, c))
        run = g.prepare(da, dbt, dc)
        err = check(run, c, ref, "the kernel at %dx%dx%d" % (M, N, K))
        calls = {"cuBLAS": cublas, "kernel": run}
        t = time_rounds(calls, 3, 20)
        rows.append("| %dx%dx%d | %d, %d | %.3f | %.3f | %.2f | %.1e |" % (
            M, N, K, 2 * pm, 2 * pn, statistics.median(t["kernel"]), statistics.median(t["cuBLAS"]),
            statistics.median(x / y for x, y in zip(t["cuBLAS"], t["kernel"])), err))
        print(rows[-1], flush=True)
    a = cuda.as_cuda_array(torch.randn(4000, 2500, device="cuda").half().view(torch.int16))
    view, copy = tma_view(describe(a, "A", dtype=Float16), True)
    copy()
    ok = bool((torch.as_tensor(view, device="cuda") == torch.as_tensor(a, device="cuda")).all())
    ms = gpu_time_ms(copy, 50)
    print("\n| M x N x K | A, Bt pitch (bytes) | kernel ms | cuBLAS ms | cuBLAS / kernel | rel. err |\n|---|---|---|---|---|---|")
    print("\n".join(rows))
    print("\nstaging copy of a 4000 x 2500 f16 K-major operand into 5008-byte rows: %.4f ms (%.0f GB/s moved), "
          "equal: %s" % (ms, 2 * 4000 * 2500 * 2 / ms / 1e6, ok))


if __name__ == "__main__":
    main()
