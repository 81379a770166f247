"""Recorded H100 figures of the Hopper GEMM (benchmarks/gemm/RESULTS_HOPPER.md), kept in the package so
that chapter 8 can show them where it cannot run the kernel (another GPU, the simulator, or a pip install
without the benchmarks/ folder). tests/test_pipeline.py asserts every row here is in RESULTS_HOPPER.md.

Each run: date, device, command, and rows (kernel, ms, TFLOP/s, ratio to cuBLAS fp16 -> fp32), all at
M = N = K = 4096, fp16 inputs, fp32 accumulation and output. Runs 7 on are GPU time (kernels.timing.gpu_time_ms);
runs 2-5 timed each launch alone from an idle GPU, host launch cost included. Runs 9 on are the kernels of
kernels/hopper (written with the CuTe layer); earlier ones the hand-indexed kernels they replaced.

RECORDED_RUNS[0] is the latest run of the whole ladder (steps 1-5), RECORDED_RUNS[1] the latest of step 6.
SWEEPS: sizes other than 4096^3, with cuBLAS and the CuTe DSL's persistent example in the same process.
PROFILE: Nsight Compute on step 5. From benchmarks/gemm/RESULTS.md, what chapter 8 quotes of `matmul` on
Hopper: MATMUL_2048 (the user's call from PyTorch tensors at 2048^3), ODD_SHAPE (the row-pitch probe) and
HOST_US (the host's time per call). tests/test_pipeline.py checks each against its file.
"""

__all__ = ["RECORDED_RUNS", "SWEEPS", "PROFILE", "MATMUL_2048", "ODD_SHAPE", "HOST_US", "recorded_table"]

RECORDED_RUNS = [
    {"date": "2026-11-25", "device": "NVIDIA H100 80GB HBM3 (sm_90)", "run": "run 10",
     "command": "PYTHONUNBUFFERED=1 python3 -m kernels.hopper",
     "rows": [("cuBLAS fp16->fp32 (torch.mm out_dtype)", 0.189, 727.8, 1.00),
              ("cp.async + wgmma BN128 st4", 0.287, 479.0, 0.66),
              ("ws BN128 st4", 0.257, 534.4, 0.73),
              ("ws BN256 st4 setmaxnreg group8", 0.210, 655.7, 0.90),
              ("persistent BN256 st4 group8", 0.199, 690.6, 0.95),
              ("persistent BN256 st4 group16", 0.198, 692.6, 0.95),
              ("persistent BN256 st4 group16 tma-store", 0.194, 708.5, 0.97)]},
    {"date": "2026-11-25", "device": "NVIDIA H100 80GB HBM3 (sm_90)", "run": "run 13",
     "command": "PYTHONUNBUFFERED=1 python3 -m kernels.hopper tma-store pingpong",
     "rows": [("cuBLAS fp16->fp32 (torch.mm out_dtype)", 0.190, 725.0, 1.00),
              ("persistent BN256 st4 group16 tma-store", 0.196, 702.5, 0.97),
              ("pingpong 64x256 st4 group16", 0.221, 622.8, 0.86),
              ("pingpong 128x128 st4 group16", 0.227, 604.5, 0.83)]},
    {"date": "2026-11-25", "device": "NVIDIA H100 80GB HBM3 (sm_90)", "run": "run 9",
     "command": "PYTHONUNBUFFERED=1 python3 -m kernels.hopper",
     "rows": [("cuBLAS fp16->fp32 (torch.mm out_dtype)", 0.195, 706.3, 1.00),
              ("cp.async + wgmma BN128 st4", 0.285, 482.2, 0.68),
              ("ws BN128 st4", 0.257, 534.3, 0.76),
              ("ws BN256 st4 setmaxnreg group8", 0.210, 655.6, 0.93),
              ("persistent BN256 st4 group8", 0.200, 688.3, 0.97),
              ("persistent BN256 st4 group16", 0.200, 688.8, 0.98),
              ("persistent BN256 st4 group16 tma-store", 0.194, 707.6, 1.00)]},
    {"date": "2026-11-25", "device": "NVIDIA H100 80GB HBM3 (sm_90)", "run": "run 8",
     "command": "PYTHONPATH=. PYTHONUNBUFFERED=1 python3 benchmarks/gemm/hopper_run.py",
     "rows": [("cuBLAS fp16->fp16 (torch.mm)", 0.186, 740.0, 1.04),
              ("cuBLAS fp16->fp32 (torch.mm out_dtype)", 0.192, 714.8, 1.00),
              ("cp.async + wgmma BN128 st4", 0.298, 461.1, 0.65),
              ("ws BN128 st4", 0.267, 514.3, 0.72),
              ("ws BN256 st4 setmaxnreg group8", 0.216, 637.2, 0.89),
              ("persistent BN256 st4 group8", 0.202, 679.3, 0.95),
              ("persistent BN256 st4 group16", 0.201, 682.4, 0.95),
              ("persistent BN256 st4 group16 tma-store", 0.206, 667.0, 0.93),
              ("pingpong BN256 st4 group16", 0.230, 598.3, 0.84),
              ("pingpong 128x128 st4 group16", 0.233, 590.8, 0.83)]},
    {"date": "2026-11-25", "device": "NVIDIA H100 80GB HBM3 (sm_90)", "run": "run 7",
     "command": "PYTHONPATH=. PYTHONUNBUFFERED=1 python3 benchmarks/gemm/hopper_run.py",
     "rows": [("cuBLAS fp16->fp16 (torch.mm)", 0.180, 763.2, 1.04),
              ("cuBLAS fp16->fp32 (torch.mm out_dtype)", 0.187, 736.2, 1.00),
              ("persistent BN256 st4 group8", 0.197, 696.9, 0.95),
              ("persistent BN256 st4 group16", 0.196, 700.5, 0.95),
              ("persistent BN256 st4 group16 tma-store", 0.200, 688.9, 0.94),
              ("pingpong BN256 st4 group16", 0.228, 604.1, 0.82),
              ("pingpong 128x128 st4 group16", 0.232, 592.9, 0.81)]},
    {"date": "2026-11-23", "device": "NVIDIA H100 80GB HBM3 (sm_90)", "run": "run 5",
     "command": "PYTHONPATH=. PYTHONUNBUFFERED=1 python3 benchmarks/gemm/hopper_tma_store_run.py",
     "rows": [("cuBLAS fp16->fp16 (torch.mm)", 0.209, 657.3, 1.06),
              ("cuBLAS fp16->fp32 (torch.mm out_dtype)", 0.222, 619.5, 1.00),
              ("persistent BN256 st4 group16", 0.326, 422.1, 0.68),
              ("persistent BN256 st4 group16 tma-store", 0.318, 432.3, 0.70),
              ("persistent BN256 st4 group8 tma-store", 0.324, 424.8, 0.69)]},
    {"date": "2026-11-23", "device": "NVIDIA H100 80GB HBM3 (sm_90)", "run": "run 4",
     "command": "PYTHONPATH=. PYTHONUNBUFFERED=1 python3 benchmarks/gemm/hopper_run.py",
     "rows": [("cuBLAS fp16->fp16 (torch.mm)", 0.204, 673.0, 1.05),
              ("cuBLAS fp16->fp32 (torch.mm out_dtype)", 0.215, 639.9, 1.00),
              ("persistent BN256 st4 group8", 0.316, 434.5, 0.68),
              ("persistent BN256 st4 group16", 0.306, 449.3, 0.70),
              ("pingpong BN256 st4 group16", 0.334, 411.1, 0.64),
              ("pingpong BN256 st5 group16", 0.439, 313.0, 0.49),
              ("pingpong BN256 st5 group32", 0.423, 324.6, 0.51),
              ("pingpong BN256 st5 group8", 0.413, 332.8, 0.52)]},
    {"date": "2026-11-23", "device": "NVIDIA H100 80GB HBM3 (sm_90)", "run": "run 3",
     "command": "PYTHONUNBUFFERED=1 python3 benchmarks/gemm/hopper_run.py",
     "rows": [("cuBLAS fp16->fp16 (torch.mm)", 0.197, 696.8, 1.04),
              ("cuBLAS fp16->fp32 (torch.mm out_dtype)", 0.205, 670.7, 1.00),
              ("ws BN256 st4 setmaxnreg group8", 0.326, 421.7, 0.63),
              ("persistent BN256 st4 group8", 0.261, 526.4, 0.78),
              ("persistent BN256 st4 group16", 0.257, 533.9, 0.80),
              ("persistent BN256 st4 group4", 0.267, 514.9, 0.77),
              ("persistent BN128 st6 group8", 0.306, 449.3, 0.67),
              ("ws BN128 st4", 0.352, 390.9, 0.58)]},
    {"date": "2026-11-23", "device": "NVIDIA H100 80GB HBM3 (sm_90)", "run": "run 2",
     "command": "PYTHONUNBUFFERED=1 python3 -m kernels.hopper_gemm",
     "rows": [("cuBLAS fp16->fp16 (torch.mm)", 0.207, 664.4, 1.04),
              ("cuBLAS fp16->fp32 (torch.mm out_dtype=float32)", 0.216, 637.6, 1.00),
              ("ws BN128 st4", 0.359, 383.2, 0.60),
              ("ws BN256 st4 setmaxnreg", 0.317, 433.4, 0.68),
              ("ws BN256 st4 setmaxnreg group8", 0.314, 437.1, 0.69),
              ("ws BN256 st4 no-setmaxnreg group8", 0.363, 379.1, 0.59)]},
]


SWEEPS = [   # (M, N, K): {kernel: (ms, ratio to cuBLAS, min ratio, max ratio)}, medians over interleaved rounds
    {"date": "2026-11-25", "device": "NVIDIA H100 80GB HBM3 (sm_90)", "run": "run 14",
     "command": "python3 benchmarks/gemm/hopper_vs_dsl.py --dsl-example dense_gemm_persistent.py (3 rounds, sixth machine start)",
     "sizes": {(2048, 2048, 2048): {'CuTe DSL persistent, cluster 1x1': (0.029, 1.02, 1.01, 1.03),
                                    'CuTe DSL persistent, cluster 2x1': (0.029, 1.02, 1.02, 1.03),
                                    'cuBLAS fp16->fp32': (0.03, 1.0, 1.0, 1.0),
                                    'ours (persistent, TMA store)': (0.073, 0.41, 0.41, 0.41)},
               (4096, 4096, 4096): {'CuTe DSL persistent, cluster 1x1': (0.219, 1.01, 0.85, 1.01),
                                    'CuTe DSL persistent, cluster 2x1': (0.218, 1.02, 0.86, 1.02),
                                    'cuBLAS fp16->fp32': (0.221, 1.0, 1.0, 1.0),
                                    'ours (persistent, TMA store)': (0.219, 1.01, 0.91, 1.01)},
               (4096, 14336, 4096): {'CuTe DSL persistent, cluster 1x1': (0.76, 0.87, 0.86, 1.0),
                                     'CuTe DSL persistent, cluster 2x1': (0.759, 1.0, 0.85, 1.01),
                                     'cuBLAS fp16->fp32': (0.755, 1.0, 1.0, 1.0),
                                     'ours (persistent, TMA store)': (0.779, 0.97, 0.96, 0.98)},
               (8192, 8192, 8192): {'CuTe DSL persistent, cluster 1x1': (1.74, 0.97, 0.91, 1.14),
                                    'CuTe DSL persistent, cluster 2x1': (1.724, 0.99, 0.9, 1.14),
                                    'cuBLAS fp16->fp32': (1.704, 1.0, 1.0, 1.0),
                                    'ours (persistent, TMA store)': (1.651, 1.05, 1.02, 1.19)}}},
    {"date": "2026-11-25", "device": "NVIDIA H100 80GB HBM3 (sm_90)", "run": "run 11",
     "command": "python3 benchmarks/gemm/hopper_vs_dsl.py --dsl-example dense_gemm_persistent.py (3 rounds)",
     "sizes": {(4096, 4096, 4096): {"cuBLAS fp16->fp32": (0.220, 1.00, 1.00, 1.00),
                                    "ours (persistent, TMA store)": (0.217, 1.01, 0.91, 1.02),
                                    "CuTe DSL persistent, cluster 2x1": (0.213, 1.02, 0.91, 1.03),
                                    "CuTe DSL persistent, cluster 1x1": (0.215, 1.02, 0.88, 1.02)},
               (8192, 8192, 8192): {"cuBLAS fp16->fp32": (1.685, 1.00, 1.00, 1.00),
                                    "ours (persistent, TMA store)": (1.661, 0.99, 0.98, 1.07),
                                    "CuTe DSL persistent, cluster 2x1": (1.738, 0.97, 0.88, 1.01),
                                    "CuTe DSL persistent, cluster 1x1": (1.756, 0.91, 0.88, 1.01)},
               (4096, 14336, 4096): {"cuBLAS fp16->fp32": (0.746, 1.00, 1.00, 1.00),
                                     "ours (persistent, TMA store)": (0.762, 0.98, 0.97, 0.98),
                                     "CuTe DSL persistent, cluster 2x1": (0.751, 0.97, 0.94, 1.00),
                                     "CuTe DSL persistent, cluster 1x1": (0.770, 0.87, 0.87, 0.98)},
               (2048, 2048, 2048): {"cuBLAS fp16->fp32": (0.030, 1.00, 1.00, 1.00),
                                    "ours (persistent, TMA store)": (0.100, 0.30, 0.24, 0.35),
                                    "CuTe DSL persistent, cluster 2x1": (0.029, 1.02, 1.00, 1.02),
                                    "CuTe DSL persistent, cluster 1x1": (0.029, 1.02, 1.01, 1.04)}}},
    {"date": "2026-11-25", "device": "NVIDIA H100 80GB HBM3 (sm_90)", "run": "run 12",
     "command": "python3 benchmarks/gemm/hopper_sweep.py --rounds 2 (launches prepared once: runtime.prepared_launch)",
     "sizes": {(2048, 2048, 2048): {"cuBLAS fp16->fp32": (0.029, 1.00, 1.00, 1.00),
                                    "ours (persistent, TMA store)": (0.032, 0.90, 0.90, 0.91)},
               (4096, 4096, 4096): {"cuBLAS fp16->fp32": (0.205, 1.00, 1.00, 1.00),
                                    "ours (persistent, TMA store)": (0.222, 0.93, 0.85, 1.00)},
               (8192, 8192, 8192): {"cuBLAS fp16->fp32": (1.661, 1.00, 1.00, 1.00),
                                    "ours (persistent, TMA store)": (1.725, 0.96, 0.92, 1.00)},
               (4096, 14336, 4096): {"cuBLAS fp16->fp32": (0.696, 1.00, 1.00, 1.00),
                                     "ours (persistent, TMA store)": (0.755, 0.92, 0.90, 0.94)}}},
]


PROFILE = {   # RESULTS_HOPPER.md, runs 9-12: "What limits it"; percentages as ncu reports them
    "date": "2026-11-25", "device": "NVIDIA H100 80GB HBM3 (sm_90)", "run": "runs 9-12, second machine start",
    "kernel": "persistent TMA-store kernel", "size": 4096, "clock": "ncu's fixed clock", "us": 223,
    "sm_throughput": 85, "memory_throughput": 62, "dram": 27, "l2": 62, "registers": 168,
    "achieved_occupancy": 14, "cycles_between_issues": 11.1, "waiting_at_barrier": 30}

MATMUL_2048 = {   # RESULTS.md, "matmul on Hopper": matmul / cuBLAS at 2048^3 from PyTorch tensors, out= given
    "date": "2026-11-25", "device": "NVIDIA H100 80GB HBM3 (sm_90)", "run": "run 1",
    "command": "PYTHONPATH=. python3 benchmarks/gemm/matmul_sweep.py --sizes ... --out DIR",
    "rows": [("float16", "row, row", 0.92), ("float16", "row, col", 0.92), ("float16", "col, row", 0.94),
             ("float16", "col, col", 0.93), ("bfloat16", "row, row", 0.93), ("bfloat16", "row, col", 0.92),
             ("bfloat16", "col, row", 0.92), ("bfloat16", "col, col", 0.92)]}

ODD_SHAPE = {   # RESULTS.md, "The odd shape": both operands MN-major, the same values, only the row pitch moved
    "date": "2026-11-25", "device": "NVIDIA H100 80GB HBM3 (sm_90)",
    "command": "PYTHONPATH=. python3 benchmarks/gemm/odd_shape_probe.py",
    # (M, N, K), (A's, Bt's row pitch in bytes), kernel ms, cuBLAS ms, cuBLAS / kernel
    "rows": [((4000, 3000, 2500), (8000, 6000), 0.142, 0.100, 0.70),
             ((4000, 3000, 2500), (8064, 6016), 0.109, 0.108, 0.98),
             ((4000, 3000, 2500), (8192, 6144), 0.110, 0.108, 0.99),
             ((4096, 3072, 2560), (8192, 6144), 0.111, 0.110, 1.00)]}

HOST_US = {   # RESULTS.md, "matmul's host cost": host microseconds per call while the GPU is kept busy
    "date": "2026-11-25", "command": "benchmarks/gemm/launch_cost.py",
    "rows": {"`HopperGemm(a, bt, c)` on Numba device arrays (8 arguments)": 99.1,
             "`torch.mm(A, B, out_dtype=float32)`": 17.8}}


def recorded_table(run=None):
    """A recorded run as a Markdown table, headed by its date, device and command (the latest run,
    RECORDED_RUNS[0], by default)."""
    r = RECORDED_RUNS[0] if run is None else run
    out = [f"Recorded {r['date']} on {r['device']} ({r['run']} of benchmarks/gemm/RESULTS_HOPPER.md), "
           f"`{r['command']}`, 4096^3:", "",
           "| kernel | ms | TFLOP/s | / cuBLAS fp16->fp32 |", "|---|---|---|---|"]
    out += [f"| {k} | {ms:.3f} | {tf:.1f} | {ratio:.2f} |" for k, ms, tf, ratio in r["rows"]]
    return "\n".join(out)
