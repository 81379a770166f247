"""What chapter 8 shows of its kernels: the generated main loop, the recorded sweeps as a plot, and the map
from the CuTe names the kernels call to the PTX instructions they emit."""

import re
import textwrap

from cutelite import _, size

from ..cutejit import (
    PipelineState, PipelineTmaAsync, fence_proxy_async, gemm, kernel, local_tile, make_identity_tensor,
    make_smem_tensor, named_barrier_arrive, named_barrier_sync, prefetch_tensor_map, setmaxnreg, thread_idx,
    tma_load, tma_store, tma_store_commit, tma_store_wait, warpgroup_arrive, warpgroup_commit, warpgroup_wait,
)
from ..cutejit.trace import current
from ..hopper_results import SWEEPS
from ..instructions.hopper_ptx import PTX
from . import objects as hopper

__all__ = ["mainloop_excerpt", "plot_sweeps", "NAME_MAP", "name_map", "name_map_table"]


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


def plot_sweeps(ax, sweeps=SWEEPS):
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
    ("pipe.producer_acquire(state)", "wait until empty[s] has completed the phase of parity state.phase ^ 1, "
                                     "then arrive on full[s] announcing the stage's bytes"),
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
    state = PipelineState(stages)
    thr_mma = mma.get_slice(thread_idx() - 128)
    names = dict(
        pipe=pipe, state=state, mma=mma, tmA=tmA, tmC=tmC, sA=sA, buf=sC[_, _, 0],
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
        eval(call, {}, names)                  # the call exactly as the table shows it
        out.append(body[mark:])


def name_map(calls=NAME_MAP):
    """[(call, [PTX instruction (x count)], what it does)] for each (call, what) of `calls`: the instructions
    the call emits in a kernel of chapter 8's fastest configuration, in order, from hopper_ptx.PTX."""
    o = hopper.objects(BM=128, BN=256, stages=4, consumers=2)
    emitted = []
    _name_probe.build(*hopper.operand_matrices("float16"), o.tmA, o.tmB, o.tmC, o.mma, o.sA, o.sB, o.sC,
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
