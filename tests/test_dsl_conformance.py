"""cutelite against NVIDIA's CuTe DSL (nvidia-cutlass-dsl): the same objects built in both, compared as
functions, and the DSL's printed text predicted.

Every case is one Python function of a module `cute`, run twice: with `cute = cutelite.dsl` (cutelite
under the DSL's names) and with `cute = cutlass.cute` inside a DSL trace (kernels.dsl.trace, host code,
no GPU). The inputs of the layout cases are the static inputs of the C++ oracle (tests/oracle/cases, a
fixed sample of each op); then swizzled layouts, MMA atoms, TiledMMAs (TV layouts and partitions) and
TiledCopys (TV layouts, partitions, retile). Each result is compared

  * as a function: the offset at every 1-D index (a layout), the value (an int or a tuple);
  * as text: cutelite.dsl.pretty_str(ours) must be what the DSL prints, or else the difference is one
    chapter 9 describes: the DSL unwraps singleton modes and regroups some products (the same function,
    grouped differently), and gives some modes of extent 1 another stride;
  * as a refusal: where the DSL refuses an input, the refusal must be one chapter 9 documents, and
    cutelite.dsl must refuse it too.

Without the DSL (no wheel for this platform, or not installed) the module is skipped with the reason.
"""

import json
import os
from collections import Counter

import pytest

import cutelite.dsl as ours
from kernels.dsl import missing, trace

WHY = missing()
if WHY:
    pytest.skip(WHY, allow_module_level=True)

import cutlass.cute as theirs  # noqa: E402

CASES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle", "cases")
PER_OP = 12          # static cases taken from each oracle file (an even sample, always the same)
SAMPLE = 48          # 1-D indices at which a layout is evaluated in both (evenly spread, the last included)
# What the DSL refuses that C++ accepts, as its messages say it (chapter 9 teaches each).
DOCUMENTED_REFUSALS = ("must be a Value", "cotarget", "takes 1 positional argument")
# Where the DSL differs from C++ (and so from cutelite) on a case of the sample: the verdict's start, and why.
KNOWN = {
    "left_inverse/static-0070": "functions differ: left_inverse(12:0) is 12:0 in C++ and 1:0 in the DSL "
                                "(a layout that is not injective has no left inverse; the two answer differently)",
    "swizzle_layout/static-0160": "texts differ: the DSL prints S<3,3,-3 o 0 o ..., without the > of a swizzle "
                                  "with a negative shift",
}


# ---- the oracle's inputs as plain tuples ---------------------------------------------------------------
def _tuple(v):
    if isinstance(v, list):
        return tuple(_tuple(e) for e in v)
    return None if v == "_" else v


def _layout_args(j):
    return _tuple(j["shape"]), _tuple(j["stride"])


def _tiler(j):
    """("layout", shape, stride) or a tuple of ints / None / layouts."""
    if isinstance(j, dict):
        return ("layout",) + _layout_args(j)
    return tuple(e if isinstance(e, int) else _tuple(e["value"]) if "value" in e else ("layout",) + _layout_args(e)
                 for e in j)


def _is_static(args):
    text = json.dumps(args)
    return '"dyn": {"shape": [], "stride": []}' in text and '"dyn": [1' not in text and '"dyn": [0' not in text


def oracle_cases():
    out = []
    for fn in sorted(os.listdir(CASES_DIR)):
        op = fn[:-5]
        if op not in BUILD:
            continue
        with open(os.path.join(CASES_DIR, fn)) as f:
            cases = [c for c in json.load(f) if "static" in c["id"] and "error" not in c and _is_static(c["args"])]
        step = max(1, len(cases) // PER_OP)
        out += [(op, c["id"], c["args"]) for c in cases[::step][:PER_OP]]
    return out


# ---- building a case with either module -------------------------------------------------------------------
def L(cute, spec):
    return cute.make_layout(spec[0], stride=spec[1])


def T(cute, tiler):
    if isinstance(tiler, tuple) and tiler and tiler[0] == "layout":
        return cute.make_layout(tiler[1], stride=tiler[2])
    if isinstance(tiler, tuple):
        return tuple(T(cute, t) for t in tiler)
    return tiler


def _binary(name):
    return lambda cute, a: getattr(cute, name)(L(cute, _layout_args(a["layout"])), T(cute, _tiler(a["tiler"])))


BUILD = {
    "make_layout": lambda cute, a: L(cute, _layout_args(a["layout"])),
    "make_layout_left": lambda cute, a: cute.make_layout(_tuple(a["shape"]["shape"])),
    "make_ordered_layout": lambda cute, a: cute.make_ordered_layout(_tuple(a["shape"]["shape"]),
                                                                    order=_tuple(a["order"]["value"])),
    "make_layout_like": lambda cute, a: cute.make_layout_like(L(cute, _layout_args(a["layout"]))),
    "make_fragment_like": lambda cute, a: cute.make_fragment_like(L(cute, _layout_args(a["layout"]))),
    "coalesce": lambda cute, a: cute.coalesce(L(cute, _layout_args(a["layout"]))),
    "coalesce_profile": lambda cute, a: cute.coalesce(L(cute, _layout_args(a["layout"])),
                                                      target_profile=_tuple(a["profile"]["value"])),
    "filter": lambda cute, a: cute.filter(L(cute, _layout_args(a["layout"]))),
    "composition": lambda cute, a: cute.composition(L(cute, _layout_args(a["a"])), L(cute, _layout_args(a["b"]))),
    "composition_tiler": lambda cute, a: cute.composition(L(cute, _layout_args(a["a"])), T(cute, _tiler(a["tiler"]))),
    "complement": lambda cute, a: cute.complement(L(cute, _layout_args(a["layout"]))),
    "complement_cotarget": lambda cute, a: cute.complement(L(cute, _layout_args(a["layout"])),
                                                           _tuple(a["cotarget"]["value"])),
    "right_inverse": lambda cute, a: cute.right_inverse(L(cute, _layout_args(a["layout"]))),
    "left_inverse": lambda cute, a: cute.left_inverse(L(cute, _layout_args(a["layout"]))),
    "max_common_vector": lambda cute, a: cute.max_common_vector(L(cute, _layout_args(a["a"])),
                                                                L(cute, _layout_args(a["b"]))),
    "max_common_layout": lambda cute, a: cute.max_common_layout(L(cute, _layout_args(a["a"])),
                                                                L(cute, _layout_args(a["b"]))),
    "upcast": lambda cute, a: cute.recast_layout(8 * a["n"], 8, L(cute, _layout_args(a["layout"]))),
    "downcast": lambda cute, a: cute.recast_layout(8, 8 * a["n"], L(cute, _layout_args(a["layout"]))),
    "slice": lambda cute, a: cute.slice_(L(cute, _layout_args(a["layout"])), _tuple(a["coord"]["value"])),
    "crd2idx": lambda cute, a: cute.crd2idx(_tuple(a["coord"]["value"]), L(cute, _layout_args(a["layout"]))),
    "idx2crd": lambda cute, a: cute.idx2crd(_tuple(a["index"]["value"]), _tuple(a["shape"]["shape"])),
    "swizzle_layout": lambda cute, a: cute.make_composed_layout(cute.make_swizzle(*a["swizzle"]), 0,
                                                                L(cute, _layout_args(a["layout"]))),
    "tile_to_shape": lambda cute, a: cute.tile_to_shape(
        L(cute, _layout_args(a["block"])), _tuple(a["shape"]["shape"]), _mode_order(a)),
}
BUILD.update({name: _binary(name) for name in (
    "logical_divide", "zipped_divide", "tiled_divide", "flat_divide", "logical_product", "zipped_product",
    "tiled_product", "flat_product", "blocked_product", "raked_product")})


def _mode_order(a):
    r = len(_tuple(a["shape"]["shape"])) if isinstance(a["shape"]["shape"], list) else 1
    if a["order"] is None:
        return tuple(range(r))
    if a["order"] == "right":
        return tuple(range(r))[::-1]
    return _tuple(a["order"]["value"])


# ---- what a result is, as plain data ------------------------------------------------------------------------
def _sample(n):
    if n <= SAMPLE:
        return list(range(n))
    return sorted({(i * (n - 1)) // (SAMPLE - 1) for i in range(SAMPLE)})


def snap(cute, x):
    """A result as plain data: an int or a tuple as itself; a layout as its text, size, the sizes of its
    top-level modes and the offsets at SAMPLE indices (evaluated by the module that built it)."""
    if isinstance(x, (int, tuple)) and not hasattr(x, "shape"):
        return {"value": _plain(x)}
    n = int(cute.size(x))
    return {"text": cute.pretty_str(x) if cute is ours else str(x), "size": n,
            "modes": [int(cute.size(x, mode=[i])) for i in range(int(cute.rank(x)))],
            "offsets": [int(x(i)) for i in _sample(n)]}


def _plain(v):
    return tuple(_plain(e) for e in v) if isinstance(v, tuple) else int(v)


def run_ours(build, *args):
    try:
        return snap(ours, build(ours, *args))
    except (TypeError, ValueError) as e:
        return {"refused": f"{type(e).__name__}: {e}"}


def run_theirs(cases):
    """Every case in one DSL trace: [(snap or refusal)]."""
    def work():
        out = []
        for build, args in cases:
            try:
                out.append(snap(theirs, build(theirs, *args)))
            except Exception as e:  # noqa: BLE001 - the DSL's own exception types vary
                out.append({"refused": f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"})
        return out
    return trace(work)


# ---- comparing --------------------------------------------------------------------------------------------------
def compare(mine, dsl):
    """'same' (function and text); 'size-1 strides' (same shape and function: a mode of extent 1 has
    another stride); 'regrouped' (same function, the same top-level modes, grouped or
    coalesced differently inside); 'regrouped modes' (same function, other top-level modes); 'refused'
    (the DSL refuses, as documented, and so does cutelite.dsl); otherwise a sentence saying what differs."""
    if "refused" in dsl:
        if not any(r in dsl["refused"] for r in DOCUMENTED_REFUSALS):
            return f"the DSL refuses, undocumented: {dsl['refused']}"
        return "refused" if "refused" in mine else f"the DSL refuses ({dsl['refused']}), cutelite.dsl does not"
    if "refused" in mine:
        return f"cutelite.dsl refuses ({mine['refused']}), the DSL gives {dsl}"
    if "value" in dsl or "value" in mine:
        return "same" if mine == dsl else f"values differ: cutelite {mine}, DSL {dsl}"
    if mine["size"] != dsl["size"] or mine["offsets"] != dsl["offsets"]:
        return f"functions differ: cutelite {mine}, DSL {dsl}"
    if mine["text"] == dsl["text"]:
        return "same"
    if " o " in mine["text"]:
        return f"texts differ: cutelite {mine['text']}, DSL {dsl['text']}"
    if mine["text"].split(":")[0] == dsl["text"].split(":")[0]:
        return "size-1 strides"          # same shape, same function: only strides of extent-1 modes differ
    return "regrouped" if mine["modes"] == dsl["modes"] else "regrouped modes"


def check_all(cases):
    """[(name, verdict)] for cases [(name, build, args)], the DSL side in one trace."""
    dsl = run_theirs([(b, a) for _, b, a in cases])
    return [(name, compare(run_ours(b, *a), d)) for (name, b, a), d in zip(cases, dsl)]


OK = ("same", "size-1 strides", "regrouped", "regrouped modes", "refused")


def _assert_verdicts(verdicts, what):
    bad = [(n, v) for n, v in verdicts if v not in OK and KNOWN.get(n, "").split(":")[0] not in v]
    tally = Counter(v if v in OK else "known difference" for _, v in verdicts)
    print(f"{what}: {len(verdicts)} cases, {dict(tally)}")
    assert not bad, f"{len(bad)} of {len(verdicts)} {what} differ:\n" + "\n".join(f"{n}: {v}" for n, v in bad[:10])
    return tally


# ---- layouts and the algebra, on the C++ oracle's inputs ---------------------------------------------------------
def test_layouts_and_algebra():
    cases = [(f"{op}/{cid}", BUILD[op], (args,)) for op, cid, args in oracle_cases()]
    tally = _assert_verdicts(check_all(cases), "layouts and algebra")
    assert len(cases) >= 300 and tally["same"] > tally["regrouped"] + tally["regrouped modes"] > 0 < tally["size-1 strides"]
    assert tally["refused"] > 0 and tally["known difference"] == len(KNOWN)


# ---- printing: the documented differences, case by case -------------------------------------------------------
def test_printing_rules():
    """Static values lose C++'s underscore, a swizzle prints S<b,m,s>, a permutation entry n prints n:1."""
    assert ours.pretty_str(ours.make_layout((4, 8), stride=(8, 1))) == "(4,8):(8,1)"
    sw = ours.make_composed_layout(ours.make_swizzle(3, 3, 3), 0, ours.make_layout((8, 64), stride=(64, 1)))
    assert str(sw) == "Sw<3,3,3> o _0 o (_8,_64):(_64,_1)"
    got = trace(lambda: (str(theirs.make_layout((4, 8), stride=(8, 1))), str(
        theirs.make_composed_layout(theirs.make_swizzle(3, 3, 3), 0, theirs.make_layout((8, 64), stride=(64, 1))))))
    assert got == ("(4,8):(8,1)", ours.pretty_str(sw))


def test_dynamic_values_print_as_question_marks():
    from cutelite import dyn
    mine = ours.pretty_str(ours.make_layout((dyn(16), 8)))
    got = trace(lambda: str(theirs.make_layout((_dynamic(16), 8))))
    assert mine == got == "(?,8):(1,?)"


def _dynamic(n):
    import cutlass
    return cutlass.Int32(n)


# ---- swizzles ---------------------------------------------------------------------------------------------------
SWIZZLES = [((b, m, s), (rows, cols), major) for b, m, s in ((1, 2, 3), (2, 3, 3), (3, 3, 3), (3, 4, 3), (2, 4, 3),
                                                             (3, 3, 4), (2, 0, 4), (1, 4, 4))
            for rows, cols in ((8, 64), (16, 32)) for major in ("row", "col")]


def _swizzled(cute, bms, shape, major):
    stride = (shape[1], 1) if major == "row" else (1, shape[0])
    atom = cute.make_composed_layout(cute.make_swizzle(*bms), 0, cute.make_layout(shape, stride=stride))
    return atom


def test_swizzles():
    cases = []
    for bms, shape, major in SWIZZLES:
        cases.append((f"{bms} {shape} {major}", _swizzled, (bms, shape, major)))
        cases.append((f"tile_to_shape {bms} {shape} {major}",
                      lambda cute, *a: cute.tile_to_shape(_swizzled(cute, *a), (4 * a[1][0], 2 * a[1][1], 3), (0, 1, 2)),
                      (bms, shape, major)))
        cases.append((f"recast to bytes {bms} {shape} {major}",
                      lambda cute, *a: cute.recast_layout(8, 16, _swizzled(cute, *a)), (bms, shape, major)))
    tally = _assert_verdicts(check_all(cases), "swizzled layouts")
    assert tally["same"] == len(cases)


# ---- MMA atoms, TiledMMAs, TiledCopys -----------------------------------------------------------------------------
def _op(cute, spec):
    kind, *rest = spec
    t = {name: getattr(cute, name) for name in ("Float16", "BFloat16", "Float32", "TFloat32", "Float64")}
    if kind == "f16bf16":
        return cute.nvgpu.warp.MmaF16BF16Op(t[rest[0]], t[rest[1]], rest[2])
    if kind == "tf32":
        return cute.nvgpu.warp.MmaTF32Op(rest[0])
    return cute.nvgpu.MmaUniversalOp(t[rest[0]])


MMA_OPS = [("f16bf16", ab, acc, mnk) for ab, acc in (("Float16", "Float16"), ("Float16", "Float32"),
                                                     ("BFloat16", "Float32")) for mnk in ((16, 8, 8), (16, 8, 16))]
MMA_OPS += [("tf32", (16, 8, 4)), ("tf32", (16, 8, 8)), ("fma", "Float32"), ("fma", "Float16"), ("fma", "Float64")]


def _mma_atom_parts(cute, spec):
    atom = cute.make_mma_atom(_op(cute, spec))
    return [snap(cute, atom.tv_layout_A), snap(cute, atom.tv_layout_B), snap(cute, atom.tv_layout_C),
            snap(cute, atom.thr_id), {"value": _plain(tuple(atom.shape_mnk))}, {"text": _text(cute, atom)}]


def _text(cute, x):
    return cute.pretty_str(x) if cute is ours else str(x)


def _compare_parts(mine, dsl):
    if len(mine) != len(dsl):
        return f"cutelite gives {mine[:1]}..., the DSL {dsl[:1]}..."
    verdicts = [compare(m, d) if "text" not in m or "offsets" in m or "text" not in d else
                ("same" if m == d else f"text differs: cutelite {m['text']!r}, DSL {d['text']!r}")
                for m, d in zip(mine, dsl)]
    return next((v for v in verdicts if v not in ("same", "regrouped")), "regrouped" if "regrouped" in verdicts else "same")


def _parts_or_refusal(cute, build, args):
    try:
        return build(cute, *args)
    except Exception as e:  # noqa: BLE001 - the DSL's own exception types vary
        return [{"refused": f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"}]


def _check_parts(cases, what):
    dsl = trace(lambda: [_parts_or_refusal(theirs, b, a) for _, b, a in cases])
    verdicts = [(name, _compare_parts(_parts_or_refusal(ours, b, a), d)) for (name, b, a), d in zip(cases, dsl)]
    return _assert_verdicts(verdicts, what)


def test_mma_atoms():
    tally = _check_parts([(str(spec), _mma_atom_parts, (spec,)) for spec in MMA_OPS], "MMA atoms")
    assert tally["same"] == len(MMA_OPS)


TILED = [(spec, atoms, perm) for spec in (("f16bf16", "Float16", "Float32", (16, 8, 16)),
                                          ("f16bf16", "Float16", "Float16", (16, 8, 8)),
                                          ("f16bf16", "BFloat16", "Float32", (16, 8, 16)), ("tf32", (16, 8, 8)))
         for atoms, perm in (((1, 1, 1), None), ((2, 2, 1), None), ((2, 2, 1), (32, 32, 16)), ((4, 1, 1), None),
                             ((2, 4, 1), (32, 64, None)), ((1, 2, 1), (None, 32, None)))]
TILED += [(("fma", "Float32"), (16, 16, 1), None), (("fma", "Float32"), (8, 32, 1), (None, 64, None))]


def _tiled_mma_parts(cute, spec, atoms, perm):
    mma = cute.make_tiled_mma(_op(cute, spec), atoms, permutation_mnk=perm)
    M, N, K = (int(mma.get_tile_size(i)) for i in range(3))
    parts = [snap(cute, mma.thr_layout_vmnk), snap(cute, mma.tv_layout_A_tiled), snap(cute, mma.tv_layout_B_tiled),
             snap(cute, mma.tv_layout_C_tiled), {"value": (M, N, K, int(mma.size))}, {"text": _text(cute, mma)}]
    sA = cute.make_rmem_tensor(cute.make_layout((2 * M, 2 * K), stride=(1, 2 * M)), cute.Float32)
    sB = cute.make_rmem_tensor(cute.make_layout((2 * N, 2 * K), stride=(2 * K, 1)), cute.Float32)
    sC = cute.make_rmem_tensor(cute.make_layout((2 * M, 2 * N), stride=(2 * N, 1)), cute.Float32)
    for t in sorted({0, 37 % int(mma.size), int(mma.size) - 1}):
        thr = mma.get_slice(t)
        tCsA, tCsB, tCsC = thr.partition_A(sA), thr.partition_B(sB), thr.partition_C(sC)
        parts += [snap(cute, p.layout) for p in (tCsA, tCsB, tCsC)]
        parts += [snap(cute, f.layout) for f in (mma.make_fragment_A(tCsA), mma.make_fragment_B(tCsB),
                                                 mma.make_fragment_C(tCsC))]
    return parts


def test_tiled_mmas():
    tally = _check_parts([(f"{spec} {atoms} {perm}", _tiled_mma_parts, (spec, atoms, perm))
                          for spec, atoms, perm in TILED], "TiledMMAs")
    assert tally["same"] + tally["regrouped"] == len(TILED)


def _copy_atom(cute, kind, dtype, arg):
    t = getattr(cute, dtype)
    if kind == "universal":
        return cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), t, num_bits_per_copy=arg)
    if kind.startswith("cp.async"):
        mode = cute.nvgpu.cpasync.LoadCacheMode.GLOBAL if kind == "cp.async" else cute.nvgpu.cpasync.LoadCacheMode.ALWAYS
        return cute.make_copy_atom(cute.nvgpu.cpasync.CopyG2SOp(mode), t, num_bits_per_copy=arg)
    return cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(*arg), t)


TV_COPIES = [(("universal", "Float32", 128), (8, 16), (16, 1), (1, 4)), (("universal", "Float32", 32), (2, 64), (64, 1), (1, 1)),
             (("cp.async", "Float16", 128), (32, 4), (4, 1), (1, 8)), (("cp.async", "Float16", 128), (16, 8), (1, 16), (8, 1)),
             (("universal", "Float16", 64), (16, 8), (8, 1), (1, 4)), (("cp.async.ca", "Float16", 64), (8, 16), (1, 8), (4, 1)),
             (("universal", "BFloat16", 128), (64, 2), (2, 1), (1, 8)), (("universal", "Float64", 128), (4, 8), (1, 4), (2, 1))]


def _tiled_copy_parts(cute, tc, tile):
    parts = [snap(cute, tc.layout_tv_tiled), snap(cute, tc.layout_src_tv_tiled), snap(cute, tc.layout_dst_tv_tiled),
             {"value": tuple(int(cute.size(t)) for t in tc.tiler_mn)}, {"text": _text(cute, tc)}]
    s = cute.make_rmem_tensor(cute.make_layout(tile, stride=(tile[1], 1)), cute.Float32)
    for t in (0, 5):
        thr = tc.get_slice(t)
        parts += [snap(cute, thr.partition_S(s).layout), snap(cute, thr.partition_D(s).layout)]
    return parts


def _tv_copy(cute, atom_spec, thr_shape, thr_stride, val_shape):
    tc = cute.make_tiled_copy_tv(_copy_atom(cute, *atom_spec), cute.make_layout(thr_shape, stride=thr_stride),
                                 cute.make_layout(val_shape))
    tile = tuple(2 * int(cute.size(t)) for t in tc.tiler_mn)
    return _tiled_copy_parts(cute, tc, tile)


def _mma_copy(cute, spec, atoms, perm, which, ldsm):
    mma = cute.make_tiled_mma(_op(cute, spec), atoms, permutation_mnk=perm)
    tc = getattr(cute, f"make_tiled_copy_{which}")(_copy_atom(cute, "ldsm", "Float16", ldsm), mma)
    M, N, K = (int(mma.get_tile_size(i)) for i in range(3))
    tile = {"A": (2 * M, 2 * K), "B": (2 * N, 2 * K), "C": (2 * M, 2 * N)}[which]
    parts = _tiled_copy_parts(cute, tc, tile)
    frag = cute.make_rmem_tensor(cute.make_layout(tile, stride=(1, tile[0])), cute.Float16)
    thr = mma.get_slice(3)
    tCr = {"A": lambda: mma.make_fragment_A(thr.partition_A(frag)),
           "B": lambda: mma.make_fragment_B(thr.partition_B(frag)),
           "C": lambda: mma.make_fragment_C(thr.partition_C(frag))}[which]()
    return parts + [snap(cute, tc.get_slice(3).retile(tCr).layout)]


def test_tiled_copies():
    f16 = ("f16bf16", "Float16", "Float32", (16, 8, 16))
    cases = [(f"tv {spec}", _tv_copy, spec) for spec in TV_COPIES]
    for atoms, perm in (((2, 2, 1), (32, 32, 16)), ((2, 2, 1), (32, 16, 16)), ((1, 2, 1), (16, 32, 16)),
                        ((4, 1, 1), (64, 16, 16))):
        wide_n = perm[1] >= 32                  # an x4 ldmatrix of B needs 32 columns of N in the tile
        for which, ldsm in [("A", (False, 4)), ("A", (True, 4)), ("B", (False, 2)), ("B", (True, 2))] + \
                [("B", (False, 4)), ("B", (True, 4))] * wide_n:
            cases.append((f"{which} ldsm{ldsm} {atoms} {perm}", _mma_copy, (f16, atoms, perm, which, ldsm)))
    tally = _check_parts(cases, "TiledCopys")
    assert tally["same"] + tally["regrouped"] == len(cases)
