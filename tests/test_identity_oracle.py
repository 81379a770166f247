"""Identity tensors against compiled C++ CuTe (tests/oracle/identity_cases.json, made by
tests/oracle/generate_identity.py): ScaledBasis/ArithmeticTuple printing and arithmetic, identity layouts
and tensors, their algebra, and TiledMMA/TiledCopy partitions with elem_less predicates. Each case holds
the text C++ printed per key; cutelite must print the same. Run as a script for a table of agreement.
"""
import json
import os
import sys
from collections import Counter

import pytest

import cutelite
from cutelite import (
    E, Layout, LayoutLeft, LayoutRight, _, coalesce, coprofile, coshape, composition, cosize, dyn, elem_less, filter, flat_divide, local_partition,
    local_tile, logical_divide, make_copy_atom, make_identity_layout, make_layout, make_identity_tensor, make_mma_atom,
    make_tiled_copy, make_tiled_mma, size, tiled_divide, zipped_divide,
)
from cutelite.int_tuple import crd2idx, fmt, iabs
from test_tiled_oracle import layout_of, perm_of, tup, with_dyn

CASES_FILE = os.path.join(os.path.dirname(__file__), "oracle", "identity_cases.json")
CASES = json.load(open(CASES_FILE)) if os.path.exists(CASES_FILE) else []


def shape_of(spec):
    return with_dyn(tup(spec["shape"]), spec["dyn"])


def coord_of(c):
    return tuple(_ if x == "_" else dyn(x) for x in c)


def text(x):
    return fmt(x) if not hasattr(x, "layout") and not isinstance(x, Layout) else str(x)


def value(layout, i):
    """layout(i) as C++ computes it, keeping the kinds (Layout.__call__ gives plain ints)."""
    return crd2idx(i, layout.shape, layout.stride)


def bits(t, bound):
    b = dyn(tuple(bound))
    return "".join(str(int(elem_less(t(dyn(i)), b))) for i in range(size(t)))


def compute(case):
    k, got = case["kind"], {}
    if k == "expr":
        names = dict(vars(cutelite), iabs=iabs)
        got["value"] = text(eval(case["py"], names))   # noqa: S307 - the fixture's own expressions
        return got
    if k in ("identity", "compose", "divide"):
        shp = shape_of(case["shape"])
        L, T = make_identity_layout(shp), make_identity_tensor(shp)
    if k == "identity":
        got.update(L=str(L), T=str(T), coalesce=str(coalesce(L)), filter=str(filter(L)), coprofile=fmt(coprofile(L)),
                   coshape=fmt(coshape(L)), cosize=fmt(cosize(L)))
        for p in case["points"]:
            got["L_d%d" % p], got["L_s%d" % p], got["T_d%d" % p] = text(value(L, dyn(p))), text(value(L, p)), text(T(dyn(p)))
        for j, s in enumerate(case["slices"]):
            got["slice%d" % j] = str(T(*coord_of(s)))
    elif k == "compose":
        B = layout_of(case["B"])
        R = composition(L, B)
        got["R"], got["RT"] = str(R), str(composition(T, B))
        for p in case["points"]:
            if p < size(R):
                got["R_d%d" % p] = text(value(R, dyn(p)))
    elif k == "compose_right":
        A = make_layout(shape_of(case["shape"]), LayoutLeft if case["major"] == "left" else LayoutRight)
        B = Layout(tuple(case["B"]["shape"]), tuple(d * E(*m) for d, m in case["B"]["stride"]))
        got["A"], got["B"], got["R"] = str(A), str(B), str(composition(A, B))
    elif k == "divide":
        tiler = tuple(t if isinstance(t, int) else layout_of(t) for t in case["tiler"])
        for name, fn in (("logical_divide", logical_divide), ("zipped_divide", zipped_divide),
                         ("tiled_divide", tiled_divide), ("flat_divide", flat_divide)):
            got[name] = str(fn(T, tiler))
        if "tile_coord" in case:
            got["local_tile"] = str(local_tile(T, tiler, coord_of(case["tile_coord"])))
            got["local_partition"] = str(local_partition(T, layout_of(case["thr_layout"]), dyn(case["thr_idx"])))
    elif k == "mma":
        mma = make_tiled_mma(make_mma_atom(case["atom"]), layout_of(case["thr_layout"]),
                             tuple(perm_of(p) for p in case["perm"]))
        c = {op: make_identity_tensor(shape_of(case["shapes"][op])) for op in "ABC"}
        extra = [9] * (len(case["shapes"]["C"]["shape"]) - 2)
        got["threads"] = {}
        for t in case["threads"]:
            thr = mma.get_slice(t)
            pA, pC = thr.partition_A(c["A"]), thr.partition_C(c["C"])
            got["threads"][str(t)] = {"pA": str(pA), "pB": str(thr.partition_B(c["B"])), "pC": str(pC),
                                      "predC": bits(pC, case["bounds"]["C"] + extra),
                                      "predA": bits(pA, case["bounds"]["A"])}
    elif k == "copy":
        tc = make_tiled_copy(make_copy_atom(case["op"], case["value_type"]), layout_of(case["thr_layout"]),
                             layout_of(case["val_layout"]))
        cT = make_identity_tensor(shape_of(case["shape"]))
        got["threads"] = {}
        for t in case["threads"]:
            s = tc.get_slice(t)
            pS = s.partition_S(cT)
            got["threads"][str(t)] = {"S": str(pS), "D": str(s.partition_D(cT)), "predS": bits(pS, case["bound"])}
    return got


def compare(case):
    """[(key, expected, got)] for every key that differs; C++'s rejections must raise."""
    if "error" in case:
        try:
            compute(case)
        except (ValueError, TypeError):
            return []
        return [("error", case["error"], "no error")]
    try:
        got = compute(case)
    except Exception as e:  # noqa: BLE001 - reported as a mismatch
        return [("exception", "", "%s: %s" % (type(e).__name__, e))]
    bad = []
    for k, v in case["expect"].items():
        if k == "threads":
            for t, kv in v.items():
                for k2, v2 in kv.items():
                    g = got.get("threads", {}).get(t, {}).get(k2)
                    if g != v2:
                        bad.append(("thread %s %s" % (t, k2), v2, g))
        elif got.get(k) != v:
            bad.append((k, v, got.get(k)))
    return bad


@pytest.mark.skipif(not CASES, reason="tests/oracle/identity_cases.json not generated")
@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_identity_against_cpp(case):
    bad = compare(case)
    assert not bad, "\n".join("%s:\n  C++:      %s\n  cutelite: %s" % b for b in bad[:5])


def main():
    fails, shown = Counter(), 0
    for case in CASES:
        for k, e, g in compare(case):
            fails[(case["kind"], k.split(" ")[-1])] += 1
            if shown < int(os.environ.get("SHOW", "12")):
                print("%s %s\n  C++:      %s\n  cutelite: %s" % (case["id"], k, e, g))
                shown += 1
    ok = sum(1 for c in CASES if not compare(c))
    print("%d/%d cases agree; mismatching keys: %s" % (ok, len(CASES), dict(fails)))


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.exit(main())
