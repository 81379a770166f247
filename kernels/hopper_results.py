"""Recorded H100 figures of the Hopper GEMM (benchmarks/gemm/RESULTS_HOPPER.md), kept in the package so
that chapter 8 can show them where it cannot run the kernel (another GPU, the simulator, or a pip install
without the benchmarks/ folder). tests/test_pipeline.py asserts every row here is in RESULTS_HOPPER.md.

Each run: date, device, command, and rows (kernel, ms, TFLOP/s, ratio to cuBLAS fp16 -> fp32), all at
M = N = K = 4096, fp16 inputs, fp32 accumulation and output. Runs 7 and 8 are GPU time (kernels.timing.gpu_time_ms);
runs 2-5 timed each launch alone from an idle GPU, host launch cost included.
"""

__all__ = ["RECORDED_RUNS", "recorded_table"]

RECORDED_RUNS = [
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
     "command": "PYTHONUNBUFFERED=1 python3 -m kernels.hopper_gemm (the hand-indexed kernels before kernels/hopper)",
     "rows": [("cuBLAS fp16->fp16 (torch.mm)", 0.207, 664.4, 1.04),
              ("cuBLAS fp16->fp32 (torch.mm out_dtype=float32)", 0.216, 637.6, 1.00),
              ("ws BN128 st4", 0.359, 383.2, 0.60),
              ("ws BN256 st4 setmaxnreg", 0.317, 433.4, 0.68),
              ("ws BN256 st4 setmaxnreg group8", 0.314, 437.1, 0.69),
              ("ws BN256 st4 no-setmaxnreg group8", 0.363, 379.1, 0.59)]},
]


def recorded_table(run=None):
    """A recorded run as a Markdown table, headed by its date, device and command (the latest run,
    RECORDED_RUNS[0], by default)."""
    r = RECORDED_RUNS[0] if run is None else run
    out = [f"Recorded {r['date']} on {r['device']} ({r['run']} of benchmarks/gemm/RESULTS_HOPPER.md), "
           f"`{r['command']}`, 4096^3:", "",
           "| kernel | ms | TFLOP/s | / cuBLAS fp16->fp32 |", "|---|---|---|---|"]
    out += [f"| {k} | {ms:.3f} | {tf:.1f} | {ratio:.2f} |" for k, ms, tf, ratio in r["rows"]]
    return "\n".join(out)
