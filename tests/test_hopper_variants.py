"""kernels.hopper.variants, what `python -m kernels.hopper` checks beside the ladder (issue 30), without a GPU and
without a build: the variants cover the cluster shapes, split-K and the epilogue options; every split-K shape
gives each split a k-tile; the reference is the epilogue's formula; a check starts from a poisoned output, or
from C's bits where beta reads them; a name that picks nothing is refused with the names that would."""

import numpy as np
import pytest

pytestmark = pytest.mark.numba("simulator")


def test_the_variants_cover_clusters_split_k_and_every_epilogue_option():
    from kernels.hopper import EXPLORE, LADDER
    from kernels.hopper.variants import VARIANTS
    names = [v.name for v in VARIANTS]
    assert len(set(names)) == len(names) == 5            # five builds, about a minute each, in parallel
    assert {v.config["cluster"] for v in VARIANTS if "cluster" in v.config} == {(2, 1), (1, 2)}
    assert sum(bool(v.config.get("split_k")) for v in VARIANTS) == 1
    epis = [v.epi for v in VARIANTS if v.epi]
    assert {e.out for e in epis} == {"bfloat16", "float16"} and {e.bias for e in epis} == {"row", "col"}
    assert {e.activation for e in epis} == {"relu", "gelu"} and any(e.alpha for e in epis) and any(e.beta for e in epis)
    for word in ("cluster", "split-K", "epilogue"):      # `python -m kernels.hopper cluster split-K epilogue`
        assert any(word in n for n in names) and not any(word in s.name for s in LADDER + EXPLORE)


def test_every_split_k_shape_gives_each_split_a_k_tile():
    """HopperGemm.check_splits (the kernel's rule) accepts each shape's splits, with the 64-element k-tile of
    16-bit inputs (128 bytes); and each of them splits K."""
    from types import SimpleNamespace

    from kernels.hopper import HopperGemm
    from kernels.hopper.variants import VARIANTS
    kernel = SimpleNamespace(kernel=SimpleNamespace(tile=(64, 128, 64)))
    for v in VARIANTS:
        if v.config.get("split_k"):
            for M, N, K, splits in v.shapes:
                assert splits > 1
                HopperGemm.check_splits(kernel, K, splits)


def test_reference_is_the_epilogue():
    """D = act(alpha A @ Bt.T + beta C + bias), GELU in its tanh form: within 2e-4 of x Phi(x) at x = 1
    (Phi(1) = 0.8413447460685429, the standard normal CDF)."""
    from kernels.hopper.variants import reference
    A, Bt = np.array([[1.0, 2.0]], np.float16), np.array([[3.0, 4.0], [1.0, -1.0]], np.float16)   # A @ Bt.T = [11, -1]
    C, bias = np.array([[1.0, 2.0]]), np.array([0.5, 0.25])
    assert np.array_equal(reference(A, Bt), [[11.0, -1.0]])
    assert np.array_equal(reference(A, Bt, 2.0, -1.0, C, bias), [[21.5, -3.75]])
    assert np.array_equal(reference(A, Bt, 1.0, 0.0, None, np.array([[-12.0]]), "relu"), [[0.0, 0.0]])
    assert abs(reference(np.ones((1, 1)), np.ones((1, 1)), activation="gelu")[0, 0] - 0.8413447460685429) < 2e-4


def test_a_check_starts_from_nan_or_from_c():
    """Without beta the output starts as NaN (every element the kernel fails to write shows); with beta it holds
    C's bits, which the reference reads as values. The bias vector holds its values, then zeros to a multiple
    of 8 (16 bytes of 16-bit values), and the reference sees it as a row or column."""
    from cutelite.numeric import numeric
    from kernels.hopper.variants import VARIANTS, _inputs
    from kernels.numeric import decode
    for v in VARIANTS:
        if v.epi is None:
            continue
        A, Bt, C, bias, D0, vector = _inputs(v, np.random.default_rng(0), 13, 24, 40)
        out = numeric(v.epi.out)
        assert A.shape == (13, 40) and Bt.shape == (24, 40) and D0.shape == (13, 24)
        if v.epi.beta:
            assert np.array_equal(decode(D0, out), C) and np.isfinite(C).all()
        else:
            assert C is None and np.isnan(decode(D0, out)).all()
        n = 13 if v.epi.bias == "row" else 24
        assert vector.shape == (-(-n // 8) * 8,) and not decode(vector[n:], numeric(v.epi.bias_dtype)).any()
        assert bias.shape == ((13, 1) if v.epi.bias == "row" else (24,))
        assert np.array_equal(bias.reshape(-1), decode(vector[:n], numeric(v.epi.bias_dtype)))


def test_a_name_that_picks_nothing_is_refused_with_the_names():
    from kernels.hopper import main
    with pytest.raises(SystemExit, match="no step or variant is named by .*'no such'.*cluster 2x1"):
        main(["no such"])
