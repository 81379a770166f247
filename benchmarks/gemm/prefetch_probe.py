"""When does step 11's k-block register prefetch pay? tc_sm80 (step 10) against tc_sm80_prefetch (step 11) in
the same configurations, on a GPU, in one process:

    python3 benchmarks/gemm/prefetch_probe.py --out DIR [--rounds 5] [--ncu | --ncu-only]

Configurations: the ladder's (128x128x32, 4 stages, 2 CTAs an SM), sgemm_sm80.cu's tile (128x128x64,
3 stages: 4 k-blocks a k-tile), 8 stages (128 KiB of shared memory: 1 CTA of 4 warps an SM, one warp a
scheduler), and 64x64 CTA tiles (32x32 warp tiles: 8 mma a k-block instead of 32). Each kernel is checked
at 512^3 against NumPy (output poisoned), then timed at 4096^3 and 8192^3 (kernels.timing.gpu_time_ms) in
`rounds` interleaved rounds; the table gives the median TFLOP/s and the range, registers and CTAs an SM.
Writes DIR/prefetch_probe.csv and DIR/sass/<config>_<kind>.sass (the SASS the GPU runs; read it with
`python benchmarks/gemm/sass_schedule.py --sass FILE`). --ncu also profiles each kernel once at 4096^3
(ncu: the stall reasons per issued instruction, as ladder_profile.py, written to DIR/prefetch_stalls.csv, and
the stall samples per SASS instruction: DIR/ncu/<config>_<kind>_source.csv, read with `sass_schedule.py
--ncu FILE`), and prints the instructions the samples fall on most; --ncu-only does that alone.
"""

import argparse
import csv
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

CONFIGS = {
    "128x128x32 4st": dict(),
    "128x128x64 3st": dict(BK=64, stages=3),
    "128x128x32 8st": dict(stages=8),
    "64x64x32 4st": dict(BM=64, BN=64, min_blocks=4),
}
KINDS = ("plain", "prefetch")


def build(config, kind):
    from kernels.gemm import tc_sm80, tc_sm80_prefetch
    mod = tc_sm80 if kind == "plain" else tc_sm80_prefetch
    return mod.make(**dict(mod.BEST, **CONFIGS[config]))


def operands(n, seed=0):
    import numpy as np
    from numba import cuda
    rng = np.random.default_rng(seed)
    A = rng.uniform(-1, 1, (n, n)).astype(np.float16)
    B = rng.uniform(-1, 1, (n, n)).astype(np.float16)
    return A, B, cuda.to_device(A.view(np.uint16)), cuda.to_device(B.view(np.uint16))


def check(k, what):
    """Relative error of kernel k (`what`) at 512^3 against NumPy (float64), its output poisoned with NaN
    (kernels.harness.check: an error of 1e-3 or more stops the probe)."""
    import numpy as np
    from numba import cuda
    from kernels import harness
    A, B, dA, dB = operands(512, seed=1)
    dC = cuda.device_array((512, 512), np.float32)
    return harness.check(lambda: k.launch(dA, dB, dC), dC, A.astype(np.float64) @ B.astype(np.float64),
                         what + " at 512^3")


def launch(config, kind):
    """The child ncu profiles: three launches at 4096^3."""
    import kernels
    kernels.setup(verbose=False)
    from numba import cuda
    k = build(config, kind)
    _, _, dA, dB = operands(4096)
    dC = cuda.device_array((4096, 4096), "float32")
    for _ in range(3):
        k.launch(dA, dB, dC)
    cuda.synchronize()


STALLS = ("long_scoreboard", "short_scoreboard", "barrier", "math_pipe_throttle", "wait", "mio_throttle",
          "not_selected", "selected", "dispatch_stall", "lg_throttle")


def profile(config, kind, out):
    """ncu on one launch: stall reasons per issued instruction (returned: {reason: value}, or None), and the
    per-instruction source page."""
    name = "%s_%s" % (config.replace(" ", "_"), kind)
    rep = os.path.join(out, "ncu", name)
    os.makedirs(os.path.dirname(rep), exist_ok=True)
    cmd = ["ncu", "--launch-skip", "2", "--launch-count", "1", "--kernel-name", "regex:gemm_",
           "--section", "WarpStateStats", "--section", "SourceCounters", "--section", "Occupancy",
           "--section", "LaunchStats", "-f", "-o", rep, sys.executable, os.path.abspath(__file__),
           "--launch", config, kind]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        print(name, "ncu failed:", (r.stderr or r.stdout)[-600:])
        return None
    metrics = ["smsp__average_warps_issue_stalled_%s_per_issue_active.ratio" % s for s in STALLS]
    raw = subprocess.run(["ncu", "-i", rep + ".ncu-rep", "--page", "raw", "--csv", "--metrics", ",".join(metrics)],
                         capture_output=True, text=True).stdout
    rows = list(csv.reader(line for line in raw.splitlines() if line.startswith('"')))
    got = None
    if len(rows) > 2:
        head, vals = rows[0], rows[-1]
        got = {s: vals[head.index(m)] for s, m in zip(STALLS, metrics) if m in head}
        print("%-26s stalls per issued instruction: %s" % (name, ", ".join("%s %s" % kv for kv in got.items())))
    src = subprocess.run(["ncu", "-i", rep + ".ncu-rep", "--page", "source", "--csv", "--print-source", "sass"],
                         capture_output=True, text=True).stdout
    open(rep + "_source.csv", "w").write(src)
    lines = list(csv.reader(line for line in src.splitlines() if line.startswith('"')))
    if not lines:
        print(name, "no source page")
        return got
    head = lines[0]
    col = next((i for i, h in enumerate(head) if "Stall Sampling (All" in h), None)
    text = next((i for i, h in enumerate(head) if h == "Source"), None)
    if col is None or text is None:
        print(name, "source page columns:", head[:12])
        return got
    samples = [(float(r[col] or 0), r[text]) for r in lines[1:] if len(r) > max(col, text)]
    total = sum(s for s, _ in samples) or 1
    by_op = {}
    for s, t in samples:
        op = t.split()[1 if t.startswith("@") else 0].split(".")[0] if t.strip() else "?"
        by_op[op] = by_op.get(op, 0) + s
    print("%-26s stall samples by opcode: %s" % (name, ", ".join("%s %.0f%%" % (op, 100 * s / total) for op, s in
                                                              sorted(by_op.items(), key=lambda kv: -kv[1])[:6])))
    for s, t in sorted(samples, reverse=True)[:5]:
        print("    %5.1f%%  %s" % (100 * s / total, t.strip()))
    return got


def profile_all(out):
    """profile() every kernel; their stall reasons to OUT/prefetch_stalls.csv (config, kind, reason, value)."""
    rows = []
    for config in CONFIGS:
        for kind in KINDS:
            got = profile(config, kind, out)
            rows += [dict(config=config, kind=kind, reason=k, value=v) for k, v in (got or {}).items()]
    with open(os.path.join(out, "prefetch_stalls.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["config", "kind", "reason", "value"])
        w.writeheader()
        w.writerows(rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--sizes", type=int, nargs="+", default=[4096, 8192])
    ap.add_argument("--ncu", action="store_true")
    ap.add_argument("--ncu-only", action="store_true")
    ap.add_argument("--launch", nargs=2, default=None)
    a = ap.parse_args()
    if a.launch:
        return launch(*a.launch)
    if a.ncu_only:
        return profile_all(a.out)
    import kernels
    info = kernels.setup()
    from numba import cuda
    from kernels.gemm.chapter import occupancy
    from kernels.harness import registers, sass_text
    from kernels.timing import gpu_time_ms
    os.makedirs(os.path.join(a.out, "sass"), exist_ok=True)
    kern, facts = {}, {}
    for config in CONFIGS:
        for kind in KINDS:
            k = kern[config, kind] = build(config, kind)
            err = check(k, "%s %s" % (config, kind))
            regs = registers(k.numba)
            open(os.path.join(a.out, "sass", "%s_%s.sass" % (config.replace(" ", "_"), kind)), "w").write(
                sass_text(k.numba))
            ctas = occupancy(regs, k.config["threads"], k.config["smem"])[0]
            facts[config, kind] = (regs, ctas, err)
            print("%-16s %-9s regs %3d, %d CTAs an SM (H100 limits), rel. err at 512^3 %.1e" % (config, kind, regs,
                                                                                                 ctas, err))
    times = {}
    for n in a.sizes:
        _, _, dA, dB = operands(n)
        dC = cuda.device_array((n, n), "float32")
        for _ in range(a.rounds):
            for key, k in kern.items():
                ms = gpu_time_ms(lambda: k.launch(dA, dB, dC))
                times.setdefault((n,) + key, []).append(2.0 * n ** 3 / ms / 1e9)
        del dA, dB, dC
    rows = []
    print("\n%s, %d interleaved rounds, TFLOP/s median (min-max)" % (info.name, a.rounds))
    print("%-6s %-16s %-24s %-24s %s" % ("size", "config", "step 10 (plain)", "step 11 (prefetch)", "11 / 10"))
    for n in a.sizes:
        for config in CONFIGS:
            t = [times[n, config, kind] for kind in KINDS]
            med = [statistics.median(x) for x in t]
            cell = ["%.1f (%.1f-%.1f)" % (m, min(x), max(x)) for m, x in zip(med, t)]
            print("%-6d %-16s %-24s %-24s %.3f" % (n, config, cell[0], cell[1], med[1] / med[0]))
            for kind, m, x in zip(KINDS, med, t):
                regs, ctas, err = facts[config, kind]
                rows.append(dict(size=n, config=config, kind=kind, tflops_median=round(m, 2), tflops_min=round(min(x), 2),
                                 tflops_max=round(max(x), 2), regs=regs, ctas_per_sm=ctas, rel_err=err))
    with open(os.path.join(a.out, "prefetch_probe.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    if a.ncu:
        print()
        profile_all(a.out)


if __name__ == "__main__":
    main()
