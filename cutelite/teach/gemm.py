"""Chapter 7's arithmetic and pictures: what a tiled GEMM costs in shared memory and registers, how many
FLOPs it gets per byte at each level of memory, the GEMM article's C++ printouts (checked in chapter 6) and
its optimisation table (measured in chapter 7) (Huang, "GEMM 优化2: GMEM、SMEM 内存访问优化", 2025:
book/references.bib, huang2025gemm2), and the chapter's two figures (the running bar chart of the ladder,
the roofline).
Standard library only, except the figures (matplotlib, imported inside).
"""

from ..errors import quote

__all__ = ["tile_budget", "ai_dram", "ai_global", "ai_shared", "ARTICLE_CPP", "ARTICLE_TABLE",
           "article_table_rows", "draw_ladder", "draw_roofline"]


# ---- budgets ------------------------------------------------------------------------------------------
def _positive(op, **sizes):
    """TypeError or ValueError naming `op` unless every size is a positive number (an int or a float)."""
    for name, x in sizes.items():
        if not isinstance(x, (int, float)) or isinstance(x, bool):
            raise TypeError(f"{op}: {name} must be a number, got {quote(x)} ({type(x).__name__})")
        if not x > 0:
            raise ValueError(f"{op}: {name} must be positive, got {quote(x)}")


def tile_budget(BM, BN, BK, stages, threads, in_bytes=2, acc_bytes=4):
    """(shared-memory bytes, accumulator registers per thread) of a CTA computing a (BM, BN) tile of C with
    `threads` threads: `stages` buffers of a (BM, BK) tile of A and a (BK, BN) tile of B, and the (BM, BN)
    accumulators spread evenly over the threads, one 32-bit register per 4 bytes.

    e.g. tc_sm80's 128x128x32, 3 stages, 256 threads: (49152, 64).
    """
    _positive("tile_budget", BM=BM, BN=BN, BK=BK, stages=stages, threads=threads, in_bytes=in_bytes,
              acc_bytes=acc_bytes)
    smem = stages * (BM * BK + BK * BN) * in_bytes
    regs = BM * BN * acc_bytes // (4 * threads)
    return smem, regs


# ---- arithmetic intensity -----------------------------------------------------------------------------
def ai_dram(M, N, K, in_bytes, out_bytes=4):
    """FLOPs per byte if A and B were read from DRAM once and C written once: 2MNK / bytes (the best any
    kernel can do; the compulsory traffic)."""
    _positive("ai_dram", M=M, N=N, K=K, in_bytes=in_bytes, out_bytes=out_bytes)
    return 2.0 * M * N * K / ((M * K + K * N) * in_bytes + M * N * out_bytes)


def ai_global(BM, BN, in_bytes):
    """FLOPs per byte a CTA tile of (BM, BN) gets from global memory (L2 or DRAM): per k it loads BM + BN
    elements and does 2 BM BN FLOPs. (1, 1): one thread per output reading A and B itself."""
    _positive("ai_global", BM=BM, BN=BN, in_bytes=in_bytes)
    return 2.0 * BM * BN / ((BM + BN) * in_bytes)


def ai_shared(TM, TN, in_bytes):
    """FLOPs per byte a (TM, TN) block of outputs held in registers (a thread's, or a warp's for the
    tensor-core kernels) gets from shared memory: per k, TM + TN elements in, 2 TM TN FLOPs."""
    _positive("ai_shared", TM=TM, TN=TN, in_bytes=in_bytes)
    return 2.0 * TM * TN / ((TM + TN) * in_bytes)


# ---- the GEMM article (huang2025gemm2) ---------------------------------------------------------------
ARTICLE_CPP = {
    # What C++ CuTe prints (tests/fixtures/seed003_cpp.txt, made by tests/fixtures/gen_seed003.sh) for the
    # article's TiledCopy: Copy_Atom<UniversalCopy<uint128_t>, float>, threads (16,4), values (4,1), over
    # A (1024, 8192) column-major with run-time extents, gA = local_tile(A, (64,16), (0,_)), sA (64,16).
    "gA": "(_64,_16,512):(_1,1024,16384)",
    "thread 0 tAgA": "((_4,_1),_1,_4,512):((_1,_0),_0,4096,16384)",
    "thread 0 tAsA": "((_4,_1),_1,_4):((_1,_0),_0,_256)",
    "thread 17 tAgA offset": "1028",
    "thread 17 tAsA offset": "68",
    "naive thread 5 tAgA": "(_1,_16,512):(_0,1024,16384)",
}

# The article's optimisation table: (problem, its current state, its suggestion, priority), and which two
# kernels of the ladder measure that suggestion (before, after), or None where the ladder has no such pair.
ARTICLE_TABLE = [
    ("GMEM access", "one element per load", "vector loads (float4) + cp.async", "high",
     ("simt 5: 2-D blocking 8x8", "simt 6: 128-bit loads")),
    ("bank conflicts", "2-way conflict", "padding or swizzle", "high",
     ("simt 6: 128-bit loads", "simt 6b: padded smem")),
    ("threads", "64 (too few)", "128-256", "high", ("tc sm80 + k-block prefetch", "tc sm80 pf 128x256x32 4st")),
    ("BK", "16 (small)", "32-64", "medium", ("tc sm80 pf 128x128x32 3st", "tc sm80 pf 128x128x64 3st")),
    ("register use", "implicit", "explicit register blocking", "medium",
     ("simt 3: smem tiles", "simt 5: 2-D blocking 8x8")),
    ("pipeline", "single buffer", "double buffering hides latency", "medium",
     ("simt 6: 128-bit loads", "simt 7: dbuf + warp tiles")),
]


def article_table_rows(tflops):
    """The article's table as rows (problem, suggestion, before kernel, TFLOP/s, after kernel, TFLOP/s,
    speed-up), TFLOP/s looked up in `tflops` (name -> value or None)."""
    if not isinstance(tflops, dict):
        raise TypeError(f"article_table_rows: tflops must be a dict (kernel name -> TFLOP/s), got {quote(tflops)}")
    rows = []
    for problem, _, suggestion, _, pair in ARTICLE_TABLE:
        if pair is None:
            rows.append((problem, suggestion, "-", None, "-", None, None))
            continue
        b, a = (tflops.get(n) for n in pair)
        rows.append((problem, suggestion, pair[0], b, pair[1], a, a / b if a and b else None))
    return rows


# ---- figures ------------------------------------------------------------------------------------------
def draw_ladder(results, baseline, highlight=None, ceiling=None, title=None, ax=None):
    """The running bar chart: one horizontal bar per kernel measured so far (results: list of (name, TFLOP/s
    or None, dtype[, why there is no figure])), blue for fp32 SIMT, orange for fp16 tensor cores, `highlight`
    outlined; cuBLAS (baseline: dtype -> TFLOP/s or None) and the mma.sync ceiling as vertical lines. Log
    scale."""
    import matplotlib.pyplot as plt
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 0.42 * max(len(results), 3) + 1.4))
    colours = {"f32": "tab:blue", "f16": "tab:orange"}
    ys = list(range(len(results)))[::-1]
    for y, (name, tf, dt, *why) in zip(ys, results):
        if tf is None:
            ax.text(0.6, y, why[0] if why else "no figure", va="center", fontsize=8, color="gray")
            continue
        ax.barh(y, tf, color=colours[dt], edgecolor="k" if name == highlight else "none",
                linewidth=2 if name == highlight else 0)
        ax.text(tf * 1.08, y, "%.1f" % tf, va="center", fontsize=8)
    for dt, tf in (baseline or {}).items():
        if tf:
            ax.axvline(tf, color=colours[dt], ls="--", lw=1, label="cuBLAS %s %.0f" % ({"f32": "fp32", "f16": "fp16"}[dt], tf))
    if ceiling:
        ax.axvline(ceiling, color="k", ls=":", lw=1, label="mma.sync ceiling %.0f" % ceiling)
    ax.set_yticks(ys)
    ax.set_yticklabels([r[0] for r in results], fontsize=8)
    ax.set_xscale("log")
    ax.set_xlim(0.2, 2000)
    ax.set_xlabel("TFLOP/s (log scale)")
    if title:
        ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    return ax


def draw_roofline(points, dram_tbs, smem_tbs, roofs, ax=None, title=None):
    """A roofline: bandwidth lines for DRAM and shared memory (TB/s; None leaves one out), horizontal
    compute roofs (label -> TFLOP/s; a roof without a figure is named in the legend as such), and points
    (label, FLOP/byte, TFLOP/s, marker) of the kernels."""
    import matplotlib.pyplot as plt
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 5))
    xs = [10 ** (e / 10) for e in range(-10, 41)]
    top = max((tf for tf in roofs.values() if tf), default=1000)
    for tbs, name, style in ((dram_tbs, "DRAM", "-"), (smem_tbs, "shared memory", "-.")):
        if tbs:
            ax.plot(xs, [min(x * tbs, top * 1.5) for x in xs], "k" + style, lw=1,
                    label="%s %.1f TB/s x FLOP/byte" % (name, tbs))
    for i, (name, tf) in enumerate(roofs.items()):
        if tf:
            ax.axhline(tf, color="C%d" % (i + 3), ls="--", lw=1, label="%s %.0f" % (name, tf))
        else:
            ax.plot([], [], " ", label="%s: no figure" % name)
    for label, ai, tf, marker in points:
        if tf and ai:
            ax.plot([ai], [tf], marker, ms=7)
            ax.annotate(label, (ai, tf), fontsize=7, xytext=(4, 2), textcoords="offset points")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel("TFLOP/s")
    if title:
        ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    return ax
