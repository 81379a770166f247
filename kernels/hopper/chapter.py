"""What chapter 8 shows of its kernels: the generated main loop, the recorded runs as tables and the sweeps as
a plot (RECORD: records.json beside this file, cutelite.teach.records), and the map from the CuTe names the
kernels call to the PTX instructions they emit."""

import re
import textwrap

from cutelite import _, size
from cutelite.teach.records import load

from ..cutejit import (
    PipelineState, PipelineTmaAsync, fence_proxy_async, gemm, kernel, local_tile, make_identity_tensor,
    make_producer_start_state, make_smem_tensor, named_barrier_arrive, named_barrier_sync, prefetch_tensor_map,
    setmaxnreg, thread_idx, tma_load, tma_store, tma_store_commit, tma_store_wait, warpgroup_arrive,
    warpgroup_commit, warpgroup_wait,
)
from ..cutejit.trace import current
from ..instructions.hopper_ptx import PTX
from . import objects as hopper

__all__ = ["RECORD", "recorded_table", "timing_method_table", "mainloop_excerpt", "plot_sweeps", "NAME_MAP", "name_map",
           "name_map_table", "ladder_table", "spread_4096", "dsl_table", "host_path_2048", "profile_lines",
           "odd_shape_lines", "cluster_lines", "cluster_verdict", "dsl_cluster_verdict", "cluster_profile_lines",
           "fp8_tables"]

RECORD = load("kernels/hopper")
STEP5, OURS = "persistent BN256 st4 group16 tma-store", "ours (persistent, TMA store)"


def recorded_table(run=None):
    """A recorded run as a Markdown table, headed by its date, device and command (the latest run of the
    ladder, RECORD["runs"][0], by default)."""
    r = RECORD["runs"][0] if run is None else run
    out = [f"Recorded {r['date']} on {r['device']} ({r['run']} of benchmarks/gemm/RESULTS_HOPPER.md), "
           f"`{r['command']}`, 4096^3:", "",
           "| kernel | ms | TFLOP/s | / cuBLAS fp16->fp32 |", "|---|---|---|---|"]
    out += [f"| {k} | {ms:.3f} | {tf:.1f} | {ratio:.2f} |" for k, ms, tf, ratio in r["rows"]]
    return "\n".join(out)


def timing_method_table():
    """The recorded timing methods (RECORD["timing_methods"]) as text: the kernel's ratio to cuBLAS under each
    timing method, then what a lone call costs the host."""
    t = RECORD["timing_methods"]
    lines = [f"recorded on {t['source']}, {t['kernel']}, {t['size']}^3, fp16 in, fp32 out:"]
    for method, run, calls in t["methods"]:
        ratios = " and ".join(f"{ratio:.2f} ({ms:.3f} ms vs cuBLAS {cublas:.3f})" for cublas, ms, ratio in calls)
        lines.append(f"  {method} [{run}]: {ratios}")
    lines.append("a lone call, on top of its GPU time: " + "; ".join(
        f"{who} {extra:.3f} ms more than its {gpu:.3f}" for who, (gpu, extra) in t["host_ms"].items()))
    return "\n".join(lines)


def mainloop_excerpt(kernel, first="mbarrier_try_wait", last="wgmma_wait"):
    """The consumer's k-tile loop of a built warp-specialised kernel, as the trace wrote it: from the loop
    header before its first `first` line (the wait on a full barrier) to its first `last` line after the
    wgmmas, dedented."""
    lines = kernel.source.splitlines()
    waits = [i for i, ln in enumerate(lines) if first in ln]
    start = next((i for i in waits if any("wgmma(" in ln for ln in lines[i:i + 12])), None)
    if start is None:
        raise ValueError("mainloop_excerpt: no wait on a full barrier followed by wgmmas in %s" % kernel.function.__name__)
    head = next(i for i in range(start, -1, -1) if lines[i].lstrip().startswith("for "))
    stop = next(i for i in range(start, len(lines)) if last in lines[i])
    return textwrap.dedent("\n".join(lines[head:stop + 1]))


def plot_sweeps(ax, sweeps=RECORD["sweeps"]):
    """Ratio to cuBLAS against problem size, one line per kernel of each recorded sweep (median over the
    sweep's rounds, with its range as an error bar)."""
    order = sorted({s for sweep in sweeps for s in sweep["sizes"]}, key=lambda s: s[0] * s[1] * s[2])
    for sweep in sweeps:
        sizes = sorted(sweep["sizes"], key=order.index)
        names = [n for n in sweep["sizes"][sizes[0]] if not n.startswith("cuBLAS")]
        for name in names:
            r = [sweep["sizes"][s][name] for s in sizes]
            mid = [x[1] for x in r]
            err = [[m - x[2] for m, x in zip(mid, r)], [x[3] - m for m, x in zip(mid, r)]]
            ax.errorbar([order.index(s) for s in sizes], mid, yerr=err, marker="o", capsize=3,
                        label="%s (%s)" % (name, sweep["run"]))
    ax.set_xticks(range(len(order)), ["%dx%dx%d" % s for s in order])
    ax.axhline(1.0, color="black", lw=1, ls="--", label="cuBLAS fp16->fp32")
    ax.set_ylabel("throughput / cuBLAS (same process)")
    ax.set_xlabel("M x N x K")
    ax.set_ylim(0, 1.15)
    ax.legend(fontsize=7, loc="lower right")
    return ax


# What the kernels of kernels/hopper write, and what it does. name_map traces each call, as written here, in a
# kernel built from the chapter's objects and reads the PTX it emits from kernels.instructions.hopper_ptx.
NAME_MAP = [
    ("warpgroup_arrive(acc)", "a fence, not an arrival: the warpgroup's accesses to the accumulators before "
                              "it are ordered before the wgmmas after it"),
    ("gemm(mma, tCrA[_, _, _, 0], tCrB[_, _, _, 0], acc)", "the k-tile's wgmmas, one per k-block of 16"),
    ("warpgroup_commit()", "the wgmmas issued since the last commit form one group"),
    ("warpgroup_wait(1, acc)", "wait until at most 1 of this warpgroup's groups is pending"),
    ("pipe.producer_acquire(state)", "wait until empty[s] has completed the phase of parity state.phase (the "
                                     "producer's state starts at phase 1: make_producer_start_state), then arrive "
                                     "on full[s] announcing the stage's bytes"),
    ("tma_load(tmA, cA[_, _, 0, 0], sA[_, _, 0], *pipe.producer_barrier(state))",
     "producer_barrier emits nothing: it names full[s], on which the copy completes its bytes"),
    ("pipe.consumer_wait(state)", "wait until full[s] has completed the phase of parity state.phase"),
    ("pipe.consumer_release(state)", "lane 0 of every consumer warp arrives on empty[s]"),
    ("fence_proxy_async()", "this thread's stores to shared memory (generic proxy) are ordered before later "
                            "async-proxy accesses to it (a TMA store, a wgmma); CuTe: tma_store_fence()"),
    ("named_barrier_sync(1, 128)", "wait until 128 threads (whole warps) have arrived at hardware barrier 1"),
    ("named_barrier_arrive(2, 256)", "count this warp's arrival at barrier 2 (of 256 threads) without waiting"),
    ("tma_store(tmC, buf, cC[_, _, 0, 0])", "one thread: the copy engine stores the box from shared memory"),
    ("tma_store_commit()", "the stores issued so far form one bulk group; CuTe: tma_store_arrive()"),
    ("tma_store_wait(1, read=True)", "wait until at most 1 of this thread's bulk groups may still read shared "
                                     "memory; CuTe: tma_store_wait<1>()"),
    ("setmaxnreg(40, grow=False)", "the warpgroup gives its registers down to 40 a thread back to the CTA's pool"),
    ("prefetch_tensor_map(tmA)", "order the host's writes of the tensor map before the TMA unit reads it, and "
                                 "fetch it early"),
]


@kernel
def _name_probe(mA, mB, mC, tmA, tmB, tmC, mma, sA_layout, sB_layout, sC_layout, calls, out):
    """Trace each call of `calls` (text) with the objects a kernel of kernels/hopper has, and append to `out`
    the lines each one emitted."""
    BM, BN, BK, stages = size(sA_layout, 0), size(sB_layout, 0), size(sA_layout, 1), size(sA_layout, 2)
    sA = make_smem_tensor(sA_layout.element_layout(), mA.dtype)
    sB = make_smem_tensor(sB_layout.element_layout(), mB.dtype)
    sC = make_smem_tensor(sC_layout.element_layout(), "float32")
    pipe = PipelineTmaAsync(stages, tmA.spec.bytes + tmB.spec.bytes, size(mma.thr_layout_vmnk) // 128)
    producer, consumer = make_producer_start_state(stages), PipelineState(stages)
    thr_mma = mma.get_slice(thread_idx() - 128)
    names = dict(
        pipe=pipe, mma=mma, tmA=tmA, tmC=tmC, sA=sA, buf=sC[_, _, 0],
        tCrA=thr_mma.partition_fragment_A(sA), tCrB=thr_mma.partition_fragment_B(sB),
        acc=thr_mma.partition_fragment_C(local_tile(mC, (BM, BN), (0, 0))),
        cA=local_tile(make_identity_tensor(mA.shape), (BM, BK), (_, _)),
        cC=local_tile(make_identity_tensor(mC.shape), (size(sC_layout, 0), size(sC_layout, 1)), (_, _)),
        gemm=gemm, warpgroup_arrive=warpgroup_arrive, warpgroup_commit=warpgroup_commit,
        warpgroup_wait=warpgroup_wait, tma_load=tma_load, tma_store=tma_store, tma_store_commit=tma_store_commit,
        tma_store_wait=tma_store_wait, fence_proxy_async=fence_proxy_async, named_barrier_sync=named_barrier_sync,
        named_barrier_arrive=named_barrier_arrive, setmaxnreg=setmaxnreg, prefetch_tensor_map=prefetch_tensor_map,
        _=_)
    body = current().body
    for call in calls:
        mark = len(body)
        state = producer if "producer_" in call else consumer     # `state` is the role's, as in the kernels
        eval(call, {}, dict(names, state=state))                  # the call exactly as the table shows it
        out.append(body[mark:])


def name_map(calls=NAME_MAP):
    """[(call, [PTX instruction (x count)], what it does)] for each (call, what) of `calls`: the instructions
    the call emits in a kernel of chapter 8's fastest configuration, in order, from hopper_ptx.PTX."""
    o = hopper.objects(BM=128, BN=256, stages=4, consumers=2)
    emitted = []
    _name_probe.build(*hopper.operand_matrices(o), o.tmA, o.tmB, o.tmC, o.mma, o.sA, o.sB, o.sC,
                      [c for c, _ in calls], emitted, threads=384)
    rows = []
    for (call, what), lines in zip(calls, emitted):
        found = [name for line in lines for name in re.findall(r"\b(\w+)\(", line) if name in PTX]
        counted = []
        for name in dict.fromkeys(found):
            n = found.count(name)
            counted += [p + (" (x%d)" % n if n > 1 else "") for p in PTX[name].split("; ")]
        rows.append((call, counted, what))
    return rows


def name_map_table(calls=NAME_MAP):
    """name_map as a Markdown table: the call, the PTX it emits, what it does."""
    out = ["| the kernels write (CuTe's name) | PTX it emits | what it does |", "|---|---|---|"]
    out += ["| `%s` | %s | %s |" % (call, "<br>".join("`%s`" % p for p in ptx) or "(nothing)", what)
            for call, ptx, what in name_map(calls)]
    return "\n".join(out)


# ---- the recorded figures the chapter quotes, each with its run and date -----------------------------------
def _run(name):
    return next(r for r in RECORD["runs"] if r["run"] == name)


def _ratio(run, kernel):
    return next(ratio for k, _, _, ratio in run["rows"] if k == kernel)


def _span(values):
    lo, hi = min(values), max(values)
    return "%.2f" % lo if lo == hi else "%.2f-%.2f" % (lo, hi)


def ladder_table(layer=("run 9", "run 10"), hand=("run 8",)):
    """Steps 1-5 as ratios to cuBLAS at 4096^3: their range over the runs `layer` (the kernels on the CuTe
    layer) beside the hand-indexed kernels they replaced (runs `hand`), as a Markdown table."""
    from . import LADDER
    runs, old = [_run(r) for r in layer], [_run(r) for r in hand]
    head = "%s (%s, %s); hand-indexed: %s" % (" and ".join(layer), runs[0]["date"], runs[0]["device"],
                                             " and ".join(hand))
    out = ["Ratio to cuBLAS fp16->fp32 at 4096^3, GPU time, recorded in " + head + ":", "",
           "| step | CuTe layer | hand-indexed |", "|---|---|---|"]
    for s in LADDER[:5]:
        out.append("| %s | %s | %s |" % (s.label, _span([_ratio(r, s.recorded) for r in runs]),
                                         _span([_ratio(r, s.recorded) for r in old])))
    return "\n".join(out)


def spread_4096():
    """Step 5 at 4096^3 in every recorded run (the ladder's, step 6's, the sweeps'): its range of ratios to
    cuBLAS, and cuBLAS's own range in TFLOP/s, over the machine starts of 2026-11-25."""
    flop = 2.0 * 4096 ** 3
    ratios, cublas, names = [], [], []
    for r in RECORD["runs"]:
        if any(k == STEP5 for k, *_ in r["rows"]) and r["run"] in ("run 9", "run 10", "run 13"):
            ratios.append(_ratio(r, STEP5))
            cublas.append(next(tf for k, _, tf, _ in r["rows"] if k.startswith("cuBLAS fp16->fp32")))
            names.append(r["run"])
    for sw in RECORD["sweeps"]:
        rows = sw["sizes"][(4096, 4096, 4096)]
        ratios.append(rows[OURS][1])
        cublas.append(flop / rows["cuBLAS fp16->fp32"][0] / 1e9)
        names.append(sw["run"])
    order = sorted(range(len(names)), key=lambda i: int(names[i].split()[1]))
    return ("step 5 at 4096^3, %s (2026-11-25): %s of cuBLAS; cuBLAS itself %.0f-%.0f TFLOP/s"
            % (", ".join(names[i] for i in order), _span(ratios), min(cublas), max(cublas)))


def dsl_table(runs=("run 11", "run 14"), sizes=((4096, 4096, 4096), (8192, 8192, 8192), (4096, 14336, 4096))):
    """Ours against NVIDIA's CuTe DSL persistent example (2 x 1 cluster), median ratios to cuBLAS of the
    recorded sweeps `runs`, as a Markdown table."""
    sweeps = [next(s for s in RECORD["sweeps"] if s["run"] == r) for r in runs]
    out = ["Median ratio to cuBLAS, ours / the DSL's (%s, %s; %s):" % (" and ".join(runs), sweeps[0]["date"],
                                                                      sweeps[0]["device"]), "",
           "| run | " + " | ".join("%dx%dx%d" % s for s in sizes) + " |", "|---" * (len(sizes) + 1) + "|"]
    for r, sw in zip(runs, sweeps):
        cells = ["%.2f / %.2f" % (sw["sizes"][s][OURS][1], sw["sizes"][s]["CuTe DSL persistent, cluster 2x1"][1])
                 for s in sizes]
        out.append("| %s | %s |" % (r, " | ".join(cells)))
    return "\n".join(out)


def host_path_2048():
    """What the host costs at 2048^3, from the records: the GEMM's GPU time (cuBLAS), the host's time per
    HopperGemm call, our kernel's ratio in runs 11, 12 and 14, and matmul's from PyTorch tensors."""
    size = (2048, 2048, 2048)
    sw = {s["run"]: s for s in RECORD["sweeps"]}
    host = RECORD["host_us"]
    call, us = next(iter(host["rows"].items()))
    lines = ["cuBLAS at 2048^3: %.3f ms (run 11)" % sw["run 11"]["sizes"][size]["cuBLAS fp16->fp32"][0],
             "the host's time per call of %s: %.1f us (%s, %s)" % (call.replace("`", ""), us, host["command"],
                                                                  host["date"])]
    for run, how in (("run 11", "Numba's dispatcher on every launch"), ("run 12", "launches prepared once"),
                     ("run 14", "prepared launches, called on Numba views of PyTorch tensors")):
        lines.append("ours at 2048^3, %s: %.2f of cuBLAS (%s)" % (how, sw[run]["sizes"][size][OURS][1], run))
    m = RECORD["matmul_2048"]
    lines.append("matmul(A, B, out=C) from PyTorch tensors at 2048^3, every majorness, f16 and bf16: %s of cuBLAS "
                 "(benchmarks/gemm/RESULTS.md, matmul sweep %s, %s)" % (_span([r for *_, r in m["rows"]]),
                                                                         m["run"], m["date"]))
    return "\n".join(lines)


def profile_lines(p=RECORD["profile"]):
    """The recorded Nsight Compute profile of step 5, with where and when it was taken."""
    return "\n".join([
        "ncu, %s, %d^3, %s (%s, %s), %s: %d us" % (p["kernel"], p["size"], p["device"], p["date"], p["run"],
                                                   p["clock"], p["us"]),
        "  SM throughput %d %%, memory %d %% (L2 %d %%, DRAM %d %%)" % (p["sm_throughput"], p["memory_throughput"],
                                                                      p["l2"], p["dram"]),
        "  %d registers a thread, %d %% achieved occupancy" % (p["registers"], p["achieved_occupancy"]),
        "  a warp issues every %.1f cycles; %d %% of that waiting at a CTA barrier" % (p["cycles_between_issues"],
                                                                                     p["waiting_at_barrier"])])


def odd_shape_lines(rows=2):
    """The first `rows` of the recorded row-pitch probe: the same values, only A's and B^T's row pitch moved."""
    o = RECORD["odd_shape"]
    out = ["%s (%s, %s):" % (o["command"], o["device"], o["date"])]
    for (m, n, k), (pa, pb), ms, cublas, ratio in o["rows"][:rows]:
        out.append("  %dx%dx%d, rows of %d and %d bytes: the kernel %.3f ms, cuBLAS %.3f ms (%.2f)"
                   % (m, n, k, pa, pb, ms, cublas, ratio))
    return "\n".join(out)


def cluster_lines():
    """The recorded run of the cluster kernel (RECORD["cluster"], written by benchmarks/gemm/cluster_bench.py):
    each kernel's TFLOP/s and median ratio to cuBLAS (with its range over the rounds) at each size, or a line
    saying that there is no record yet."""
    r = RECORD.get("cluster")
    if r is None:
        return ("No recorded run of the cluster kernel yet: benchmarks/gemm/cluster_bench.py measures it on an H100 "
                "or H200 and writes the record this cell prints.")
    run = r["run"]
    lines = ["recorded %s on %s, `%s`; worst relative error of the fuzz against cuBLAS: %s" % (
        run["date"], run["device"], run["command"], ", ".join("%s %s" % kv for kv in r["fuzz"].items())), ""]
    lines += ["%-16s %-42s %8.1f TFLOP/s  %.2f of cuBLAS (%.2f - %.2f)" % (size, name, tf, ratio, lo, hi)
              for size, name, ms, tf, ratio, lo, hi in r["rows"]]
    return "\n".join(lines + ["", cluster_verdict(r["rows"]) + (" " + dsl_cluster_verdict(r["rows"])).rstrip()])


def dsl_cluster_verdict(rows):
    """One sentence on recorded `rows`: the CuTe DSL's multi-block clusters against its own 1 x 1 cluster (the
    ratio of their times at each size), or "" where the run has no DSL rows."""
    ms = {(size, name): t for size, name, t, *_ in rows if name.startswith("CuTe DSL")}
    ones = {size: t for (size, name), t in ms.items() if name.endswith(" 1x1")}
    rel = [ones[size] / t for (size, name), t in ms.items() if size in ones and not name.endswith(" 1x1")]
    if not rel:
        return ""
    return ("The CuTe DSL's 2x1 and 1x2 clusters ran at %.2f - %.2f of its own 1x1's speed in the same run."
            % (min(rel), max(rel)))


PROFILED = (("ms", "gpu__time_duration.sum"),
            ("tensor pipe %", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed"),
            ("L2 hit %", "lts__t_sector_hit_rate.pct"),
            ("L2 busy %", "lts__throughput.avg.pct_of_peak_sustained_elapsed"))
VOLUMES = (("L2 sectors", "lts__t_sectors.avg.pct_of_peak_sustained_elapsed"),
           ("L2 tag requests", "lts__t_tag_requests.avg.pct_of_peak_sustained_elapsed"))


def cluster_profile_lines():
    """The recorded ncu profile of the cluster kernels and the DSL's (RECORD["cluster_profile"], written by
    benchmarks/gemm/cluster_profile.py): per kernel its time, how busy the tensor pipe and L2 were, L2's hit
    rate, and its L2 sector accesses and tag requests (a rate times the time) relative to the same kernel
    family's 1 x 1 cluster; then one sentence. Or a line saying there is no profile yet."""
    r = RECORD.get("cluster_profile")
    if r is None:
        return ("No ncu profile of the cluster kernels recorded yet: benchmarks/gemm/cluster_profile.py measures it "
                "on an H100 or H200 and writes the record this cell prints.")
    lines = ["ncu, recorded %s: `%s`" % (r["date"], r["command"])]
    for size, kernels in r["runs"].items():
        size = "x".join(map(str, size)) if isinstance(size, tuple) else size      # records.load reads MxNxK
        lines += ["", "%-24s %6s %14s %9s %10s %17s %22s" % (
            ("at " + size,) + tuple(n for n, _ in PROFILED) + tuple(n + " / 1x1" for n, _ in VOLUMES))]
        change = {}
        for name, m in kernels.items():
            base = kernels[name.rsplit(" ", 1)[0] + " 1x1"]
            volume = [m[k] * m[PROFILED[0][1]] / (base[k] * base[PROFILED[0][1]]) for _, k in VOLUMES]
            change[name] = volume
            lines.append("%-24s %6.3f %14.0f %9.0f %10.0f %17.2f %22.2f" % (
                (name, m[PROFILED[0][1]] / 1e6) + tuple(m[k] for _, k in PROFILED[1:]) + tuple(volume)))
        pairs = [(name, change[name]) for name in kernels if not name.endswith("1x1")]
        lines += ["", "At %s, against each family's 1x1: %s." % (size, "; ".join(
            "%s L2 sectors %+d %%, tag requests %+d %%" % (name, round(100 * (v[0] - 1)), round(100 * (v[1] - 1)))
            for name, v in pairs)) + " L2 was at most %.0f %% busy in any of them." % max(
            m[PROFILED[3][1]] for m in kernels.values())]
    return "\n".join(lines)


def cluster_verdict(rows):
    """One sentence on recorded `rows` (RECORD["cluster"]["rows"]): at how many sizes every multi-block cluster
    took longer than the 1 x 1 cluster, and the ranges of their median ratios to cuBLAS."""
    ms = {(size, name): t for size, name, t, tf, ratio, lo, hi in rows if name.startswith("cluster ")}
    ratio = {(size, name): q for size, name, t, tf, q, lo, hi in rows if name.startswith("cluster ")}
    sizes = sorted({size for size, name in ms if name == "cluster 1x1"})
    multi = [(size, name) for size, name in ms if name != "cluster 1x1" and size in sizes]
    slower = [s for s in sizes if all(ms[k] > ms[s, "cluster 1x1"] for k in multi if k[0] == s)]
    names = " and ".join(sorted({name[len("cluster "):] for _, name in multi}, reverse=True))
    where = "at every size" if slower == sizes else "at %d of the %d sizes" % (len(slower), len(sizes))
    return "In this run the %s clusters were slower than 1x1 %s: %.2f - %.2f of cuBLAS against %.2f - %.2f." % (
        names, where, min(ratio[k] for k in multi), max(ratio[k] for k in multi),
        min(ratio[s, "cluster 1x1"] for s in sizes), max(ratio[s, "cluster 1x1"] for s in sizes))


def fp8_tables(record=None):
    """Chapter 11's recorded FP8 run (`record`, default RECORD["fp8"], written by benchmarks/gemm/fp8_bench.py)
    as Markdown: the run, a table of each kernel's TFLOP/s and ratio to cuBLAS's _scaled_mm at each size (bf16
    out), and one of each one's relative error at accuracy_size^3 (float32 out); or a line saying there is no
    record yet."""
    r = RECORD.get("fp8") if record is None else record
    if r is None:
        return "Speed and accuracy on a Hopper GPU: not measured yet (benchmarks/gemm/fp8_bench.py writes the record)."
    run, sizes = r["run"], sorted(r["speed"])
    kernels = list(r["speed"][sizes[0]])
    lines = ["Recorded %s on %s, `%s` (best of %d rounds):" % (run["date"], run["device"], run["command"],
                                                              run["rounds"]), "",
             "| e4m3, bf16 out | " + " | ".join("%d^3: TFLOP/s, of cuBLAS" % s for s in sizes) + " |",
             "|---|" + "---|" * len(sizes)]
    lines += ["| %s | %s |" % (k, " | ".join("%.0f, %.2f" % tuple(r["speed"][s][k][1:]) for s in sizes))
              for k in kernels]
    lines += ["", "| float32 out, %d^3 | relative error |" % r["accuracy_size"], "|---|---|"]
    lines += ["| %s | %.2e |" % (k, e) for k, e in r["accuracy"].items()]
    return "\n".join(lines)
