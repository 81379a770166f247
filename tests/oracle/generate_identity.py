#!/usr/bin/env python3
"""Differential oracle for identity tensors: what compiled C++ CuTe prints for ScaledBasis strides,
ArithmeticTuples, make_identity_layout/make_identity_tensor and their partitions.

Writes tests/oracle/identity_cases.json, one case per line, each with C++'s printed text per key:

- expr:     a ScaledBasis / ArithmeticTuple expression (printing and arithmetic);
- identity: make_identity_layout and make_identity_tensor of a random shape (rank 1-3, nested modes,
            static and run-time extents): the layout, the tensor, coalesce, filter, coprofile, coshape,
            cosize, values at a few indices (run-time and static), slices with _;
- compose:  composition of the identity layout (and tensor) with a random ordinary layout, and values;
- compose_right: composition of an ordinary layout with one whose strides are scaled bases;
- divide:   logical/zipped/tiled/flat_divide of the identity tensor by a tiler of ints and layouts,
            local_tile and local_partition;
- mma:      a TiledMMA (generate_tiled's configurations) partitioning identity tensors of A, B, C for a
            few threads, and elem_less of each of C's and A's coordinates against a run-time bound;
- copy:     a make_tiled_copy partitioning an identity tensor (partition_S/D), with elem_less bits.

Cases C++ rejects at compile time are recorded with the static_assert's message. Expected text comes
from the compiled C++ only. Usage: python tests/oracle/generate_identity.py [--jobs 2] (a few minutes).
"""
import argparse
import concurrent.futures
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generate_tiled as gt  # noqa: E402
from generate import find_cuda_include, find_cutlass_include  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "identity_cases.json")
SEED = 20261205
CHUNK = 16

EXPRS = [  # (C++ expression, the same in Python over cutelite's names)
    ("E<0>{}", "E(0)"), ("E<1>{}", "E(1)"), ("E<>{}", "E()"), ("E<1,0>{}", "E(1, 0)"), ("E<0,1>{}", "E(0, 1)"),
    ("E<2,0,1>{}", "E(2, 0, 1)"),
    ("Int<3>{} * E<1>{}", "3 * E(1)"), ("int(3) * E<1>{}", "dyn(3) * E(1)"), ("E<0>{} * Int<0>{}", "E(0) * 0"),
    ("int(0) * E<0>{}", "dyn(0) * E(0)"), ("E<0>{} * int(2)", "E(0) * dyn(2)"), ("Int<4>{} * E<1,0>{}", "4 * E(1, 0)"),
    ("E<0>{} + E<1>{}", "E(0) + E(1)"), ("E<1>{} + E<0>{}", "E(1) + E(0)"), ("E<0,1>{} + E<1>{}", "E(0, 1) + E(1)"),
    ("Int<2>{} * E<0>{} + int(3) * E<0>{}", "2 * E(0) + dyn(3) * E(0)"), ("Int<0>{} + E<2>{}", "0 + E(2)"),
    ("E<2>{} + Int<0>{}", "E(2) + 0"), ("int(5) * E<>{} + Int<2>{}", "dyn(5) * E() + 2"),
    ("E<1>{} + E<0,1>{} + E<0,0>{}", "E(1) + E(0, 1) + E(0, 0)"),
    ("as_arithmetic_tuple(E<0,1>{})", "as_arithmetic_tuple(E(0, 1))"), ("as_arithmetic_tuple(E<2>{})", "as_arithmetic_tuple(E(2))"),
    ("as_arithmetic_tuple(int(7) * E<>{})", "as_arithmetic_tuple(dyn(7) * E())"),
    ("make_arithmetic_tuple(1, Int<2>{}) + make_tuple(Int<0>{}, 3, 4)", "ArithmeticTuple((dyn(1), 2)) + (0, dyn(3), dyn(4))"),
    ("make_arithmetic_tuple(1, Int<2>{}) + E<2>{}", "ArithmeticTuple((dyn(1), 2)) + E(2)"),
    ("make_arithmetic_tuple(1, Int<2>{}) + Int<0>{}", "ArithmeticTuple((dyn(1), 2)) + 0"),
    ("abs(int(-2) * E<1>{})", "iabs(dyn(-2) * E(1))"),
    ("make_inttuple_iter(make_tuple(Int<0>{}, Int<0>{}))", "ArithmeticTupleIterator(ArithmeticTuple((0, 0)))"),
    ("make_inttuple_iter(make_tuple(Int<0>{}, Int<0>{})) + int(3) * E<1>{}",
     "ArithmeticTupleIterator(ArithmeticTuple((0, 0))) + dyn(3) * E(1)"),
    ("make_inttuple_iter(Int<0>{}) + int(3) * E<>{}", "ArithmeticTupleIterator(0) + dyn(3) * E()"),
    ("make_basis_like(make_shape(make_shape(2, 3), 4))", "make_basis_like(((2, 3), 4))"),
    ("coprofile(make_layout(make_shape(4, 8)))", "coprofile(Layout(dyn((4, 8))))"),
    ("coshape(make_layout(make_shape(Int<4>{}, Int<8>{}), make_stride(E<0>{}, Int<4>{} * E<0>{})))",
     "coshape(Layout((4, 8), (E(0), 4 * E(0))))"),
    ("coshape(make_layout(make_shape(Int<4>{}, 8), make_stride(E<1>{}, Int<2>{} * E<0>{})))",
     "coshape(Layout((4, dyn(8)), (E(1), 2 * E(0))))"),
    ("make_layout(make_shape(Int<4>{}, Int<8>{}), make_stride(E<1>{}, E<0>{}))(int(9))",
     "Layout((4, 8), (E(1), E(0)))(dyn(9))"),
    ("coalesce(make_layout(make_shape(Int<4>{}, Int<8>{}), make_stride(E<0>{}, Int<4>{} * E<0>{})))",
     "coalesce(Layout((4, 8), (E(0), 4 * E(0))))"),
    ("coalesce(make_layout(make_shape(Int<4>{}, Int<8>{}, Int<2>{}), make_stride(Int<2>{} * E<1>{}, Int<8>{} * E<1>{}, E<0>{})))",
     "coalesce(Layout((4, 8, 2), (2 * E(1), 8 * E(1), E(0))))"),
]

EXTENTS = [2, 3, 4, 6, 8, 12, 16]


# ---- shapes ----------------------------------------------------------------------------------------------
def flat(t):
    return [y for x in t for y in flat(x)] if isinstance(t, tuple) else [t]


def prod(t):
    p = 1
    for v in flat(t):
        p *= v
    return p


def rand_shape(rng):
    """A shape of rank 1-3 (or an int), a mode sometimes nested; some extents run-time."""
    r = rng.choice([0, 1, 2, 2, 2, 3, 3])
    if r == 0:
        shape = rng.choice(EXTENTS)
    else:
        shape = tuple((rng.choice([2, 3, 4]), rng.choice([2, 4])) if rng.random() < 0.2 else rng.choice(EXTENTS)
                      for _ in range(r))
    n = len(flat(shape))
    dyn = [] if rng.random() < 0.5 else sorted(i for i in range(n) if rng.random() < 0.6)
    return {"shape": shape, "dyn": dyn}


def cpp_shape(spec):
    return gt.cpp_make(spec["shape"], "make_shape", spec["dyn"], [0])


def json_shape(spec):
    return {"shape": gt.js(spec["shape"]), "dyn": spec["dyn"]}


def modes(shape):
    return shape if isinstance(shape, tuple) else (shape,)


# ---- cases ---------------------------------------------------------------------------------------------
def identity_case(rng):
    spec = rand_shape(rng)
    n = prod(spec["shape"])
    points = sorted({0, n - 1} | {rng.randrange(n) for _ in range(3)})
    slices = []
    if isinstance(spec["shape"], tuple) and len(spec["shape"]) >= 2:
        for _ in range(2):
            k = rng.randrange(len(spec["shape"]))
            coord = ["_"] * len(spec["shape"])
            coord[k] = rng.randrange(prod(spec["shape"][k]))
            slices.append(coord)
    return {"kind": "identity", "shape": spec, "points": points, "slices": slices}


def rand_ordinary(rng, n):
    """An ordinary layout into [0, n): a compact layout of a factorization of n (or of a divisor of n)
    with its modes in random order."""
    factors = []
    m = n if rng.random() < 0.7 else max(d for d in range(1, n + 1) if n % d == 0 and (d < n or n == 1))
    for p in (2, 3):
        while m % p == 0:
            factors.append(p)
            m //= p
    if m > 1:
        factors.append(m)
    rng.shuffle(factors)
    groups = []
    while factors:
        k = rng.choice([1, 2])
        g = factors[:k]
        factors = factors[k:]
        groups.append(prod(tuple(g)))
    if not groups:
        groups = [1]
    order = list(range(len(groups)))
    rng.shuffle(order)
    stride = [0] * len(groups)
    acc = 1
    for i in order:
        stride[i] = acc
        acc *= groups[i]
    return gt.lay(tuple(groups), tuple(stride))


def compose_case(rng):
    spec = rand_shape(rng)
    b = rand_ordinary(rng, prod(spec["shape"]))
    nb = prod(b["shape"])
    return {"kind": "compose", "shape": spec, "B": b, "points": sorted({0, nb - 1, rng.randrange(nb)})}


def compose_right_case(rng):
    """composition(A, B) of an ordinary A (rank 2-3, a mode sometimes nested, some extents run-time) with
    a B whose strides are scaled bases d@m naming A's modes (C++ composes mode m of A with stride d)."""
    spec = rand_shape(rng)
    while not isinstance(spec["shape"], tuple) or len(spec["shape"]) < 2:
        spec = rand_shape(rng)
    shp = spec["shape"]
    leaves = [((i,), m) if not isinstance(m, tuple) else None for i, m in enumerate(shp)]
    leaves = [x for x in leaves if x] + [((i, j), e) for i, m in enumerate(shp) if isinstance(m, tuple)
                                         for j, e in enumerate(m)]
    major = rng.choice(["left", "right"])
    b_shape, b_stride = [], []
    for _ in range(rng.randint(1, 3)):
        path, n = rng.choice(leaves)
        d = rng.choice([x for x in range(1, n) if n % x == 0] or [1])       # a stride that leaves room
        b_shape.append(rng.choice([x for x in range(2, n // d + 1) if (n // d) % x == 0] or [1]))
        b_stride.append((d, list(path)))
    return {"kind": "compose_right", "shape": spec, "major": major, "B": {"shape": b_shape, "stride": b_stride}}


def divide_case(rng):
    spec = rand_shape(rng)
    shp = modes(spec["shape"])
    k = rng.randint(1, len(shp))
    tiler = []
    for s in shp[:k]:
        n = prod(s)
        divs = [d for d in range(1, n + 1) if n % d == 0]
        d = rng.choice(divs)
        if rng.random() < 0.25 and d > 1 and n % (d * 2) == 0:
            tiler.append(gt.lay(d, 2))          # every other element, d of them
        else:
            tiler.append(d)
    case = {"kind": "divide", "shape": spec, "tiler": tiler}
    if all(isinstance(t, int) for t in tiler) and k == len(shp):
        case["tile_coord"] = [rng.randrange(prod(s) // t) for s, t in zip(shp, tiler)]
        thr_shape, stride = tuple(tiler), None
        if rng.random() < 0.5:              # row-major threads
            acc, st = 1, []
            for t in reversed(thr_shape):
                st.append(acc)
                acc *= t
            stride = tuple(reversed(st))
        case["thr_layout"] = gt.lay(thr_shape, stride)
        case["thr_idx"] = rng.randrange(prod(thr_shape))
    return case


def mma_case(rng, atom_name):
    import cutelite
    tab, tc = gt.MMA_ATOMS[atom_name]
    atom = cutelite.make_mma_atom(atom_name)
    layouts = gt.FMA_LAYOUTS if atom_name.startswith("Universal") else gt.ATOM_LAYOUTS
    c = gt.mma_case(rng, atom_name, (tab, tc), atom.Shape_MNK, cutelite.size(atom.ThrID), layouts)
    mma = cutelite.make_tiled_mma(atom, cutelite.Layout(c["thr_layout"]["shape"], c["thr_layout"]["stride"]),
                                  tuple(cutelite._ if p == "_" else p if isinstance(p, int) else
                                        cutelite.Layout(p["shape"], p["stride"]) for p in c["perm"]))
    M, N, K = (cutelite.tile_size(mma, i) for i in range(3))
    r = [rng.choice([1, 2]) for _ in range(3)]
    dyn = rng.random() < 0.5
    shapes = {"A": (M * r[0], K * r[2]), "B": (N * r[1], K * r[2]), "C": (M * r[0], N * r[1])}
    if rng.random() < 0.2:
        shapes["C"] = shapes["C"] + (2,)
    bounds = {op: [rng.randint(1, s) for s in shapes[op][:2]] for op in "AC"}
    return {"kind": "mma", "atom": atom_name, "thr_layout": c["thr_layout"], "perm": c["perm"],
            "shapes": {op: {"shape": s, "dyn": list(range(len(s))) if dyn else []} for op, s in shapes.items()},
            "bounds": bounds, "threads": c["threads"]}


def copy_case(rng):
    """A make_tiled_copy of a universal or cp.async atom; mostly one whose atom fits the values each
    thread holds (C++ rejects the others, and a few of those are kept as error cases)."""
    while True:
        op = rng.choice(gt.UNIVERSAL)
        vt = rng.choice(["half_t", "float"])
        c = gt.copy_case(rng, op, vt)
        op_bits = int(op.split("<uint")[1].split("_t")[0])
        bits = prod(tuple(c["val_layout"]["shape"])) * {"half_t": 16, "float": 32}[vt]
        if (bits % op_bits == 0 and op_bits >= {"half_t": 16, "float": 32}[vt]) or rng.random() < 0.1:
            break
    shape = tuple(c["tensor"]["shape"])
    dyn = list(range(len(shape))) if rng.random() < 0.5 else []
    return {"kind": "copy", "op": op, "value_type": vt, "thr_layout": c["thr_layout"], "val_layout": c["val_layout"],
            "shape": {"shape": shape, "dyn": dyn}, "bound": [rng.randint(1, s) for s in shape],
            "threads": c["threads"]}


def all_cases(rng):
    cases = [{"kind": "expr", "cpp": c, "py": p} for c, p in EXPRS]
    cases += [identity_case(rng) for _ in range(70)]
    cases += [compose_case(rng) for _ in range(60)]
    cases += [divide_case(rng) for _ in range(80)]
    atoms = list(gt.MMA_ATOMS)
    cases += [mma_case(rng, atoms[k % len(atoms)]) for k in range(42)]
    cases += [copy_case(rng) for _ in range(30)]
    cases += [compose_right_case(rng) for _ in range(40)]
    return cases


# ---- C++ -----------------------------------------------------------------------------------------------
def cpp_coord(coord):
    if isinstance(coord, list):
        return "make_coord(%s)" % ", ".join(cpp_coord(c) for c in coord)
    return "_" if coord == "_" else "int(%d)" % coord


def cpp_tiler_entry(t):
    return "Int<%d>{}" % t if isinstance(t, int) else gt.cpp_layout(t)


def bits(name, tensor, bound):
    """C++ printing elem_less(tensor(i), bound) for every i as a string of 0/1."""
    return ['  { auto p_ = %s; auto b_ = make_shape(%s); printf("@%s ");' % (tensor, ", ".join("int(%d)" % b for b in bound), name),
            '    for (int i = 0; i < size(p_); ++i) printf("%d", int(bool(elem_less(p_(i), b_)))); printf("\\n"); }']


def case_cpp(i, c):
    out = ["void case_%d() {" % i, '  printf("@@BEGIN %d\\n");' % i]
    k = c["kind"]
    if k == "expr":
        out.append('  P("value", %s);' % c["cpp"])
    elif k in ("identity", "compose", "divide"):
        out += ["  auto shp = %s;" % cpp_shape(c["shape"]),
                "  auto L = make_identity_layout(shp);", "  auto T = make_identity_tensor(shp);"]
    if k == "identity":
        out += ['  P("L", L); P("T", T); P("coalesce", coalesce(L)); P("filter", filter(L));',
                '  P("coprofile", coprofile(L)); P("coshape", coshape(L)); P("cosize", cosize(L));']
        for p in c["points"]:
            out.append('  P("L_d%d", L(int(%d))); P("L_s%d", L(Int<%d>{})); P("T_d%d", T(int(%d)));' % (p, p, p, p, p, p))
        for j, s in enumerate(c["slices"]):
            out.append('  P("slice%d", T(%s));' % (j, ", ".join(cpp_coord(x) for x in s)))
    elif k == "compose":
        out += ["  auto B = %s;" % gt.cpp_layout(c["B"]), "  auto R = composition(L, B);",
                '  P("R", R); P("RT", composition(T, B));']
        for p in c["points"]:
            out.append('  if (%d < size(R)) P("R_d%d", R(int(%d)));' % (p, p, p))
    elif k == "compose_right":
        major = "LayoutLeft" if c["major"] == "left" else "LayoutRight"
        bs, bd = c["B"]["shape"], c["B"]["stride"]
        out += ["  auto A = make_layout(%s, %s{});" % (cpp_shape(c["shape"]), major),
                "  auto B = make_layout(make_shape(%s), make_stride(%s));" % (
                    ", ".join("Int<%d>{}" % x for x in bs),
                    ", ".join("Int<%d>{} * E<%s>{}" % (d, ",".join(map(str, m))) for d, m in bd)),
                '  P("A", A); P("B", B); P("R", composition(A, B));']
    elif k == "divide":
        out += ["  auto tiler = make_tile(%s);" % ", ".join(cpp_tiler_entry(t) for t in c["tiler"]),
                '  P("logical_divide", logical_divide(T, tiler)); P("zipped_divide", zipped_divide(T, tiler));',
                '  P("tiled_divide", tiled_divide(T, tiler)); P("flat_divide", flat_divide(T, tiler));']
        if "tile_coord" in c:
            out.append('  P("local_tile", local_tile(T, tiler, %s));' % cpp_coord(c["tile_coord"]))
            out.append('  P("local_partition", local_partition(T, %s, int(%d)));' % (gt.cpp_layout(c["thr_layout"]), c["thr_idx"]))
    elif k == "mma":
        perm = c["perm"] + ["_"] * (3 - len(c["perm"]))
        out.append("  auto mma = make_tiled_mma(MMA_Atom<%s>{}, %s, Tile<%s>{});"
                   % (c["atom"], gt.cpp_layout(c["thr_layout"]), ",".join(gt.cpp_perm(p) for p in perm)))
        for op in "ABC":
            out.append("  auto c%s = make_identity_tensor(%s);" % (op, cpp_shape(c["shapes"][op])))
        out.append("  for (int t : {%s}) {" % ",".join(str(t) for t in c["threads"]))
        out += ['    printf("@thread %d\\n", t);', "    auto thr = mma.get_slice(t);",
                '    P("pA", thr.partition_A(cA)); P("pB", thr.partition_B(cB)); P("pC", thr.partition_C(cC));']
        out += bits("predC", "thr.partition_C(cC)", c["bounds"]["C"] + [9] * (len(c["shapes"]["C"]["shape"]) - 2))
        out += bits("predA", "thr.partition_A(cA)", c["bounds"]["A"])
        out.append("  }")
    elif k == "copy":
        out += ["  auto tc = make_tiled_copy(Copy_Atom<%s, %s>{}, %s, %s);" % (
                    c["op"], c["value_type"], gt.cpp_layout(c["thr_layout"]), gt.cpp_layout(c["val_layout"])),
                "  auto cT = make_identity_tensor(%s);" % cpp_shape(c["shape"]),
                "  for (int t : {%s}) {" % ",".join(str(t) for t in c["threads"]),
                '    printf("@thread %d\\n", t);', "    auto s = tc.get_slice(t);",
                '    P("S", s.partition_S(cT)); P("D", s.partition_D(cT));']
        out += bits("predS", "s.partition_S(cT)", c["bound"])
        out.append("  }")
    out += ['  printf("@@END %d\\n");' % i, "}"]
    return out


def to_json(c):
    c = dict(c)
    for key in ("shape",):
        if key in c:
            c[key] = json_shape(c[key])
    if "shapes" in c:
        c["shapes"] = {op: json_shape(s) for op, s in c["shapes"].items()}
    return c


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    incs = [find_cutlass_include()] + find_cuda_include()
    cases = all_cases(random.Random(SEED))
    print("%d cases" % len(cases), file=sys.stderr)
    numbered = list(enumerate(cases))
    chunks = [numbered[k:k + CHUNK] for k in range(0, len(cases), CHUNK)]
    results = {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
        futs = [ex.submit(gt.run_chunk, n, ch, incs, "identity-v1", case_cpp, "identity") for n, ch in enumerate(chunks)]
        for k, f in enumerate(concurrent.futures.as_completed(futs)):
            results.update(f.result())
            print("chunk %d/%d done" % (k + 1, len(chunks)), file=sys.stderr)
    rows = []
    for i, c in enumerate(cases):
        r = results.get(i)
        if r is not None:
            rows.append(json.dumps(dict(to_json(c), id="%s-%04d" % (c["kind"], i), **r), sort_keys=True))
    with open(OUT, "w") as f:
        f.write("[\n" + ",\n".join(rows) + "\n]\n")
    print("wrote %s (%d cases, %d errors)" % (OUT, len(rows), sum('"error"' in r for r in rows)), file=sys.stderr)


if __name__ == "__main__":
    main()
