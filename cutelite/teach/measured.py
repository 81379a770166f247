"""What the chapters' timing cells measured on a GPU, kept so that a page built without one (in the
simulator) still shows real numbers, labelled as recorded, and a reader can compare them with their own.

Each table of RECORDED copies one of benchmarks/layouts/RESULTS.md (device, date, command and method are
there); a row is (kernel, [(ms, GB/s) of each run]). HOPPER_TIMING copies two runs of
benchmarks/gemm/RESULTS_HOPPER.md: the same Hopper kernel timed two ways. BANK_CONFLICTS copies rows of
benchmarks/bank_conflicts/ncu_h100.csv: what Nsight Compute counted for single shared-memory instructions.
tests/test_measured.py checks that each agrees with its file.
"""

__all__ = ["RECORDED", "recorded_table", "HOPPER_TIMING", "timing_method_table", "BANK_CONFLICTS", "LDMATRIX_ALIGNMENT"]

_H100 = "NVIDIA H100 80GB HBM3, 2026-11-25, benchmarks/layouts/RESULTS.md"

RECORDED = {
    "copy": {
        "source": _H100,
        "rows": [
            ("copy (both contiguous)", [(0.061, 2190), (0.059, 2276), (0.062, 2178)]),
            ("transpose, contiguous reads", [(0.296, 454), (0.296, 454), (0.296, 454)]),
            ("transpose, contiguous writes", [(0.140, 960), (0.139, 962), (0.140, 961)]),
        ],
    },
    "transpose": {
        "source": _H100,
        "rows": [
            ("naive", [(0.089, 1506), (0.087, 1540), (0.087, 1537)]),
            ("padded", [(0.053, 2540), (0.051, 2651), (0.051, 2637)]),
            ("swizzled", [(0.053, 2530), (0.051, 2628), (0.055, 2445)]),
        ],
    },
}


def _span(values, spec):
    lo, hi = min(values), max(values)
    return f"{lo:{spec}}" if lo == hi else f"{lo:{spec}}-{hi:{spec}}"


def recorded_table(name, width=30):
    """The recorded table `name` ("copy" or "transpose") as text: one line per kernel with the range of
    its runs' times and bandwidths, under a line saying where and when it was measured."""
    if name not in RECORDED:
        raise ValueError(f"recorded_table: no recorded table {name!r}; there are {sorted(RECORDED)}")
    table = RECORDED[name]
    lines = [f"recorded on {table['source']} ({len(table['rows'][0][1])} runs):"]
    for kernel, runs in table["rows"]:
        ms, gbs = [r[0] for r in runs], [r[1] for r in runs]
        lines.append(f"{kernel:{width}s} {_span(ms, '.3f'):>11s} ms  {_span(gbs, 'd'):>9s} GB/s")
    return "\n".join(lines)


HOPPER_TIMING = {
    "source": "NVIDIA H100 80GB HBM3, benchmarks/gemm/RESULTS_HOPPER.md",
    "kernel": "persistent BN256 st4 group8",
    "size": 4096,
    # (method, run, [(cuBLAS ms, kernel ms, ratio) of each call]): the same code, timed two ways
    "methods": [("each launch alone, from an idle GPU: the host's launch cost counted", "run 6, 2026-11-24",
                 [(0.216, 0.265, 0.81), (0.206, 0.271, 0.76)]),
                ("GPU time: launches queued back to back (kernels.timing.gpu_time_ms)", "run 7, 2026-11-25",
                 [(0.187, 0.197, 0.95), (0.184, 0.198, 0.93)])],
    # what one lone call costs the host on top of its GPU time (kernels.timing.launch_overhead_ms), run 7
    "host_ms": {"the Hopper kernel through Numba": (0.197, 0.135), "cuBLAS through torch.mm": (0.194, 0.050)},
}


def timing_method_table():
    """HOPPER_TIMING as text: the kernel's ratio to cuBLAS under each timing method, then what a lone call
    costs the host."""
    t = HOPPER_TIMING
    lines = [f"recorded on {t['source']}, {t['kernel']}, {t['size']}^3, fp16 in, fp32 out:"]
    for method, run, calls in t["methods"]:
        ratios = " and ".join(f"{ratio:.2f} ({ms:.3f} ms vs cuBLAS {cublas:.3f})" for cublas, ms, ratio in calls)
        lines.append(f"  {method} [{run}]: {ratios}")
    lines.append("a lone call, on top of its GPU time: " + "; ".join(
        f"{who} {extra:.3f} ms more than its {gpu:.3f}" for who, (gpu, extra) in t["host_ms"].items()))
    return "\n".join(lines)


BANK_CONFLICTS = {
    "source": "NVIDIA H100 80GB HBM3 (compute capability 9.0), Nsight Compute, 2026-11-22, "
              "benchmarks/bank_conflicts/RESULTS.md",
    # case, named as benchmarks/bank_conflicts/verify.py names it -> (wavefronts, bank conflicts) that the
    # counters gave for its one warp instruction
    "cases": {
        "32x32 f32 row-major, column ld": (32, 31),
        "32x32 f32 padded to 34, column ld64": (2, 0),
        "32x32 f32 Sw<2,2,3>, column ld128 (2-way)": (8, 4),
        "32x32 f32, all lanes one float4 (broadcast)": (2, 0),
        "8x64 f16 Sw<3,3,3>, ldmatrix.x1": (1, 0),
    },
}


LDMATRIX_ALIGNMENT = {
    "source": "NVIDIA H200 (compute capability 9.0), 2026-11-27, benchmarks/RESULTS.md "
              "(python benchmarks/ldmatrix_alignment.py)",
    # bytes past a 16-byte boundary of every row address of one ldmatrix.x4 -> what the launch did
    "cases": {0: "ran; registers == the shifted rows",
              2: "CUDA_ERROR_MISALIGNED_ADDRESS",
              8: "CUDA_ERROR_MISALIGNED_ADDRESS"},
}
