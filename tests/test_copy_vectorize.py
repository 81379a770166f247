"""Which ldmatrix copies C++ CuTe compiles, against compiled C++ (tests/fixtures/ldsm_copy_cpp.txt, made by
gen_ldsm_copy.sh): chapter 6's TiledMMA, an LDSM_T or LDSM_N TiledCopy made from it, a (128, 32) half tile
of A in shared memory with six strides. C++ compiles copy(tiled_copy, tXsA, tXrA) exactly where each call's
values vectorize into ldmatrix's registers (copy_unpack), whether or not a row starts 16-byte aligned.
cutelite's copy_all refuses what C++ refuses and nothing else; vector_report's `contiguous` is C++'s verdict,
its `aligned` the hardware's; copy_vectors gives each thread's row addresses as C++ computes them."""

import numpy as np
import pytest

from cpp_fixture import blocks
from cutelite import Layout, make_copy_atom, make_mma_atom, make_tensor, make_tiled_copy_A, make_tiled_mma
from cutelite.algorithm import copy_all, copy_vectors, vector_report
from cutelite.teach.cpp_recorded import CPP_LDSM_COPY

CASES = blocks("ldsm_copy_cpp.txt")
COPIES = [k for k in CASES if not k.startswith("nvcc")]


def _case(key):
    op, strides = key.split(" ")
    sm, sk = (int(x) for x in strides.strip("()").split(","))
    mma = make_tiled_mma(make_mma_atom("SM80_16x8x16_F16F16F16F16_TN"), Layout((2, 2, 1)), (32, 32, 16))
    return mma, make_tiled_copy_A(make_copy_atom(op, "half_t"), mma), Layout((128, 32), (sm, sk))


def test_the_fixture_has_every_case_and_the_package_its_verdicts():
    assert len(COPIES) == 12 and sum(CASES[k].startswith("compiles") for k in COPIES) == 6
    assert CPP_LDSM_COPY == {k: CASES[k].splitlines()[0] for k in COPIES}


@pytest.mark.parametrize("key", COPIES)
def test_copy_all_refuses_what_cpp_refuses(key):
    mma, tc, layout = _case(key)
    sA = make_tensor(np.arange(128 * 40, dtype=np.float32), layout)
    frags = [mma.get_slice(t).partition_fragment_A(sA) for t in range(128)]
    run = lambda: copy_all(tc, [tc.get_slice(t).partition_S(sA) for t in range(128)],      # noqa: E731
                           [tc.get_slice(t).retile_D(f) for t, f in enumerate(frags)])
    cpp = CASES[key].splitlines()[0]
    if cpp == "compiles":
        run()
        want = [mma.get_slice(t).partition_A(sA).to_numpy() for t in range(128)]
        assert all(np.array_equal(f.to_numpy(), w) for f, w in zip(frags, want))
    else:
        words = "failed to vectorize" if "vectorize" in cpp else "Divisibility condition"
        with pytest.raises(ValueError, match=words):
            run()


@pytest.mark.parametrize("key", COPIES)
def test_vector_report_and_row_addresses_are_cpps(key):
    _, tc, layout = _case(key)
    lines = CASES[key].splitlines()
    report = vector_report(tc, layout, 16)
    assert report["contiguous"] == (lines[0] == "compiles")
    if lines[0] == "compiles":
        rows = {int(t): [int(x) for x in offs.split()] for t, offs in (ln.split(":") for ln in lines[1:])}
        mine = copy_vectors(tc, layout)
        assert all([call[0] for call in mine[t]] == rows[t] for t in range(128))
        assert report["aligned"] == all(o % 8 == 0 for offs in rows.values() for o in offs)


def test_the_misaligned_copy_compiles_for_the_gpu():
    key = "nvcc -arch=sm_80 SM75_U16x8_LDSM_T (1,129)"
    assert CASES[key].strip() == "compiles: 8 ldmatrix.x4.trans"          # 4 calls along M x 2 along K
    _, tc, layout = _case("SM75_U16x8_LDSM_T (1,129)")
    assert not vector_report(tc, layout, 16)["aligned"]
