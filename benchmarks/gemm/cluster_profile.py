"""When does TMA multicast pay? ncu on chapter 8's cluster kernel (kernels.hopper.cluster) in 1x1, 2x1 and 1x2
clusters and, where given, the CuTe DSL's persistent example in 1x1 and 2x1: one launch each at each size,
the L2 traffic the SMs make (TMA loads are L2 reads from the SMs' side), DRAM bytes, the L2 hit rate, the
kernel's duration, its grid and the clusters the GPU runs at once.

    PYTHONPATH=.:benchmarks/gemm[:DSL_SITE] python3 benchmarks/gemm/cluster_profile.py --out DIR [--dsl-example PATH]

Runs ncu on itself (`--launch NAME SIZE` is the child: it warms the kernel up, then launches it once between
cudaProfilerStart and Stop, and ncu profiles that launch). Writes DIR/cluster_ncu.csv (every metric of the
sections below, as ncu names them) and DIR/cluster_profile.json (the KEPT metrics: the record chapter 8
prints, kernels/hopper/records.json's "cluster_profile"; `--summarize CSV` prints it from a CSV), and prints
the chosen ones as a table.
"""
import argparse
import csv
import json
import os
import subprocess
import sys

SECTIONS = ("SpeedOfLight", "MemoryWorkloadAnalysis", "LaunchStats", "Occupancy")
KEPT = ("gpu__time_duration.sum", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
        "lts__t_sector_hit_rate.pct", "lts__t_sectors.avg.pct_of_peak_sustained_elapsed",
        "lts__t_tag_requests.avg.pct_of_peak_sustained_elapsed", "lts__throughput.avg.pct_of_peak_sustained_elapsed",
        "l1tex__m_xbar2l1tex_read_sectors.avg.pct_of_peak_sustained_elapsed",
        "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", "launch__grid_size", "launch__cluster_max_active")
SHOWN = {"gpu__time_duration.sum": "ns", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed":
         "tensor pipe %", "lts__t_sectors.avg.pct_of_peak_sustained_elapsed": "L2 sectors %",
         "lts__t_tag_requests.avg.pct_of_peak_sustained_elapsed": "L2 tag requests %",
         "lts__t_sector_hit_rate.pct": "L2 hit %", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed": "DRAM %",
         "launch__grid_size": "grid", "launch__cluster_max_active": "max active clusters"}
OURS = ("cluster 1x1", "cluster 2x1", "cluster 1x2")
DSL = ("DSL 1x1", "DSL 2x1")


def child(name, size, dsl_example):
    import numpy as np
    import kernels
    kernels.setup(verbose=False)
    import torch
    from numba import cuda
    from hopper_sweep import inputs
    M, N, K = (int(x) for x in size.split("x"))
    ta, tbt, _, _ = inputs(np.random.default_rng(0), M, N, K)
    tc = torch.empty(M, N, device="cuda")
    shape = tuple(int(x) for x in name.split()[-1].split("x"))
    if name.startswith("DSL"):
        from hopper_vs_dsl import dsl_gemm
        run = dsl_gemm(dsl_example, shape)(ta, tbt, tc)
    else:
        from kernels.hopper import cluster
        k = cluster.make(shape)
        run = cluster.launcher(k, cuda.as_cuda_array(ta), cuda.as_cuda_array(tbt), cuda.as_cuda_array(tc))
    for _ in range(3):
        run()
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    run()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()


def summary(rows, command):
    """The record chapter 8 prints (kernels/hopper/records.json, "cluster_profile"), from cluster_ncu.csv's
    rows: for each size and kernel, the KEPT metrics as numbers (ncu's "1,234" and "n/a" read as numbers and
    None)."""
    import datetime
    def number(v):
        try:
            return float(v.replace(",", ""))
        except ValueError:
            return None
    kept = {}
    for r in rows:
        if r["metric"] in KEPT:
            kept.setdefault(r["size"], {}).setdefault(r["kernel"], {})[r["metric"]] = number(r["value"])
    return {"cluster_profile": {"date": str(datetime.date.today()), "command": command, "metrics": list(KEPT),
                                "about": "ncu, one launch each (its sections SpeedOfLight, MemoryWorkloadAnalysis, "
                                         "LaunchStats, Occupancy); percentages of peak over the launch's time",
                                "runs": kept}}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--dsl-example", default=None)
    ap.add_argument("--sizes", nargs="*", default=["8192x8192x8192", "4096x4096x4096"])
    ap.add_argument("--launch", nargs=2, default=None)
    ap.add_argument("--summarize", default=None, help="print the record of this cluster_ncu.csv, run nothing")
    a = ap.parse_args()
    if a.launch:
        return child(*a.launch, a.dsl_example)
    if a.summarize:
        with open(a.summarize) as f:
            rec = summary(list(csv.DictReader(f)), "python3 benchmarks/gemm/cluster_profile.py --dsl-example PATH")
        return print(json.dumps(rec, indent=1))
    names = OURS + (DSL if a.dsl_example else ())
    rows, table = [], []
    for size in a.sizes:
        for name in names:
            cmd = ["ncu", "--profile-from-start", "off", "--csv", "--page", "raw"]
            for s in SECTIONS:
                cmd += ["--section", s]
            cmd += [sys.executable, os.path.abspath(__file__), "--launch", name, size]
            if a.dsl_example:
                cmd += ["--dsl-example", a.dsl_example]
            r = subprocess.run(cmd, capture_output=True, text=True)
            lines = [line for line in r.stdout.splitlines() if line.startswith('"')]
            got = {}
            if len(lines) >= 3:                       # header, units, then one row per profiled launch
                head, last = next(csv.reader([lines[0]])), next(csv.reader([lines[-1]]))
                got = dict(zip(head, last))
            if not got:
                print(name, size, "ncu gave nothing:", (r.stderr or r.stdout)[-800:], flush=True)
                continue
            rows += [dict(size=size, kernel=name, metric=k, value=v) for k, v in got.items()]
            table.append((size, name, {label: got.get(m, "-") for m, label in SHOWN.items()}))
            print(size, name, table[-1][2], flush=True)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "cluster_ncu.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["size", "kernel", "metric", "value"])
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(a.out, "cluster_profile.json"), "w") as f:
        json.dump(summary(rows, "python3 benchmarks/gemm/cluster_profile.py" + (
            " --dsl-example PATH" if a.dsl_example else "")), f, indent=1)
    print("\n| size | kernel | " + " | ".join(SHOWN.values()) + " |")
    print("|---|---|" + "---|" * len(SHOWN))
    for size, name, v in table:
        print("| %s | %s | %s |" % (size, name, " | ".join(str(v[label]) for label in SHOWN.values())))


if __name__ == "__main__":
    main()
