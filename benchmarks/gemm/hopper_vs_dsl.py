"""Chapter 8's fastest kernel against NVIDIA's CuTe DSL persistent Hopper GEMM and cuBLAS: one process, the same
Gaussian fp16 data for everyone (standard deviation 0.5), fp32 out, GPU time (kernels.timing.gpu_time_ms),
`rounds` interleaved rounds so clock drift hits everyone alike.

The DSL kernel is the example `examples/python/CuTeDSL/cute/hopper/kernel/dense_gemm/dense_gemm_persistent.py`
of NVIDIA/cutlass (nvidia-cutlass-dsl 4.8.1), imported from the path given, built as its run() builds it
(128 x 256 tiles; clusters 2x1 and 1x1), and launched on the legacy default stream, where the timer's
events are recorded. Each kernel's C is checked against cuBLAS's first.

    PYTHONPATH=.:DSL_SITE python3 benchmarks/gemm/hopper_vs_dsl.py --dsl-example PATH [--out DIR]
"""
import argparse
import importlib.util

import numpy as np

import kernels

kernels.setup()
from numba import cuda  # noqa: E402
import torch  # noqa: E402

from kernels.harness import check, time_rounds  # noqa: E402
from kernels.hopper import step  # noqa: E402
from hopper_sweep import inputs, report  # noqa: E402  (this folder: the same data and table)

SIZES = [(4096, 4096, 4096), (8192, 8192, 8192), (4096, 14336, 4096), (2048, 2048, 2048)]
OURS = "persistent BN256 st4 group16 tma-store"


def dsl_gemm(path, cluster):
    """(make(a, bt, c) -> launch) for the DSL example's persistent kernel with 128 x 256 tiles."""
    import cuda.bindings.driver as drv
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack
    spec = importlib.util.spec_from_file_location("dsl_dense_gemm_persistent", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    gemm = mod.HopperWgmmaGemmPersistentKernel(cutlass.Float32, (128, 256), cluster, 1, True)
    clusters = cutlass.utils.HardwareInfo().get_max_active_clusters(cluster[0] * cluster[1])
    stream = drv.CUstream(0)

    def make(ta, tbt, tc):      # torch (M, K), (N, K), (M, N): the example's (m, k, l) views, K-major
        views = [from_dlpack(x.unsqueeze(-1), assumed_align=16).mark_layout_dynamic(leading_dim=1)
                 for x in (ta, tbt, tc)]
        compiled = cute.compile(gemm, *views, clusters, stream)
        return lambda: compiled(*views, stream)
    return make


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dsl-example", required=True)
    ap.add_argument("--out", default=None)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=30)
    args = ap.parse_args()
    ours = step(OURS).kernel
    dsl = {"CuTe DSL persistent, cluster %dx%d" % c: dsl_gemm(args.dsl_example, c) for c in ((2, 1), (1, 1))}
    rng = np.random.default_rng(21)
    raw = {}
    for (M, N, K) in SIZES:
        ta, tbt, cublas, ref = inputs(rng, M, N, K)
        runs = {"cuBLAS fp16->fp32": cublas}
        outs = {"ours: " + OURS: torch.empty(M, N, device="cuda")}
        da, dbt, dc = (cuda.as_cuda_array(x) for x in (ta, tbt, outs["ours: " + OURS]))
        runs["ours: " + OURS] = lambda: ours(da, dbt, dc)
        for name, make in dsl.items():
            outs[name] = torch.empty(M, N, device="cuda")
            runs[name] = make(ta, tbt, outs[name])
        errs = {name: check(runs[name], out, ref, "%s at %s" % (name, (M, N, K)), tol=1e-4)
                for name, out in outs.items()}
        print((M, N, K), "rel err vs cuBLAS:", errs, flush=True)
        raw["%dx%dx%d" % (M, N, K)] = time_rounds(runs, args.rounds, args.reps)
    report(raw, "cuBLAS fp16->fp32", args, "hopper_vs_dsl.json")


if __name__ == "__main__":
    main()
