"""Why each tensor-core step is as fast as it is: ncu's warp-state statistics of the ladder's tensor-core
rungs at 4096^3, one launch each, as chapter 7 shows them (kernels.gemm.recorded.STALLS).

    python3 benchmarks/gemm/ladder_profile.py --out DIR        # runs ncu on itself, writes DIR/stalls.csv

ncu samples, for each issued instruction, what the warp was waiting on before it (stall reasons, in
cycles per issued instruction), and reports achieved occupancy, registers, issue-slot use and tensor-pipe
utilisation. Run on a GPU machine with ncu; `--launch NAME` is the child ncu profiles.
"""

import argparse
import csv
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

RUNGS = ["tc sm75 128x128x32", "tc sm80 128x128x32 4st", "tc sm80 + k-block prefetch"]
METRICS = {
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio": "long scoreboard (global/L1)",
    "smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio": "short scoreboard (shared/ldmatrix)",
    "smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio": "math pipe throttle",
    "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio": "wait (fixed latency)",
    "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio": "barrier",
    "smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio": "lg throttle (LSU queue)",
    "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio": "mio throttle",
    "smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio": "not selected",
    "smsp__average_warps_issue_stalled_selected_per_issue_active.ratio": "selected (issuing)",
    "smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio": "dispatch stall",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "achieved occupancy %",
    "launch__registers_per_thread": "registers per thread",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active": "tensor pipe active %",
    "smsp__issue_active.avg.pct_of_peak_sustained_active": "issue slots busy %",
}


def launch(name):
    import kernels
    kernels.setup(verbose=False)
    import numpy as np
    from numba import cuda
    from kernels import gemm
    n = 4096
    rng = np.random.default_rng(0)
    A = cuda.to_device((rng.standard_normal((n, n)) * 0.5).astype(np.float16).view(np.uint16))
    B = cuda.to_device((rng.standard_normal((n, n)) * 0.5).astype(np.float16).view(np.uint16))
    C = cuda.device_array((n, n), np.float32)
    k = gemm.rung(name).kernel
    for _ in range(3):
        k.launch(A, B, C)
    cuda.synchronize()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--launch", default=None)
    a = ap.parse_args()
    if a.launch:
        return launch(a.launch)
    rows = []
    for name in RUNGS:
        cmd = ["ncu", "--launch-skip", "2", "--launch-count", "1", "--kernel-name", "regex:gemm_", "--csv",
               "--metrics", ",".join(METRICS), sys.executable, os.path.abspath(__file__), "--launch", name]
        r = subprocess.run(cmd, capture_output=True, text=True)
        got = {}
        for row in csv.reader(line for line in r.stdout.splitlines() if line.startswith('"')):
            if row[0] == "ID":
                head = row
                continue
            rec = dict(zip(head, row))
            if rec.get("Metric Name") in METRICS:
                got[METRICS[rec["Metric Name"]]] = rec["Metric Value"].replace(",", "")
        if not got:
            print(name, "ncu gave nothing:", (r.stderr or r.stdout)[-800:])
        for k, v in got.items():
            rows.append(dict(rung=name, metric=k, value=v))
        print(name, {k: got[k] for k in sorted(got)}, flush=True)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "stalls.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["rung", "metric", "value"])
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
