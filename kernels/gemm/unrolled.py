"""Straight-line device functions for a warp's register tile, written out as Python source.

Numba keeps a local array in registers only when every index is a constant once LLVM has unrolled the
loops around it; a 64x64 warp tile (32 mma per k-step, 128 accumulators) is past LLVM's unrolling budget,
and the accumulators then live in local memory. So, as `kernels.layout_codegen` does for layouts, we
write the unrolled code out as source: accumulators and fragments are tuples, every index is a literal,
and nothing can end up in memory.

    >>> print(mma_tile_source(1, 2, "mma"), end="")
    def mma_tile(fa, fb, acc):
        d0 = mma((fa[0], fa[1], fa[2], fa[3]), (fb[0], fb[1]), (acc[0], acc[1], acc[2], acc[3]))
        d1 = mma((fa[0], fa[1], fa[2], fa[3]), (fb[2], fb[3]), (acc[4], acc[5], acc[6], acc[7]))
        return (d0[0], d0[1], d0[2], d0[3], d1[0], d1[1], d1[2], d1[3])

Each function's source is kept in `.source` (the chapter prints them).
"""

import linecache

from numba import cuda

_count = [0]


def _compile(src, name, env):
    """exec `src` (defining `name`) with `env` as globals; a device function inlined into its caller."""
    _count[0] += 1
    filename = "<unrolled %s #%d>" % (name, _count[0])
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    namespace = dict(env)
    exec(compile(src, filename, "exec"), namespace)
    fn = cuda.jit(device=True, inline="always")(namespace[name])
    fn.source = src
    return fn


def _tuple(items):
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def zeros_source(n):
    return "def zeros():\n    z = float32(0.0)\n    return %s\n" % _tuple(["z"] * n)


def zeros(n):
    """zeros() -> a tuple of n float32 zeros (the accumulators' start)."""
    import numpy as np
    return _compile(zeros_source(n), "zeros", {"float32": np.float32})


def mma_tile_source(MT, NT, mma_name="mma", ka=4, kb=2, steps=1):
    """mma_tile(fa, fb, acc): the MT x NT m16n8 tiles of a warp, acc[4 (NT mt + nt) + j] +=
    A fragment mt (ka registers) x B fragment nt (kb registers), in `steps` k-slices per fragment
    (steps=2 with m16n8k8: registers ka/2 of A and kb/2 of B per slice)."""
    lines = ["def mma_tile(fa, fb, acc):"]
    cur = ["acc[%d]" % i for i in range(4 * MT * NT)]
    d = 0
    sa, sb = ka // steps, kb // steps
    for h in range(steps):
        for mt in range(MT):
            for n in range(NT):
                nt = n if mt % 2 == 0 else NT - 1 - n       # serpentine: neighbours share a fragment
                o = 4 * (NT * mt + nt)
                a = _tuple(["fa[%d]" % (ka * mt + sa * h + j) for j in range(sa)])
                b = _tuple(["fb[%d]" % (kb * nt + sb * h + j) for j in range(sb)])
                lines.append("    d%d = %s(%s, %s, %s)" % (d, mma_name, a, b, _tuple(cur[o:o + 4])))
                cur[o:o + 4] = ["d%d[%d]" % (d, j) for j in range(4)]
                d += 1
    lines.append("    return " + _tuple(cur))
    return "\n".join(lines) + "\n"


def mma_tile(mma, MT, NT, ka=4, kb=2, steps=1):
    """The device function of mma_tile_source, calling the intrinsic `mma`."""
    return _compile(mma_tile_source(MT, NT, "mma", ka, kb, steps), "mma_tile", {"mma": mma})


def load_frags_source(n, fop, step, sop):
    """load(arr, base, fo, s): n ldmatrix.x4, fragment i at element offset base + ((fo `fop` step * i)
    `sop` s), their registers concatenated. fo: this lane's offset of fragment 0 at k-step 0; s: the
    k-step's term. `fop`, `sop`: "+" or "^" (a swizzled tile moves by XOR inside one 128-byte row)."""
    lines = ["def load(arr, base, fo, s):"]
    for i in range(n):
        o = "fo" if i == 0 else "(fo %s %d)" % (fop, step * i)
        lines.append("    f%d = ld(arr, base + (%s %s s))" % (i, o, sop))
    lines.append("    return " + _tuple(["f%d[%d]" % (i, j) for i in range(n) for j in range(4)]))
    return "\n".join(lines) + "\n"


def load_frags(ld, n, fop, step, sop):
    return _compile(load_frags_source(n, fop, step, sop), "load", {"ld": ld})


def ktile_source(steps, a_step, b_step):
    """ktile(arr, a, b, fa0, fb0, acc): the `steps` k-steps of one k-tile, each reading its fragments
    (load_a / load_b at k-step terms a_step s, b_step s) and running the warp tile's mma."""
    lines = ["def ktile(arr, a, b, fa0, fb0, acc):"]
    for s in range(steps):
        lines.append("    acc = mma_tile(load_a(arr, a, fa0, %d), load_b(arr, b, fb0, %d), acc)"
                     % (a_step * s, b_step * s))
    lines.append("    return acc")
    return "\n".join(lines) + "\n"


def ktile(load_a, load_b, mma_tile, steps, a_step, b_step):
    """The device function of ktile_source: a k-tile straight-line, however many k-steps it has."""
    return _compile(ktile_source(steps, a_step, b_step), "ktile",
                    {"load_a": load_a, "load_b": load_b, "mma_tile": mma_tile})


def store_c_source(MT, NT):
    """store(C, r, c, acc): lane's accumulators of the MT x NT m16n8 tiles to C (f32): value j of tile
    (mt, nt) is element (r + 16 mt + 8 (j // 2), c + 8 nt + j % 2), r and c this lane's first row and
    column (the m16n8 C fragment: row lane // 4, column 2 (lane % 4))."""
    lines = ["def store(C, r, c, acc):"]
    for mt in range(MT):
        for nt in range(NT):
            for j in range(4):
                lines.append("    C[r + %d, c + %d] = acc[%d]" % (16 * mt + 8 * (j // 2), 8 * nt + j % 2,
                                                                  4 * (NT * mt + nt) + j))
    return "\n".join(lines) + "\n"


def store_c(MT, NT):
    return _compile(store_c_source(MT, NT), "store", {})


def outer_products_source(BK, a_row, b_row, a_gap, b_gap):
    """steps(sA, sB, a, b, acc): BK rank-1 updates of a thread's 8x8 fp32 block, straight-line.
    At step k the thread reads A^T[k, a .. a + 3] and [a + a_gap ...] (two ld.shared.v4: its 8 rows) and
    B[k, b .. b + 3], [b + b_gap ...] (its 8 columns); row k starts k * a_row (k * b_row) further on;
    acc[8 i + j] += A row i x B column j."""
    lines = ["def steps(sA, sB, a, b, acc):"]
    cur = ["acc[%d]" % i for i in range(64)]
    for k in range(BK):
        lines.append("    x0 = ld_a(sA, a + %d)" % (k * a_row))
        lines.append("    x1 = ld_a(sA, a + %d)" % (k * a_row + a_gap))
        lines.append("    y0 = ld_b(sB, b + %d)" % (k * b_row))
        lines.append("    y1 = ld_b(sB, b + %d)" % (k * b_row + b_gap))
        for i in range(8):
            for j in range(8):
                v = "c%d_%d" % (k, 8 * i + j)
                lines.append("    %s = %s + x%d[%d] * y%d[%d]" % (v, cur[8 * i + j], i // 4, i % 4, j // 4, j % 4))
                cur[8 * i + j] = v
    lines.append("    return " + _tuple(cur))
    return "\n".join(lines) + "\n"


def outer_products(ld, BK, a_row, b_row, a_gap, b_gap):
    return _compile(outer_products_source(BK, a_row, b_row, a_gap, b_gap), "steps", {"ld_a": ld, "ld_b": ld})


def ktile_streamed_source(MT, NT, a_at, b_at):
    """ktile(arr, pa, pb, acc): the mma of one k-tile, k-step by k-step: A's MT fragments (ldmatrix.x4),
    then B in pairs of n-tiles, each pair's ldmatrix.x4 followed by its 2 MT mma (B is never held whole:
    4 registers at a time). a_at[s][i] = (c, imm): fragment i of k-step s is at address pa[c] + imm
    bytes; b_at[s][j] likewise for the pair j (n-tiles 2j, 2j + 1) from pb. acc as in mma_tile."""
    lines = ["def ktile(arr, pa, pb, acc):"]
    cur = ["acc[%d]" % i for i in range(4 * MT * NT)]
    d = 0
    for s, (arow, brow) in enumerate(zip(a_at, b_at)):
        for i, (c, imm) in enumerate(arow):
            lines.append("    a%d_%d = ld_a(arr, pa[%d], %d)" % (s, i, c, imm))
        for j, (c, imm) in enumerate(brow):
            lines.append("    b%d_%d = ld_b(arr, pb[%d], %d)" % (s, j, c, imm))
            for mt in range(MT):
                for h in ((0, 1) if mt % 2 == 0 else (1, 0)):        # serpentine
                    o = 4 * (NT * mt + 2 * j + h)
                    a = _tuple(["a%d_%d[%d]" % (s, mt, q) for q in range(4)])
                    b = _tuple(["b%d_%d[%d]" % (s, j, 2 * h + q) for q in range(2)])
                    lines.append("    d%d = mma(%s, %s, %s)" % (d, a, b, _tuple(cur[o:o + 4])))
                    cur[o:o + 4] = ["d%d[%d]" % (d, q) for q in range(4)]
                    d += 1
    lines.append("    return " + _tuple(cur))
    return "\n".join(lines) + "\n"


def ktile_streamed(mma, ld_a, ld_b, MT, NT, a_at, b_at):
    return _compile(ktile_streamed_source(MT, NT, a_at, b_at), "ktile", {"mma": mma, "ld_a": ld_a, "ld_b": ld_b})


def offsets_source(n):
    """offsets(base, rel): (uint32(base + rel[0]), ..., uint32(base + rel[n - 1])): 32-bit addresses."""
    return "def offsets(base, rel):\n    return %s\n" % _tuple(["uint32(base + rel[%d])" % i for i in range(n)])


def offsets(n):
    import numpy as np
    return _compile(offsets_source(n), "offsets", {"uint32": np.uint32})


def at_each_source(points, scale):
    """at_each(lane, w): (uint32(scale * f(i, s, lane, w)) for (i, s) in points): byte offsets."""
    return "def at_each(lane, w):\n    return %s\n" % _tuple(
        ["uint32(%d * f(%d, %d, lane, w))" % (scale, i, s) for i, s in points])


def at_each(f, points, scale=2):
    import numpy as np
    return _compile(at_each_source(points, scale), "at_each", {"uint32": np.uint32, "f": f})
