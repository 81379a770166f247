"""cutelite's MMA and copy atoms against compiled C++ CuTe (tests/oracle/atom_cases.json, made by
generate_atoms.py): print(MMA_Atom<Op>{}) and the bits of its value types for every non-GMMA MMA atom of
SM61-SM90, print(Copy_Atom<Op, T>{}) for the copy ops and several T, and TiledMMA/TiledCopy records
built from the atoms that tiled_cases.json does not cover (checked as test_tiled_oracle checks those).
Run as a script for a table of agreement per kind.
"""
import json
import os
import sys
from collections import Counter

import pytest

from cutelite import make_copy_atom, make_mma_atom

sys.path.insert(0, os.path.dirname(__file__))
from test_tiled_oracle import compare as compare_tiled  # noqa: E402

CASES_FILE = os.path.join(os.path.dirname(__file__), "oracle", "atom_cases.json")
CASES = json.load(open(CASES_FILE)) if os.path.exists(CASES_FILE) else []

# sizeof_bits of cutelite's element type names (C++'s ValTypeD/A/B/C)
BITS = {"float32": 32, "float16": 16, "bfloat16": 16, "tf32": 32, "float64": 64, "int8": 8, "uint8": 8,
        "int4": 4, "uint4": 4, "uint1": 1, "int16": 16, "int32": 32, "uint32": 32, "int64": 64,
        "float8_e4m3fn": 8, "float8_e5m2": 8, "complex128": 128, "gauss_complex128": 192}


def compute_atom(case):
    if case["kind"] == "mma_atom":
        atom = make_mma_atom(case["atom"])
        return {"print": str(atom), "bits": " ".join(str(BITS[t]) for t in atom.types)}
    atom = make_copy_atom(case["op"], case["value_type"])
    return {"print": str(atom), "num_val": "%d %d" % (atom.num_val_src, atom.num_val_dst)}


def compare(case):
    """[(key, expected, got)] for every key that differs; C++'s rejections must raise."""
    if case["kind"] not in ("mma_atom", "copy_atom"):
        return compare_tiled(case)
    if "error" in case:
        try:
            compute_atom(case)
        except (ValueError, TypeError):
            return []
        return [("error", case["error"], "no error")]
    try:
        got = compute_atom(case)
    except Exception as e:  # noqa: BLE001 - reported as a mismatch
        return [("exception", "", "%s: %s" % (type(e).__name__, e))]
    return [(k, v, got.get(k)) for k, v in case["expect"].items() if k != "threads" and got.get(k) != v]


@pytest.mark.skipif(not CASES, reason="tests/oracle/atom_cases.json not generated")
@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_atoms_against_cpp(case):
    bad = compare(case)
    assert not bad, "\n".join("%s:\n  C++:      %s\n  cutelite: %s" % b for b in bad[:5])


def main():
    ok, total, fails = Counter(), Counter(), Counter()
    shown = 0
    for case in CASES:
        bad = compare(case)
        total[case["kind"]] += 1
        ok[case["kind"]] += not bad
        for k, e, g in bad:
            fails[k.split(" ")[-1]] += 1
            if shown < int(os.environ.get("SHOW", "12")):
                print("%s %s\n  C++:      %s\n  cutelite: %s" % (case["id"], k, e, g))
                shown += 1
    for kind in total:
        print("%-10s %4d/%4d agree" % (kind, ok[kind], total[kind]))
    print("mismatching keys: %s" % dict(fails))


if __name__ == "__main__":
    sys.exit(main())
