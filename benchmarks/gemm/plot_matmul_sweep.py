"""The plot of matmul_sweep.py's measurements, and a merge of several of its JSON files (sizes measured in
separate processes) into one table and one plot; needs only matplotlib.

    python3 benchmarks/gemm/plot_matmul_sweep.py OUT.png RUN.json [RUN.json ...]
    python3 benchmarks/gemm/plot_matmul_sweep.py --targets OUT.png RUN.json ...   # issue 30's targets by size

Ratios are taken within each file's process only (each cell's times against cuBLAS's in the same rounds); a
cell in a later file replaces the same cell of an earlier one.
"""
import json
import statistics
import sys


def plot(cells, path, title):
    """One panel per size: matmul's and Triton's ratio to cuBLAS (median over rounds) for each dtype and
    majorness, with the issue's targets drawn in."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    sizes = list(dict.fromkeys((c["M"], c["N"], c["K"]) for c in cells))
    cols = min(3, len(sizes))
    rows = -(-len(sizes) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 3.2 * rows), sharey=True, squeeze=False)
    for ax in axes.flat[len(sizes):]:
        ax.axis("off")
    for ax, size in zip(axes.flat, sizes):
        here = [c for c in cells if (c["M"], c["N"], c["K"]) == size]
        for j, name in enumerate(n for n in ("matmul", "Triton") if n in here[0]["ms"]):
            r = [statistics.median(cu / x for cu, x in zip(c["ms"]["cuBLAS"], c["ms"][name])) for c in here]
            ax.bar([i + 0.4 * j for i in range(len(here))], r, width=0.4, label=name)
        ax.axhline(1.0, color="k", lw=0.8)
        target = 0.9 if min(size) >= 4096 else 0.7 if max(size) >= 2048 else None     # issue 21's targets
        if target:
            ax.axhline(target, color="r", lw=0.8, ls="--")
        ax.set_xticks([i + 0.2 for i in range(len(here))])
        ax.set_xticklabels(["%s %s/%s" % (c["dtype"].replace("float", "f"), c["A"], c["B"]) for c in here], rotation=90, fontsize=7)
        ax.set_title("%dx%dx%d" % size, fontsize=9)
    for row in axes:
        row[0].set_ylabel("ratio to cuBLAS (GPU time)")
    axes[0][0].legend(fontsize=7)
    fig.suptitle(title, fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)



def ratio_of(c):
    """A cell's matmul / cuBLAS: the median over its rounds of the ratio of times (for the memory-bound shapes
    the ratio of GB/s too: the bytes are the same)."""
    return statistics.median(cu / x for cu, x in zip(c["ms"]["cuBLAS"], c["ms"]["matmul"]))


def plot_targets(cells, path, title):
    """Issue 30's view of a sweep: each shape's matmul / cuBLAS against its multiply-adds, the memory-bound
    shapes (M <= 64, N and K >= 4096: their target is on GB/s) apart, the targets drawn as steps (0.7 from
    2^28, 0.9 from 2^32; 0.8 for the memory-bound), the shapes that miss theirs named."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    import math
    fig, ax = plt.subplots(figsize=(10, 5.5))
    bound = [c for c in cells if c["M"] <= 64 and c["N"] >= 4096 and c["K"] >= 4096]
    other = [c for c in cells if c not in bound]
    top = 1.4                                       # shapes where cuBLAS is slow (odd pitches) drawn at the top
    for group, label, mark in ((other, "compute-bound or small", "o"), (bound, "M <= 64, N, K >= 4096 (GB/s)", "s")):
        ax.scatter([math.log2(c["M"] * c["N"] * c["K"]) for c in group], [min(ratio_of(c), top) for c in group],
                   marker=mark, label=label, alpha=0.8)
    for c in cells:
        if ratio_of(c) > top:
            ax.annotate("%dx%dx%d: %.2f" % (c["M"], c["N"], c["K"], ratio_of(c)),
                        (math.log2(c["M"] * c["N"] * c["K"]), top), fontsize=6, xytext=(3, -8),
                        textcoords="offset points")
    ax.plot([28, 32, 32, 38], [0.7, 0.7, 0.9, 0.9], color="r", lw=1, ls="--", label="target (TFLOP/s)")
    ax.axhline(0.8, color="tab:orange", lw=1, ls=":", label="target, memory-bound (GB/s)")
    ax.axhline(1.0, color="k", lw=0.8)
    for c in cells:
        if str(c.get("target", "")).startswith("MISSED"):
            ax.annotate("%dx%dx%d" % (c["M"], c["N"], c["K"]), (math.log2(c["M"] * c["N"] * c["K"]), ratio_of(c)),
                        fontsize=6, xytext=(3, -3), textcoords="offset points")
    ax.set_xlabel("log2 of the multiply-adds (M N K)")
    ax.set_ylabel("matmul / cuBLAS (GPU time)")
    ax.set_ylim(0, top + 0.05)
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title(title, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def merge(paths):
    """(cells, heads): the cells of several sweeps, each tagged with its file's number (from 1); a cell measured
    again in a later file (same shape, dtype and majorness) replaces the earlier one."""
    cells, heads = {}, []
    for path in paths:
        with open(path) as f:
            run = json.load(f)
        heads.append(run["head"])
        for c in run["cells"]:
            cells[(c["M"], c["N"], c["K"], c["dtype"], c["A"], c["B"])] = dict(c, run=len(heads))
    return list(cells.values()), heads


def table(cells):
    """The Markdown table matmul_sweep.py prints, with the run each row came from."""
    rows = ["| M x N x K | dtype | A, B | matmul / cuBLAS | Triton / cuBLAS | cuBLAS TFLOP/s | matmul rel. err | run |",
            "|---|---|---|---|---|---|---|---|"]
    for c in cells:
        r = {k: "%.2f" % statistics.median(cu / x for cu, x in zip(c["ms"]["cuBLAS"], c["ms"][k]))
             for k in ("matmul", "Triton") if k in c["ms"]}
        rows.append("| %dx%dx%d | %s | %s, %s | %s | %s | %.0f | %.1e | %s |" % (
            c["M"], c["N"], c["K"], c["dtype"], c["A"], c["B"], r["matmul"], r.get("Triton", "-"),
            2e-9 * c["M"] * c["N"] * c["K"] / statistics.median(c["ms"]["cuBLAS"]), c["err"], c.get("run", "")))
    return "\n".join(rows)


if __name__ == "__main__":
    targets = sys.argv[1] == "--targets"          # issue 30's view: the ratio against the product's size
    args = sys.argv[2:] if targets else sys.argv[1:]
    cells, heads = merge(args[1:])
    print("\n".join("run %d: %s" % (i + 1, h) for i, h in enumerate(heads)) + "\n\n" + table(cells))
    if targets:
        plot_targets(cells, args[0], "matmul against cuBLAS, fp16 row-major in, fp32 out (%d runs; ratios within "
                                     "each)" % len(heads))
    else:
        plot(cells, args[0], "matmul and Triton against cuBLAS (%d runs; ratios within each)" % len(heads))
