import numpy as np
import pytest

from cutelite import Layout, check, check_close, dyn


def test_check_prints_pass_and_raises_on_mismatch(capsys):
    assert check(Layout((4, 8)), Layout((4, 8)), "layout")
    assert "PASS layout" in capsys.readouterr().out
    with pytest.raises(AssertionError, match="FAIL"):
        check(Layout((4, 8)), Layout((8, 4)))


def test_check_sees_static_versus_dynamic():
    with pytest.raises(AssertionError):
        check(Layout((dyn(4), 8)), Layout((4, 8)))


def test_check_close_on_arrays(capsys):
    a = np.arange(6.0).reshape(2, 3)
    check_close(a + 1e-5, a, "gemm")
    assert "max |error|" in capsys.readouterr().out
    with pytest.raises(AssertionError):
        check_close(a + 1, a)
    with pytest.raises(AssertionError):
        check_close(np.full((2, 3), np.nan), a)
