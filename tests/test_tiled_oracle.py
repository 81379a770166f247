"""cutelite.tiled against compiled C++ CuTe (tests/oracle/tiled_cases.json, made by generate_tiled.py).

Each case is a TiledMMA (with the TiledCopies made from it) or a make_tiled_copy, and what C++ printed
for it: the object, its TV layouts, and per thread the partitions (layout and pointer offset),
fragments and retiles. Run as a script for a table of agreement per key.
"""
import json
import os
import sys
from collections import Counter

import numpy as np
import pytest

from cutelite import (
    Layout, Swizzle, _, composition, dyn, make_copy_atom, make_fragment_like, make_mma_atom, make_tensor,
    make_tiled_copy, make_tiled_copy_A, make_tiled_copy_B, make_tiled_copy_C, make_tiled_copy_C_atom,
    make_tiled_copy_D, make_tiled_copy_S, make_tiled_mma,
    partition_shape_C, size, tile_shape,
)
from cutelite.int_tuple import fmt

CASES_FILE = os.path.join(os.path.dirname(__file__), "oracle", "tiled_cases.json")
CASES = json.load(open(CASES_FILE)) if os.path.exists(CASES_FILE) else []


def tup(x):
    return tuple(tup(v) for v in x) if isinstance(x, list) else x


def with_dyn(t, positions):
    """t with the leaves at the given flat (depth-first) positions made run-time ints."""
    count = [-1]

    def go(x):
        if isinstance(x, tuple):
            return tuple(go(v) for v in x)
        count[0] += 1
        return dyn(x) if count[0] in positions else x
    return go(t)


def layout_of(spec):
    if spec["stride"] is None:
        lay = Layout(tup(spec["shape"]))
    else:
        d = spec.get("dyn") or {"shape": [], "stride": []}
        lay = Layout(with_dyn(tup(spec["shape"]), d["shape"]), with_dyn(tup(spec["stride"]), d["stride"]))
    if spec.get("swizzle"):
        lay = composition(Swizzle(*spec["swizzle"]), lay)
    return lay


def tensor_of(spec):
    return make_tensor(layout_of(spec), dtype=np.float32)


def perm_of(p):
    return _ if p == "_" else (p if isinstance(p, int) else layout_of(p))


def view(t):
    return [str(t.layout), t.offset]


def compute_mma(case):
    """What cutelite gives for every key C++ printed."""
    got = {}
    mma = make_tiled_mma(make_mma_atom(case["atom"]), layout_of(case["thr_layout"]),
                         tuple(perm_of(p) for p in case["perm"]))
    main = case["kind"] == "mma"      # an mma_copy case expects only its copy's keys
    t = {k: tensor_of(v) for k, v in case["tensors"].items()}
    if main:
        got["print"] = str(mma)
        got["A_TV"], got["B_TV"], got["C_TV"] = (str(mma.get_layoutA_TV()), str(mma.get_layoutB_TV()),
                                                 str(mma.get_layoutC_TV()))
        got["tile_shape"] = fmt(tile_shape(mma))
        got["size"] = fmt(size(mma))
        got["pshape_C"] = fmt(partition_shape_C(mma, t["C"].shape))
    make = {"A": make_tiled_copy_A, "B": make_tiled_copy_B, "C": make_tiled_copy_C,
            "make_tiled_copy_C_atom": make_tiled_copy_C_atom}
    copies = []
    for j, cp in enumerate(case["copies"]):
        key = "copy%d" % j
        if "expect" in case and key + "_print" not in case["expect"]:
            continue
        value_type = case["types"][1] if cp["operand"] == "C" else case["types"][0]
        tc = make[cp.get("fn", cp["operand"])](make_copy_atom(cp["op"], value_type), mma)
        got[key + "_print"] = str(tc)
        got[key + "_S_TV"], got[key + "_D_TV"] = str(tc.get_layoutS_TV()), str(tc.get_layoutD_TV())
        copies.append((key, cp["operand"], tc))
    got["threads"] = {}
    for thr_idx in case["threads"]:
        thr = mma.get_slice(thr_idx)
        g = got["threads"][str(thr_idx)] = {"thr_print": str(thr)} if main else {}
        static = {op: not case["tensors"][op].get("dyn") for op in "ABC"}   # C++ owns only static fragments
        for op in "ABC" if main else "":
            g["p" + op] = view(getattr(thr, "partition_" + op)(t[op]))
            if static[op]:
                g["f" + op] = str(getattr(thr, "partition_fragment_" + op)(t[op]).layout)
        for key, op, tc in copies:
            s = tc.get_slice(thr_idx)
            g[key + "_S"] = view(s.partition_S(t[op]))
            g[key + "_D"] = view(s.partition_D(t[op]))
            if static[op]:
                frag = getattr(thr, "partition_fragment_" + op)(t[op])
                g[key + "_retile_D"] = str(s.retile_D(frag).layout)
                g[key + "_retile_S"] = str(s.retile_S(frag).layout)
    return got


def compute_copy(case):
    got = {}
    tc = make_tiled_copy(make_copy_atom(case["op"], case["value_type"]), layout_of(case["thr_layout"]),
                         layout_of(case["val_layout"]))
    if case.get("retarget"):    # make_tiled_copy_S/D of another atom
        fn = {"make_tiled_copy_S": make_tiled_copy_S, "make_tiled_copy_D": make_tiled_copy_D}[case["retarget"]["fn"]]
        tc = fn(make_copy_atom(case["retarget"]["op"], case["value_type"]), tc)
    got["print"] = str(tc)
    got["S_TV"], got["D_TV"], got["size"] = str(tc.get_layoutS_TV()), str(tc.get_layoutD_TV()), fmt(size(tc))
    g_t = tensor_of(case["tensor"])
    got["threads"] = {}
    for thr_idx in case["threads"]:
        s = tc.get_slice(thr_idx)
        d = s.partition_D(g_t)
        got["threads"][str(thr_idx)] = g = {"S": view(s.partition_S(g_t)), "D": view(d), "thr_print": str(s)}
        if not case["tensor"].get("dyn"):
            g["retile_D"] = str(s.retile_D(make_fragment_like(d)).layout)
            g["retile_S"] = str(s.retile_S(make_fragment_like(s.partition_S(g_t))).layout)
    return got


def compare(case):
    """[(key, expected, got)] for every key that differs; C++'s rejections must raise."""
    fn = compute_copy if case["kind"] == "copy" else compute_mma
    if "error" in case:
        try:
            fn(case)
        except (ValueError, TypeError):
            return []
        return [("error", case["error"], "no error")]
    try:
        got = fn(case)
    except Exception as e:  # noqa: BLE001 - reported as a mismatch
        return [("exception", "", "%s: %s" % (type(e).__name__, e))]
    exp = case["expect"]
    bad = []
    for k, v in exp.items():
        if k == "threads":
            for t, kv in v.items():
                for k2, v2 in kv.items():
                    if got["threads"].get(t, {}).get(k2) != v2:
                        bad.append(("thread %s %s" % (t, k2), v2, got["threads"].get(t, {}).get(k2)))
        elif got.get(k) != v:
            bad.append((k, v, got.get(k)))
    return bad


@pytest.mark.skipif(not CASES, reason="tests/oracle/tiled_cases.json not generated")
@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_tiled_against_cpp(case):
    bad = compare(case)
    assert not bad, "\n".join("%s:\n  C++:      %s\n  cutelite: %s" % b for b in bad[:5])


def main():
    per_key, fails = Counter(), Counter()
    shown = 0
    for case in CASES:
        bad = compare(case)
        for k, e, g in bad:
            key = k.split(" ")[-1]
            fails[key] += 1
            if shown < int(os.environ.get("SHOW", "12")):
                print("%s %s\n  C++:      %s\n  cutelite: %s" % (case["id"], k, e, g))
                shown += 1
        per_key[case["kind"]] += 1
    ok = sum(1 for c in CASES if not compare(c))
    print("%d/%d cases agree; mismatching keys: %s" % (ok, len(CASES), dict(fails)))


if __name__ == "__main__":
    sys.exit(main())
