"""What chapter 8 shows of its kernels: the generated main loop, and the recorded sweeps as a plot."""

import textwrap

from ..hopper_results import SWEEPS

__all__ = ["mainloop_excerpt", "plot_sweeps"]


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
