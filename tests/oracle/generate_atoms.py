"""Differential oracle for cutelite's atoms: every MMA and copy atom C++ CuTe defines for SM61-SM90
(not GMMA, not TMA), as compiled C++ prints it, and TiledMMA/TiledCopy built from them.

Writes tests/oracle/atom_cases.json, one record per line:
  * mma_atom:  print(MMA_Atom<Op>{}) and sizeof_bits of ValTypeD/A/B/C, for every MMA_Traits<Op> that
               cute/atom/mma_traits_sm61/70/75/80/89/90.hpp define, and some UniversalFMA<D,A,B,C>;
  * copy_atom: print(Copy_Atom<Op, T>{}) for the copy ops of copy_traits.hpp, copy_traits_sm50/75/80/90.hpp
               and several element types T (those C++ rejects recorded with the static_assert's message);
  * mma / mma_copy / copy: TiledMMA and TiledCopy records, in generate_tiled.py's format, for the atoms
               that tiled_cases.json does not cover (one configuration each, and copies of C by stmatrix).

Usage:  python tests/oracle/generate_atoms.py [--jobs 2]        (about 5 minutes of g++ on 2 cores)
Needs the same headers as generate.py (see README.md); the build folder and its cache are shared.
"""
import argparse
import concurrent.futures
import json
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from generate import find_cuda_include, find_cutlass_include  # noqa: E402
import generate_tiled as gt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "atom_cases.json")
SEED = "20261124/atoms"

TRAITS_FILES = ["mma_traits_sm61.hpp", "mma_traits_sm70.hpp", "mma_traits_sm75.hpp", "mma_traits_sm80.hpp",
                "mma_traits_sm89.hpp", "mma_traits_sm90.hpp"]
UNIVERSAL_FMA = ["UniversalFMA<float,float,float,float>", "UniversalFMA<double,double,double,double>",
                 "UniversalFMA<half_t,half_t,half_t,half_t>", "UniversalFMA<int,int,int,int>",
                 "UniversalFMA<float,half_t,half_t,float>", "UniversalFMA<float,bfloat16_t,bfloat16_t,float>",
                 "UniversalFMA<float,tfloat32_t,tfloat32_t,float>", "UniversalFMA<int32_t,int8_t,int8_t,int32_t>",
                 "UniversalFMA<half_t,float,float,half_t>", "UniversalFMA<uint32_t,uint8_t,uint8_t,uint32_t>"]

# copy ops, and the element types each is printed with
ONE_THREAD = ["UniversalCopy<uint8_t>", "UniversalCopy<uint16_t>", "UniversalCopy<uint32_t>",
              "UniversalCopy<uint64_t>", "UniversalCopy<uint128_t>", "UniversalCopy<half_t>", "UniversalCopy<float>",
              "UniversalCopy<double>", "UniversalCopy<uint32_t,uint16_t>", "UniversalCopy<uint1_t>",
              "DefaultCopy", "AutoVectorizingCopy", "AutoVectorizingCopyWithAssumedAlignment<8>",
              "AutoVectorizingCopyWithAssumedAlignment<16>", "AutoVectorizingCopyWithAssumedAlignment<32>",
              "AutoVectorizingCopyWithAssumedAlignment<64>", "AutoVectorizingCopyWithAssumedAlignment<128>",
              "AutoVectorizingCopyWithAssumedAlignment<256>",
              "SM80_CP_ASYNC_CACHEALWAYS<uint32_t>", "SM80_CP_ASYNC_CACHEALWAYS<uint64_t>",
              "SM80_CP_ASYNC_CACHEALWAYS<uint128_t>", "SM80_CP_ASYNC_CACHEALWAYS<uint16_t>",
              "SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", "SM80_CP_ASYNC_CACHEGLOBAL<uint64_t>",
              "SM80_CP_ASYNC_CACHEALWAYS_ZFILL<uint32_t>", "SM80_CP_ASYNC_CACHEALWAYS_ZFILL<uint64_t>",
              "SM80_CP_ASYNC_CACHEALWAYS_ZFILL<uint128_t>", "SM80_CP_ASYNC_CACHEGLOBAL_ZFILL<uint128_t>",
              "SM80_CP_ASYNC_CACHEGLOBAL_ZFILL<uint32_t>"]
WARP = ["SM75_U32x1_LDSM_N", "SM75_U32x2_LDSM_N", "SM75_U32x4_LDSM_N", "SM75_U16x2_LDSM_T", "SM75_U16x4_LDSM_T",
        "SM75_U16x8_LDSM_T", "SM75_U32x1_MOVM_T", "SM90_U32x1_STSM_N", "SM90_U32x2_STSM_N", "SM90_U32x4_STSM_N",
        "SM90_U16x2_STSM_T", "SM90_U16x4_STSM_T", "SM90_U16x8_STSM_T", "SM50_Shuffle_U32_2x2Trans_XOR1",
        "SM50_Shuffle_U32_2x2Trans_XOR4"]
VALUE_TYPES = ["uint8_t", "half_t", "float", "double", "int8_t", "bfloat16_t", "uint128_t"]

# C++ element type of each letter group in an atom's name (for the tensors of TiledMMA cases)
TYPE_OF = {"F16": "half_t", "F32": "float", "BF16": "bfloat16_t", "TF32": "tfloat32_t", "F64": "double",
           "S8": "int8_t", "U8": "uint8_t", "S4": "uint8_t", "U4": "uint8_t", "U1": "uint8_t", "S32": "int32_t",
           "E4M3": "float_e4m3_t", "E5M2": "float_e5m2_t", "C64": "complex<double>", "GC64": "complex<double>",
           "S16": "int16_t"}


def mma_atom_names(inc):
    names = []
    for f in TRAITS_FILES:
        text = open(os.path.join(inc, "cute", "atom", f)).read()
        for n in re.findall(r"struct MMA_Traits<(\w+)>", text):
            if n not in names:
                names.append(n)
    return names + UNIVERSAL_FMA


def shape_and_threads(name):
    """(M, N, K) and threads of one atom, read off its name."""
    if name.startswith("UniversalFMA"):
        return (1, 1, 1), 1
    if name.startswith("SM61_DP"):
        return (1, 1, int(name[-2])), 1
    m = re.match(r"SM\d+_(\d+)x(\d+)x(\d+)_", name)
    return tuple(int(x) for x in m.groups()), (8 if name.startswith("SM70") else 32)


def types_of(name):
    """(element type of A/B tensors, of C) as C++ spells them."""
    if name.startswith("UniversalFMA"):
        d, a = name[len("UniversalFMA<"):-1].split(",")[:2]
        return a, d
    if name.startswith("SM61"):
        return ("int8_t" if "DP4A" in name else "int16_t"), "int32_t"
    groups = re.findall(r"GC64|C64|BF16|TF32|F16|F32|F64|E4M3|E5M2|S32|S8|U8|S4|U4|U1", name.split("_")[2])
    return TYPE_OF[groups[1]], TYPE_OF[groups[0]]


# ---- C++ of the atom-level records -----------------------------------------------------------------------
def atom_cpp(i, c):
    lines = ["void case_%d() {" % i, '  printf("@@BEGIN %d\\n");' % i]
    if c["kind"] == "mma_atom":
        lines += ["  using A = MMA_Atom<%s>;" % c["atom"],
                  '  printf("@print\\n"); print(A{}); printf("@end\\n");',
                  '  printf("@bits %d %d %d %d\\n", int(sizeof_bits_v<typename A::ValTypeD>), '
                  "int(sizeof_bits_v<typename A::ValTypeA>), int(sizeof_bits_v<typename A::ValTypeB>), "
                  "int(sizeof_bits_v<typename A::ValTypeC>));"]
    else:
        lines += ["  using A = Copy_Atom<%s, %s>;" % (c["op"], c["value_type"]),
                  '  printf("@print\\n"); print(A{}); printf("@end\\n");',
                  '  printf("@num_val %d %d\\n", int(A::NumValSrc), int(A::NumValDst));']
    lines += ['  printf("@@END %d\\n");' % i, "}"]
    return lines


def any_cpp(i, c):
    return atom_cpp(i, c) if c["kind"] in ("mma_atom", "copy_atom") else gt.case_cpp(i, c)


# ---- configurations ------------------------------------------------------------------------------------
def atom_cases(names):
    cases = [{"kind": "mma_atom", "atom": n} for n in names]
    for op in ONE_THREAD + WARP:
        for vt in VALUE_TYPES:
            cases.append({"kind": "copy_atom", "op": op, "value_type": vt})
    return cases


def tiled_cases(rng, names):
    """A TiledMMA for every atom tiled_cases.json does not cover; TiledCopies by the new copy ops."""
    cases, extra = [], []
    for name in names:
        if name in gt.MMA_ATOMS or "GC64" in name:
            continue
        mnk, nthr = shape_and_threads(name)
        layouts = gt.FMA_LAYOUTS if nthr == 1 else gt.ATOM_LAYOUTS
        types = types_of(name)
        case = gt.mma_case(rng, name, types, mnk, nthr, layouts)
        cases.append(case)
        copies = []
        if types[0] in ("int8_t", "float_e4m3_t") and "16x8x32" in name:
            copies.append({"op": "SM75_U32x4_LDSM_N", "operand": rng.choice("AB")})
        if types[1] == "double":
            copies.append({"op": rng.choice(["UniversalCopy<uint64_t>", "UniversalCopy<uint128_t>"]),
                           "operand": rng.choice("ABC")})
        if types[1] == "half_t" and not name.startswith("UniversalFMA"):
            copies.append({"op": rng.choice(["SM90_U32x4_STSM_N", "SM90_U32x2_STSM_N"]), "operand": "C"})
        for cp in copies:
            cases.append(dict(case, kind="mma_copy", copies=[cp]))
        if "16x8x128_S32U1" in name:   # C++ cannot partition its A (see cutelite.atoms.check_tv), but B and C
            extra += [dict(case, kind="mma_copy", copies=[{"op": "UniversalCopy<uint32_t>", "operand": op}])
                      for op in "BC"]
    # stmatrix / ldmatrix / movmatrix on the accumulators of the common Ampere atoms
    for name, ops in (("SM80_16x8x16_F16F16F16F16_TN", ["SM90_U32x1_STSM_N", "SM90_U32x2_STSM_N",
                                                        "SM90_U32x4_STSM_N", "SM90_U16x2_STSM_T",
                                                        "SM90_U16x4_STSM_T", "SM90_U16x8_STSM_T",
                                                        "SM75_U32x4_LDSM_N", "SM75_U32x1_MOVM_T"]),
                      ("SM80_16x8x16_F32F16F16F32_TN", ["SM90_U32x4_STSM_N", "SM90_U16x8_STSM_T",
                                                        "UniversalCopy<uint64_t>"]),
                      ("SM80_16x8x8_F16F16F16F16_TN", ["SM90_U32x2_STSM_N", "SM90_U16x4_STSM_T"])):
        tab, tc = gt.MMA_ATOMS[name]
        for op in ops:
            case = gt.mma_case(rng, name, (tab, tc), shape_and_threads(name)[0], 32, gt.ATOM_LAYOUTS)
            cases.append(dict(case, kind="mma_copy", copies=[{"op": op, "operand": "C"}]))
    # make_tiled_copy of the new one-thread ops
    for op in ["UniversalCopy<uint8_t>", "DefaultCopy", "AutoVectorizingCopy",
               "AutoVectorizingCopyWithAssumedAlignment<64>", "SM80_CP_ASYNC_CACHEALWAYS_ZFILL<uint64_t>",
               "SM80_CP_ASYNC_CACHEGLOBAL_ZFILL<uint128_t>", "UniversalCopy<uint32_t,uint16_t>"]:
        for _ in range(2):
            cases.append(gt.copy_case(rng, op, rng.choice(["half_t", "float"])))
    # make_tiled_copy of the warp-wide ops: whole warps, 8 (or 4) values a thread
    warp_thr = [gt.lay((32, 4), (4, 1)), gt.lay((16, 8), (8, 1)), gt.lay((32, 8), (8, 1)), gt.lay((32, 1), None)]
    warp_val = [gt.lay((1, 8), None), gt.lay((8, 1), None), gt.lay((2, 4), None), gt.lay((1, 4), None)]
    for op in WARP:
        for vt in ("half_t", "float"):
            cases.append(gt.copy_case(rng, op, vt, warp_thr, warp_val))
    # make_tiled_copy_C_atom: the smallest TiledCopy of one copy atom per thread over C's TV layout
    for name, ops in (("SM80_16x8x16_F32F16F16F32_TN", ["UniversalCopy<uint32_t>", "UniversalCopy<uint64_t>",
                                                        "UniversalCopy<uint128_t>", "SM90_U32x4_STSM_N"]),
                      ("SM80_16x8x16_F16F16F16F16_TN", ["SM90_U32x1_STSM_N", "SM90_U32x2_STSM_N",
                                                        "SM90_U32x4_STSM_N", "SM90_U16x8_STSM_T",
                                                        "UniversalCopy<uint32_t>", "UniversalCopy<uint64_t>"]),
                      ("SM70_8x8x4_F32F16F16F32_NT", ["UniversalCopy<uint32_t>", "UniversalCopy<uint64_t>"]),
                      ("SM80_16x8x8_F32TF32TF32F32_TN", ["UniversalCopy<uint64_t>", "DefaultCopy"]),
                      ("UniversalFMA<float,float,float,float>", ["UniversalCopy<uint32_t>", "UniversalCopy<uint64_t>"])):
        tab, tc = gt.MMA_ATOMS[name]
        mnk, nthr = shape_and_threads(name)
        for op in ops:
            case = gt.mma_case(rng, name, (tab, tc), mnk, nthr, gt.FMA_LAYOUTS if nthr == 1 else gt.ATOM_LAYOUTS)
            cases.append(dict(case, kind="mma_copy", copies=[{"op": op, "operand": "C",
                                                              "fn": "make_tiled_copy_C_atom"}]))
    # make_tiled_copy_S/D: a second atom over the source / destination TV layout of a TiledCopy
    for op, op2 in (("UniversalCopy<uint128_t>", "UniversalCopy<uint32_t>"), ("UniversalCopy<uint64_t>", "DefaultCopy"),
                    ("UniversalCopy<uint32_t>", "UniversalCopy<uint64_t>"),
                    ("SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>", "AutoVectorizingCopy"),
                    ("UniversalCopy<uint128_t>", "SM80_CP_ASYNC_CACHEALWAYS<uint64_t>")):
        for fn in ("make_tiled_copy_S", "make_tiled_copy_D"):
            case = gt.copy_case(rng, op, rng.choice(["half_t", "float"]))
            cases.append(dict(case, retarget={"fn": fn, "op": op2}))
    return cases + extra


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    incs = [find_cutlass_include()] + find_cuda_include()
    names = mma_atom_names(incs[0])
    rng = random.Random(SEED)
    small = atom_cases(names)
    big = tiled_cases(rng, names)
    cases = small + big
    print("%d cases (%d atom prints)" % (len(cases), len(small)), file=sys.stderr)
    numbered = list(enumerate(cases))
    chunks = [numbered[k:k + 60] for k in range(0, len(small), 60)]
    chunks += [numbered[k:k + gt.CHUNK] for k in range(len(small), len(cases), gt.CHUNK)]
    results = {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
        futs = [ex.submit(gt.run_chunk, n, ch, incs, "atoms-v1", any_cpp, "atoms") for n, ch in enumerate(chunks)]
        for k, f in enumerate(concurrent.futures.as_completed(futs)):
            results.update(f.result())
            print("chunk %d/%d done" % (k + 1, len(chunks)), file=sys.stderr)
    rows = []
    for i, c in enumerate(cases):
        r = results.get(i)
        if r is not None:
            rows.append(json.dumps(dict(c, id="%s-%04d" % (c["kind"], i), **r), sort_keys=True))
    with open(OUT, "w") as f:
        f.write("[\n" + ",\n".join(rows) + "\n]\n")
    print("wrote %s (%d cases, %d errors)" % (OUT, len(rows), sum('"error"' in r for r in rows)), file=sys.stderr)


if __name__ == "__main__":
    main()
