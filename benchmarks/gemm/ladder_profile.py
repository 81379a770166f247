"""Why each tensor-core step is as fast as it is: ncu's warp-state statistics of the ladder's tensor-core
rungs at 4096^3, one launch each, as chapter 7 shows them (kernels/gemm/records.json, "stalls").

    python3 benchmarks/gemm/ladder_profile.py --out DIR        # runs ncu on itself, writes DIR/stalls.csv

ncu reports, per issued instruction, how many warps were stalled on each reason (the stall reasons as ncu
names them: long_scoreboard, short_scoreboard, math_pipe_throttle, wait, barrier, ...), and achieved
occupancy, registers, issue-slot use and tensor-pipe utilisation. Run on a GPU machine with ncu; `--launch NAME` is the child ncu profiles.
"""

import argparse
import csv
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

STEPS = ["tc sm75 128x128x32", "tc sm80 128x128x32 4st", "tc sm80 + k-block prefetch"]
STALL_REASONS = ("long_scoreboard", "short_scoreboard", "math_pipe_throttle", "wait", "barrier", "lg_throttle",
                 "mio_throttle", "not_selected", "selected", "dispatch_stall", "no_instruction", "membar")
METRICS = {"smsp__average_warps_issue_stalled_%s_per_issue_active.ratio" % r: r for r in STALL_REASONS}
METRICS.update({
    "sm__warps_active.avg.pct_of_peak_sustained_active": "achieved occupancy %",
    "launch__registers_per_thread": "registers per thread",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active": "tensor pipe active %",
    "smsp__issue_active.avg.pct_of_peak_sustained_active": "issue slots busy %",
})


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
    k = gemm.step(name).kernel
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
    for name in STEPS:
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
