#!/usr/bin/env python3
"""Differential oracle for cutelite.tiled: what compiled C++ CuTe prints for TiledMMA and TiledCopy.

Writes tests/oracle/tiled_cases.json: for many configurations (MMA atom, atom layout, permutation;
copy atom, thread and value layouts), C++'s print() of the tiled object, its TV layouts, and, for a
few threads, partition_A/B/C and partition_fragment_A/B/C (MMA), partition_S/D and retile_S/D (copy)
of tensors in several layouts (column-major, row-major, padded, swizzled), each with its pointer offset.
Configurations C++ rejects at compile time are recorded with the static_assert's message.

Usage:  python tests/oracle/generate_tiled.py [--jobs 2]        (about 10 minutes of g++ on 2 cores)
Needs the same headers as generate.py (see README.md); the build folder is shared with it.
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import random
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from generate import BUILD, find_cuda_include, find_cutlass_include  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "tiled_cases.json")
SEED = 20261124
CHUNK = 12

# atom -> (element type of A/B tensors, of C tensors, bits of A/B elements)
MMA_ATOMS = {
    "SM70_8x8x4_F32F16F16F32_NT": ("half_t", "float"),
    "SM70_8x8x4_F16F16F16F16_TN": ("half_t", "half_t"),
    "SM75_16x8x8_F32F16F16F32_TN": ("half_t", "float"),
    "SM80_16x8x8_F16F16F16F16_TN": ("half_t", "half_t"),
    "SM80_16x8x16_F16F16F16F16_TN": ("half_t", "half_t"),
    "SM80_16x8x16_F32F16F16F32_TN": ("half_t", "float"),
    "SM80_16x8x16_F32BF16BF16F32_TN": ("bfloat16_t", "float"),
    "SM80_16x8x8_F32TF32TF32F32_TN": ("tfloat32_t", "float"),
    "SM80_16x8x4_F32TF32TF32F32_TN": ("tfloat32_t", "float"),
    "SM80_8x8x4_F64F64F64F64_TN": ("double", "double"),
    "SM80_16x8x32_S32S8S8S32_TN": ("int8_t", "int32_t"),
    "SM80_8x8x16_S32S8S8S32_TN": ("int8_t", "int32_t"),
    "SM61_DP4A": ("int8_t", "int32_t"),
    "UniversalFMA<float,float,float,float>": ("float", "float"),
}
SHAPE_MNK = {}   # filled from cutelite at generation time (only to size the tensors)

ATOM_LAYOUTS = [((1, 1, 1), None), ((2, 2, 1), None), ((2, 1, 1), None), ((1, 2, 1), None),
                ((4, 1, 1), None), ((1, 4, 1), None), ((2, 4, 1), None), ((4, 2, 1), None),
                ((2, 2), None), ((2, 2, 1), (2, 1, 0)), ((4, 2, 1), (2, 1, 0)), ((2, 1, 2), None)]
FMA_LAYOUTS = [((16, 16, 1), None), ((8, 8, 1), None), ((16, 8, 1), (8, 1, 0)), ((32, 8, 1), None)]

COPY_OPS_16 = ["SM75_U32x1_LDSM_N", "SM75_U32x2_LDSM_N", "SM75_U32x4_LDSM_N",
               "SM75_U16x2_LDSM_T", "SM75_U16x4_LDSM_T", "SM75_U16x8_LDSM_T"]
UNIVERSAL = ["UniversalCopy<uint16_t>", "UniversalCopy<uint32_t>", "UniversalCopy<uint64_t>",
             "UniversalCopy<uint128_t>", "SM80_CP_ASYNC_CACHEALWAYS<uint32_t>",
             "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>"]


# ---- C++ spelling ---------------------------------------------------------------------------------------
def cpp_tuple(t, head):
    if isinstance(t, tuple):
        return "%s<%s>" % (head, ",".join(cpp_tuple(x, head) for x in t))
    return "Int<%d>" % t


def cpp_layout(lay):
    shape, stride = lay["shape"], lay["stride"]
    if stride is None:
        return "Layout<%s>{}" % cpp_tuple(shape, "Shape")
    return "Layout<%s,%s>{}" % (cpp_tuple(shape, "Shape"), cpp_tuple(stride, "Stride"))


def cpp_int(x, dynamic):
    return "int(%d)" % x if dynamic else "Int<%d>{}" % x


def cpp_make(t, head, dyn_positions, counter):
    if isinstance(t, tuple):
        return "%s(%s)" % (head, ", ".join(cpp_make(x, head, dyn_positions, counter) for x in t))
    i = counter[0]
    counter[0] += 1
    return cpp_int(t, i in dyn_positions)


def cpp_tensor_layout(t):
    if t.get("dyn"):
        lay = "make_layout(%s, %s)" % (cpp_make(t["shape"], "make_shape", t["dyn"]["shape"], [0]),
                                       cpp_make(t["stride"], "make_stride", t["dyn"]["stride"], [0]))
    else:
        lay = cpp_layout(t)
    if t.get("swizzle"):
        return "composition(Swizzle<%d,%d,%d>{}, %s)" % (*t["swizzle"], lay)
    return lay


def cpp_perm(p):
    if p == "_":
        return "Underscore"
    if isinstance(p, int):
        return "Int<%d>" % p
    return "decltype(%s)" % cpp_layout(p)


def js(t):
    """Tuples to lists for JSON."""
    return [js(x) for x in t] if isinstance(t, tuple) else t


# ---- configurations ------------------------------------------------------------------------------------
def lay(shape, stride=None):
    return {"shape": shape, "stride": stride}


def tensors_for(rows, cols, rng):
    """Layouts of a rows x cols tile: column-major, row-major, padded row-major, swizzled row-major,
    with a third mode (a stack of tiles), and with run-time (dynamic) shapes or strides."""
    out = [lay((rows, cols), (1, rows)), lay((rows, cols), (cols, 1)), lay((rows, cols), (cols + 8, 1)),
           lay((rows, cols, 3), (cols, 1, rows * cols))]
    dyn_rm = lay((rows, cols), (cols, 1))
    dyn_rm["dyn"] = {"shape": [0], "stride": [0]}          # (M, K) with M and the row pitch known at run time
    dyn_cm = lay((rows, cols), (1, rows))
    dyn_cm["dyn"] = {"shape": [0, 1], "stride": [1]}
    out += [dyn_rm, dyn_cm]
    if cols % 8 == 0 and rows % 8 == 0:
        b = rng.choice([1, 2, 3])
        sw = lay((rows, cols), (cols, 1))
        sw["swizzle"] = (b, 3, 3)
        out.append(sw)
        swc = lay((rows, cols), (1, rows))
        swc["swizzle"] = (2, 2, 3)
        out.append(swc)
    return out


def perm_options(extent, threads, rng):
    """Permutation entries for one mode: _, the natural size times 1 or 2, or an interleaving Layout."""
    base = extent * threads
    opts = ["_", base, 2 * base]
    if threads > 1 or extent > 1:
        r = 2
        opts.append(lay((extent, threads, r), (1, extent * r, extent)))
    if extent % 2 == 0:
        opts.append(lay((extent // 2, 2, threads), (1, extent // 2 * threads, extent // 2)))
    return opts


def mma_case(rng, atom_name, types, shape_mnk, atom_threads, layouts):
    """One TiledMMA configuration of an atom (its M, N, K extents and number of threads given): a random
    atom layout from `layouts`, permutation, tensors of A, B, C (1 or 2 tiles per mode) and four threads."""
    em, en, ek = shape_mnk
    shp, std = rng.choice(layouts)
    full = tuple(shp) + (1,) * (3 - len(shp))
    perm = [rng.choice(perm_options(e, t, rng)) if rng.random() < 0.6 else "_"
            for e, t in zip((em, en, ek), full)]
    k = rng.choice([1, 2, 3])
    perm = perm[:k] if all(p == "_" for p in perm[k:]) else perm
    tile = []
    for e, t, p in zip((em, en, ek), full, perm + ["_"] * (3 - len(perm))):
        tile.append(e * t if p == "_" else (p if isinstance(p, int) else prod(p["shape"])))
    M, N, K = tile
    nthr = atom_threads * full[0] * full[1] * full[2]
    reps = [rng.choice([1, 2]) for _ in range(3)]
    tA = rng.choice(tensors_for(M * reps[0], K * reps[2], rng))
    tB = rng.choice(tensors_for(N * reps[1], K * reps[2], rng))
    tC = rng.choice(tensors_for(M * reps[0], N * reps[1], rng))
    threads = sorted({0, 1, rng.randrange(nthr), nthr - 1})
    return {"kind": "mma", "atom": atom_name, "types": list(types), "thr_layout": lay(tuple(shp), std),
            "perm": perm, "tensors": {"A": tA, "B": tB, "C": tC}, "threads": threads, "copies": []}


def mma_cases(rng):
    import cutelite
    cases = []
    for atom_name, (tab, tc) in MMA_ATOMS.items():
        atom = cutelite.make_mma_atom(atom_name)
        layouts = FMA_LAYOUTS if atom_name.startswith("Universal") else ATOM_LAYOUTS
        n_cfg = 8 if atom_name.startswith("SM80_16x8x16_F16") else 4
        for _ in range(n_cfg):
            case = mma_case(rng, atom_name, (tab, tc), atom.Shape_MNK, cutelite.size(atom.ThrID), layouts)
            copies = []
            if tab == "half_t" or tab == "bfloat16_t":
                copies = rng.sample(COPY_OPS_16, 2) + [rng.choice(UNIVERSAL[:4])]
            else:
                copies = [rng.choice(["UniversalCopy<uint32_t>", "UniversalCopy<uint64_t>", "UniversalCopy<uint128_t>"])]
            cases.append(case)
            # each TiledCopy of this MMA is its own case, so that one C++ rejects does not hide the others
            for op in copies:
                operand = rng.choice("AB") if "LDSM" in op else rng.choice("ABC")
                cases.append(dict(case, kind="mma_copy", copies=[{"op": op, "operand": operand}]))
    return cases


COPY_THR_LAYOUTS = [lay((16, 4), (4, 1)), lay((32, 4), (4, 1)), lay((8, 16), (1, 8)), lay((32, 8), (8, 1)),
                    lay((4, 8), None), lay((16, 8), (8, 1)), lay((8, 4), (4, 1)), lay((128,), None)]
COPY_VAL_LAYOUTS = [lay((4, 1), None), lay((1, 4), None), lay((8, 1), None), lay((1, 8), None), lay((2, 2), None),
                    lay((1, 1), None), lay((2, 1), None), lay((1, 2), None), lay((4,), None)]


def copy_case(rng, op, vt, thr_layouts=COPY_THR_LAYOUTS, val_layouts=COPY_VAL_LAYOUTS):
    """One make_tiled_copy configuration: random thread and value layouts, a tensor of whole tiles."""
    thr = rng.choice(thr_layouts)
    val = rng.choice(val_layouts)
    rank = max(len(thr["shape"]), len(val["shape"]))
    ts = prod(thr["shape"])
    # a tensor of a whole number of tiles (the tile is thr x val, mode by mode)
    ext = []
    for i in range(rank):
        a = thr["shape"][i] if i < len(thr["shape"]) else 1
        b = val["shape"][i] if i < len(val["shape"]) else 1
        ext.append(a * b * rng.choice([1, 2, 4]))
    if rank == 1:
        t = lay((ext[0],), None)
        tensors = [t]
    else:
        tensors = tensors_for(ext[0], ext[1], rng)
    threads = sorted({0, rng.randrange(ts), ts - 1})
    return {"kind": "copy", "op": op, "value_type": vt, "thr_layout": thr, "val_layout": val,
            "tensor": rng.choice(tensors), "threads": threads}


def copy_cases(rng):
    cases = []
    for _ in range(60):
        op = rng.choice(UNIVERSAL)
        vt = rng.choice(["half_t", "float"])
        cases.append(copy_case(rng, op, vt))
    return cases


def prod(t):
    p = 1
    for x in (t if isinstance(t, tuple) else (t,)):
        p *= prod(x) if isinstance(x, tuple) else x
    return p


# ---- C++ for one case ---------------------------------------------------------------------------------
CPP_HEAD = r"""#include <cstdio>
#include <cute/tensor.hpp>
#include <cute/atom/mma_atom.hpp>
#include <cute/atom/copy_atom.hpp>
using namespace cute;
template <class T> void P(const char* k, T const& x) { printf("@%s ", k); print(x); printf("\n"); }
template <class T, class B> void PT(const char* k, T const& t, B const* base) {
  printf("@%s ", k); print(t.layout()); printf(" | %ld\n", (long)(t.data() - base)); }
template <class T> void PL(const char* k, T const& t) { printf("@%s ", k); print(t.layout()); printf("\n"); }
"""


def mma_cpp(i, c):
    tab, tc = c["types"]
    perm = c["perm"] + ["_"] * (3 - len(c["perm"]))
    main = c["kind"] == "mma"
    lines = ["void case_%d() {" % i, '  printf("@@BEGIN %d\\n");' % i,
             "  auto mma = make_tiled_mma(MMA_Atom<%s>{}, %s, Tile<%s>{});"
             % (c["atom"], cpp_layout(c["thr_layout"]), ",".join(cpp_perm(p) for p in perm))]
    if main:
        lines += ['  printf("@print\\n"); print(mma); printf("@end\\n");',
                  '  P("A_TV", mma.get_layoutA_TV()); P("B_TV", mma.get_layoutB_TV()); P("C_TV", mma.get_layoutC_TV());',
                  '  P("tile_shape", tile_shape(mma)); P("size", size(mma));']
    for op_, T in (("A", tab), ("B", tab), ("C", tc)):
        t = c["tensors"][op_]
        lines.append("  static %s buf%s[%d];" % (T, op_, cosize_of(t)))
        lines.append("  auto s%s = make_tensor(&buf%s[0], %s);" % (op_, op_, cpp_tensor_layout(t)))
    if main:
        lines.append('  P("pshape_C", partition_shape_C(mma, shape(sC)));')
    for j, cp in enumerate(c["copies"]):
        fn = cp.get("fn", "make_tiled_copy_%s" % cp["operand"])      # fn: make_tiled_copy_C_atom
        T = tc if cp["operand"] == "C" else tab
        lines.append("  auto tc%d = %s(Copy_Atom<%s, %s>{}, mma);" % (j, fn, cp["op"], T))
        lines.append('  printf("@copy%d_print\\n"); print(tc%d); printf("@end\\n");' % (j, j))
        lines.append('  P("copy%d_S_TV", tc%d.get_layoutS_TV()); P("copy%d_D_TV", tc%d.get_layoutD_TV());'
                     % (j, j, j, j))
    lines.append("  for (int t : {%s}) {" % ",".join(str(t) for t in c["threads"]))
    lines.append('    printf("@thread %d\\n", t);')
    lines.append("    auto thr = mma.get_slice(t);")
    for op_ in "ABC" if main else "":
        lines.append('    PT("p%s", thr.partition_%s(s%s), &buf%s[0]);' % (op_, op_, op_, op_))
        if not c["tensors"][op_].get("dyn"):    # C++ has no owning tensor of a run-time shape
            lines.append('    PL("f%s", thr.partition_fragment_%s(s%s));' % (op_, op_, op_))
    if main:
        lines.append('    printf("@thr_print\\n"); print(thr); printf("@end\\n");')
    for j, cp in enumerate(c["copies"]):
        o = cp["operand"]
        lines.append("    { auto s = tc%d.get_slice(t);" % j)
        lines.append('      PT("copy%d_S", s.partition_S(s%s), &buf%s[0]);' % (j, o, o))
        lines.append('      PT("copy%d_D", s.partition_D(s%s), &buf%s[0]);' % (j, o, o))
        if not c["tensors"][o].get("dyn"):
            lines.append('      PL("copy%d_retile_D", s.retile_D(thr.partition_fragment_%s(s%s)));' % (j, o, o))
            lines.append('      PL("copy%d_retile_S", s.retile_S(thr.partition_fragment_%s(s%s)));' % (j, o, o))
        lines.append("    }")
    lines.append("  }")
    lines += ['  printf("@@END %d\\n");' % i, "}"]
    return lines


def copy_cpp(i, c):
    t = c["tensor"]
    make = ["  auto tc = make_tiled_copy(Copy_Atom<%s, %s>{}, %s, %s);" % (
        c["op"], c["value_type"], cpp_layout(c["thr_layout"]), cpp_layout(c["val_layout"]))]
    if c.get("retarget"):   # make_tiled_copy_S/D: another atom with this copy's source/destination TV layout
        make = [make[0].replace("auto tc =", "auto tc0 ="), "  auto tc = %s(Copy_Atom<%s, %s>{}, tc0);" % (
            c["retarget"]["fn"], c["retarget"]["op"], c["value_type"])]
    lines = ["void case_%d() {" % i, '  printf("@@BEGIN %d\\n");' % i] + make + [
             '  printf("@print\\n"); print(tc); printf("@end\\n");',
             '  P("S_TV", tc.get_layoutS_TV()); P("D_TV", tc.get_layoutD_TV()); P("size", size(tc));',
             "  static %s buf[%d];" % (c["value_type"], cosize_of(t)),
             "  auto g = make_tensor(&buf[0], %s);" % cpp_tensor_layout(t),
             "  for (int t : {%s}) {" % ",".join(str(x) for x in c["threads"]),
             '    printf("@thread %d\\n", t);',
             "    auto s = tc.get_slice(t);",
             '    PT("S", s.partition_S(g), &buf[0]); PT("D", s.partition_D(g), &buf[0]);',
             ] + (['    printf("@thr_print\\n"); print(s); printf("@end\\n");'] if c.get("retarget") else []) + (
             [] if t.get("dyn") else [
             '    PL("retile_D", s.retile_D(make_fragment_like(s.partition_D(g))));',
             '    PL("retile_S", s.retile_S(make_fragment_like(s.partition_S(g))));']) + [
             "  }",
             '  printf("@@END %d\\n");' % i, "}"]
    return lines


def cosize_of(t):
    shape, stride = t["shape"], t["stride"]
    if stride is None:
        return prod(shape)
    fs, fd = flat(shape), flat(stride)
    return sum((s - 1) * abs(d) for s, d in zip(fs, fd)) + 1


def flat(t):
    return [y for x in t for y in flat(x)] if isinstance(t, tuple) else [t]


# ---- compile, run, parse -------------------------------------------------------------------------------
SA = re.compile(r"error: static assertion failed(?:: (.*))?$")


def case_cpp(i, c):
    return copy_cpp(i, c) if c["kind"] == "copy" else mma_cpp(i, c)


def run_chunk(idx, cases, incs, key, cpp_of=case_cpp, prefix="tiled"):
    """Compile and run one chunk (cpp_of(i, case) writes a case's C++ function); failing cases become
    ('error', message). Returns {case index: result}."""
    results = {}
    todo = dict(cases)
    while todo:
        src = [CPP_HEAD]
        ranges = {}
        for i, c in todo.items():
            body = cpp_of(i, c)
            start = sum(s.count("\n") for s in src) + 1
            src.append("\n".join(body) + "\n")
            ranges[i] = (start, start + len(body))
        src.append("int main() {\n" + "".join("  case_%d();\n" % i for i in todo) + "  return 0;\n}\n")
        text = "".join(src)
        h = hashlib.sha1((key + text).encode()).hexdigest()[:16]
        cpp = os.path.join(BUILD, "%s_%s.cpp" % (prefix, h))
        exe = cpp[:-4]
        log = cpp + ".out"
        if not os.path.exists(log):
            with open(cpp, "w") as f:
                f.write(text)
            p = subprocess.run(["g++", "-std=c++17", "-O0", "-w"] + ["-I" + d for d in incs] + [cpp, "-o", exe],
                               capture_output=True, text=True)
            if p.returncode != 0:
                with open(log, "w") as f:
                    f.write("COMPILE\n" + p.stderr)
            else:
                r = subprocess.run([exe], capture_output=True, text=True, timeout=300)
                with open(log, "w") as f:
                    f.write("RUN\n" + r.stdout)
        out = open(log).read()
        if out.startswith("COMPILE"):
            bad = {}
            lines = out.split("\n")
            for n, ln in enumerate(lines):
                m = re.match(re.escape(cpp) + r":(\d+):\d+:\s+(required from here|error)", ln)
                if not m:
                    continue
                line = int(m.group(1))
                for i, (a, b) in ranges.items():
                    if a <= line <= b and i not in bad:
                        # the error this line leads to: the first error reported from here on
                        err = next((x for x in lines[n:] if ": error: " in x), "")
                        msg = (SA.search(err).group(1) or "static assertion failed") if SA.search(err) \
                            else "compile error"
                        bad[i] = msg.strip().strip('"')
            if not bad:
                raise RuntimeError("chunk %d failed to compile and no case was named:\n%s" % (idx, out[:3000]))
            for i, msg in bad.items():
                results[i] = {"error": msg}
                del todo[i]
            continue
        for i, body in re.findall(r"@@BEGIN (\d+)\n(.*?)@@END \1", out, re.S):
            results[int(i)] = {"expect": parse(body)}
        break
    return results


def parse(body):
    """@key value lines (and @key ... @end blocks) into a dict; per-thread keys go under threads[t]."""
    res, cur = {"threads": {}}, None
    lines = body.split("\n")
    n = 0
    while n < len(lines):
        ln = lines[n]
        n += 1
        if not ln.startswith("@"):
            continue
        key, _, val = ln[1:].partition(" ")
        if key == "thread":
            cur = res["threads"].setdefault(val, {})
            continue
        if key.endswith("print"):
            block = []
            while not lines[n].startswith("@end"):
                block.append(lines[n])
                n += 1
            n += 1
            val = "\n".join(block) + "\n"
        target = cur if cur is not None else res
        if " | " in val:
            text, off = val.rsplit(" | ", 1)
            target[key] = [text, int(off)]
        else:
            target[key] = val
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    incs = [find_cutlass_include()] + find_cuda_include()
    rng = random.Random(SEED)
    cases = mma_cases(rng) + copy_cases(rng)
    print("%d cases" % len(cases), file=sys.stderr)
    chunks = [list(enumerate(cases))[k:k + CHUNK] for k in range(0, len(cases), CHUNK)]
    key = "tiled-v3"
    results = {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
        futs = [ex.submit(run_chunk, n, ch, incs, key) for n, ch in enumerate(chunks)]
        for k, f in enumerate(concurrent.futures.as_completed(futs)):
            results.update(f.result())
            print("chunk %d/%d done" % (k + 1, len(chunks)), file=sys.stderr)
    with open(OUT, "w") as f:
        f.write("[\n")
        rows = []
        for i, c in enumerate(cases):
            r = results.get(i)
            if r is None:
                continue
            rows.append(json.dumps(dict(c, id="%s-%04d" % (c["kind"], i), **r), sort_keys=True))
        f.write(",\n".join(rows) + "\n]\n")
    print("wrote %s (%d cases, %d errors)" % (OUT, len(rows), sum('"error"' in r for r in rows)), file=sys.stderr)


if __name__ == "__main__":
    main()
