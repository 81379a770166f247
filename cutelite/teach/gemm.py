"""Chapter 7's arithmetic and pictures: what a tiled GEMM costs in shared memory and registers, how many
CTAs of it an SM holds, what its shared-memory copies cost in bank wavefronts, how many FLOPs it gets per
byte at each level of memory, the GEMM article's C++ printouts (checked in chapter 6) and its optimisation
table (measured in chapter 7) (Huang, "GEMM 优化2: GMEM、SMEM 内存访问优化", 2025: book/references.bib,
huang2025gemm2), and the chapter's two figures (the running bar chart of the ladder, the roofline).
Standard library only, except the figures (matplotlib, imported inside).
"""

from ..bank_conflicts import ldmatrix_wavefronts, wavefronts
from ..errors import quote
from ..int_tuple import flatten, wrap
from ..layout import ComposedLayout, _, get, size
from .records import load

__all__ = ["tile_budget", "smem_wavefronts", "SM_LIMITS", "cta_limits", "occupancy", "recorded_registers",
           "STAGE_STATES", "stage_timeline",
           "ai_dram", "ai_global", "ai_shared", "ARTICLE_CPP", "ARTICLE_TABLE", "article_table_rows", "draw_ladder",
           "draw_roofline"]


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


# ---- what the kernel's shared-memory copies cost --------------------------------------------------------
def _walk(layout):
    """layout(i) for i = 0 .. size(layout) - 1 (a Layout with int strides), by walking its flattened modes, the
    first fastest: what evaluating it at each index gives, without checking each coordinate."""
    offsets = [0]
    for n, d in zip(flatten(wrap(layout.shape)), flatten(wrap(layout.stride))):
        offsets = [o + i * int(d) for i in range(int(n)) for o in offsets]
    return offsets


def smem_wavefronts(o, swizzled=True, warp=0):
    """Shared-memory cost of one k-tile for one warp of a tensor-core kernel built from `o` (a
    cutelite.tensorcore.TensorCore), from the kernel's own partitions and chapter 4's bank model:
    {"A: 16-byte writes", "A: ldmatrix", "B: 16-byte writes", "B: ldmatrix"} -> (instructions, wavefronts,
    ideal wavefronts). swizzled=False: the same tiles without their Swizzle.

    Each copy's thread-value layout over one stage (tidfrg: (thread, value, (rest M, rest K)) -> offset) is
    computed once; a lane's address in call (i, k) is the offset of its first value there, through the
    stage's swizzle: what partition_S / partition_D of the lane's slice give, without slicing 32 times.
    """
    from ..tensorcore import TensorCore
    if not isinstance(o, TensorCore):
        raise TypeError(f"smem_wavefronts: expected a TensorCore (cutelite.tensorcore.objects), got {quote(o)}")
    out = {}
    for op, smem, g2s, s2r in (("A", o.sA, o.g2s_A, o.s2r_A), ("B", o.sB, o.g2s_B, o.s2r_B)):
        swizzle = smem.layout_a if swizzled and isinstance(smem, ComposedLayout) else (lambda offset: offset)
        stage = (smem.layout_b if isinstance(smem, ComposedLayout) else smem)(_, _, 0)
        nbytes = g2s.atom.bits // 8
        for what, frg, cost in (("16-byte writes", g2s.tidfrg_D(stage), lambda a: wavefronts(a, 16, store=True)),
                                ("ldmatrix", s2r.tidfrg_S(stage), ldmatrix_wavefronts)):
            lanes = _walk(get(frg, 0))[32 * warp:32 * warp + 32]
            reports = [cost([nbytes * int(swizzle(lane + call)) for lane in lanes]) for call in _walk(get(frg, 2))]
            out[f"{op}: {what}"] = (len(reports), sum(r.wavefronts for r in reports), sum(r.ideal for r in reports))
    return out


# ---- how many CTAs an SM holds ---------------------------------------------------------------------------
# Per-SM limits of three GPUs: the CUDA C++ Programming Guide's technical specifications per compute
# capability (book/references.bib, cuda_programming_guide) for 7.5 (T4), 8.0 (A100) and 9.0 (H100): resident
# CTAs, warps and 32-bit registers per SM, registers per thread, shared memory per SM and the most a CTA may
# opt in to (above 48 KiB a kernel must ask for it, as kernels.runtime.allow_dynamic_shared does). From 8.0
# on, the 1 KiB between the two is reserved by the system for every CTA. The allocation rules are those of
# the CUDA Occupancy Calculator (the toolkit's cuda_occupancy.h, cuda_occupancy_h): registers go to a warp in
# units of 256, within each of an SM's 4 sub-partitions; shared memory in units of 256 bytes (7.x) or 128
# (8.x, 9.x); the default carveout gives the SM its largest shared memory.
SM_LIMITS = {
    "T4": {"cc": "7.5", "ctas": 16, "warps": 32, "registers": 65536, "max_regs": 255, "smem": 64 * 1024,
           "smem_per_cta": 64 * 1024, "smem_reserved": 0, "smem_unit": 256},
    "A100": {"cc": "8.0", "ctas": 32, "warps": 64, "registers": 65536, "max_regs": 255, "smem": 164 * 1024,
             "smem_per_cta": 163 * 1024, "smem_reserved": 1024, "smem_unit": 128},
    "H100": {"cc": "9.0", "ctas": 32, "warps": 64, "registers": 65536, "max_regs": 255, "smem": 228 * 1024,
             "smem_per_cta": 227 * 1024, "smem_reserved": 1024, "smem_unit": 128},
}
REGISTER_UNIT, SUB_PARTITIONS = 256, 4
SMEM_PER_CTA_DEFAULT = 48 * 1024   # what a CTA may use on every one of them without opting in


def _sm(sm):
    if isinstance(sm, str) and sm in SM_LIMITS:
        return SM_LIMITS[sm]
    if isinstance(sm, dict):
        return sm
    raise ValueError(f"cta_limits: unknown GPU {quote(sm)}; known: {', '.join(SM_LIMITS)}")


def cta_limits(regs, threads, smem, sm="H100"):
    """{limit: CTAs per SM it allows} for a kernel of `threads` threads a CTA, `smem` bytes of shared memory a
    CTA and `regs` registers a thread (None: not known, no register limit), on a GPU of SM_LIMITS (its name or
    its dict): "registers", "shared memory", "warps", "CTAs". A limit of 0 means the CTA does not fit.

    Post: as cuda_occupancy.h computes it (the default carveout; no barrier or cluster limits).
    """
    _positive("cta_limits", threads=threads)
    g = _sm(sm)
    if not isinstance(smem, int) or isinstance(smem, bool) or smem < 0:
        raise ValueError(f"cta_limits: smem must be an int >= 0 (bytes), got {quote(smem)}")
    warps = -(-threads // 32)
    need = -(-(smem + g["smem_reserved"]) // g["smem_unit"]) * g["smem_unit"]
    limits = {}
    if regs is not None:
        _positive("cta_limits", regs=regs)
        per_warp = -(-regs * 32 // REGISTER_UNIT) * REGISTER_UNIT
        ok = regs <= g["max_regs"] and per_warp * -(-warps // SUB_PARTITIONS) * SUB_PARTITIONS <= g["registers"]
        limits["registers"] = SUB_PARTITIONS * (g["registers"] // SUB_PARTITIONS // per_warp) // warps if ok else 0
    limits["shared memory"] = (0 if need > g["smem_per_cta"] + g["smem_reserved"] else
                               g["smem"] // need if need else g["ctas"])      # none at all: no limit of its own
    limits["warps"] = g["warps"] // warps if warps <= 32 else 0
    limits["CTAs"] = g["ctas"]
    return limits


def occupancy(regs, threads, smem, sm="H100"):
    """(CTAs per SM, warps per SM, the limit that decides) for a kernel using `regs` registers per thread,
    `threads` per CTA and `smem` bytes of shared memory per CTA, on a GPU of SM_LIMITS (cta_limits)."""
    limits = cta_limits(regs, threads, smem, sm)
    what = min(limits, key=limits.get)
    return limits[what], limits[what] * -(-threads // 32), what


def recorded_registers(kernel, BM, BN, BK, stages, warps, min_blocks):
    """Registers per thread of chapter 7's kernel `kernel` ("tc_sm80", ...) built with this tile, stages, warps
    (m, n) and least CTAs an SM (its launch bounds), fp16 in, A K-major, B N-major, in the H100's SASS that
    chapter 7's record holds (kernels/gemm/records.json: "configs" says how each recorded kernel was built);
    None where no recorded kernel was built so."""
    record = load("kernels/gemm")
    want = dict(kernel=kernel, BM=BM, BN=BN, BK=BK, stages=stages, warps=tuple(warps), min_blocks=min_blocks)
    name = next((n for n, config in record["configs"].items() if config == want), None)
    return next((regs for n, _, _, regs in record["rows"] if n == name), None)


# ---- what each stage holds while the main loop runs ------------------------------------------------------
STAGE_STATES = {
    "read": "read by ldmatrix for this iteration's mma",
    "issued": "its copy issued in this column",
    "in flight": "copied earlier; cp.async.wait_group guarantees it has landed only when it is read",
    "loading": "ld.global in flight into registers",
    "stored": "stored from registers (st.shared) at the end of this column, after a barrier",
}


def stage_timeline(kernel, stages, k_tiles):
    """Where the k-tiles are while chapter 7's kernel `kernel` ("tc_sm80", "tc_sm80_prefetch" or "tc_sm75")
    computes `k_tiles` k-tiles: a list of rows (name, cells), one cell per column ("before the loop", then
    iteration kt = 0 .. k_tiles - 1), each (k-tile, state of STAGE_STATES) or None (nothing).

    The cp.async kernels (`stages` buffers) issue k-tiles 0 .. stages - 2 before the loop; iteration kt reads
    stage kt % stages and refills the stage k-tile kt - 1 was read from with k-tile kt + stages - 1 (the
    prefetch kernel does the same per k-tile; it only reads each k-block's fragments one k-block ahead).
    tc_sm75 has two buffers and no cp.async: iteration kt loads k-tile kt + 1 into registers, computes from
    buffer kt % 2 and stores k-tile kt + 1 into the other buffer at its end.

    Post: in iteration kt, k-tile kt is "read" from stage kt % stages (cp.async kernels; kt % 2 for tc_sm75).
    """
    if kernel not in ("tc_sm80", "tc_sm80_prefetch", "tc_sm75"):
        raise ValueError(f"stage_timeline: unknown kernel {quote(kernel)}; known: tc_sm75, tc_sm80, tc_sm80_prefetch")
    for name, n, top in (("stages", stages, 64), ("k_tiles", k_tiles, 1024)):
        if not isinstance(n, int) or isinstance(n, bool):
            raise TypeError(f"stage_timeline: {name} must be an int, got {quote(n)} ({type(n).__name__})")
        if not 0 < n <= top:
            raise ValueError(f"stage_timeline: {name} must be from 1 to {top}, got {quote(n)}")
    real = lambda j, state: (j, state) if j < k_tiles else None      # noqa: E731
    if kernel == "tc_sm75":
        regs = [None] + [real(kt + 1, "loading") for kt in range(k_tiles)]
        bufs = [[real(0, "stored") if b == 0 else None] for b in range(2)]
        for kt in range(k_tiles):
            for b in range(2):
                bufs[b].append((kt, "read") if kt % 2 == b else real(kt + 1, "stored"))
        return [("registers", regs)] + [(f"buffer {b}", bufs[b]) for b in range(2)]
    if stages < 2:
        raise ValueError(f"stage_timeline: a cp.async pipeline needs 2 stages or more (it waits with "
                         f"cp.async.wait_group stages - 2), got {stages}")
    rows = []
    for s in range(stages):
        cells = [real(s, "issued") if s < stages - 1 else None]
        for kt in range(k_tiles):
            j = kt + (s - kt) % stages                   # the k-tile in stage s: kt <= j < kt + stages
            cells.append(real(j, "read" if j == kt else "issued" if j == kt + stages - 1 else "in flight"))
        rows.append((f"stage {s}", cells))
    return rows


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
