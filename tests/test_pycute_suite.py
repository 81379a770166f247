"""NVIDIA's own pycute unit tests (CUTLASS's test/python/pycute) run against cutelite.

The tests do `from pycute import *` and call Layout(shape, stride), size, coalesce, complement, composition,
left_inverse, right_inverse and the IntTuple helpers: cutelite has each under the same name, so the shim is
only a module that hands out cutelite's. test_composition evaluates A past its size (A = 4:1, B = 4:2 reads
A(6)), which cutelite does as C++ does. test_typing tests pycute's own type classes, which cutelite does not
have, and is left out.

Set CUTLASS_DIR to a CUTLASS checkout to run them (skipped otherwise):
    CUTLASS_DIR=path/to/cutlass pytest tests/test_pycute_suite.py
"""

import importlib.util
import os
import sys
import types
import unittest

import pytest

import cutelite
from cutelite import int_tuple

SUITE = os.path.join(os.environ.get("CUTLASS_DIR", ""), "test", "python", "pycute")
MODULES = ("test_coalesce", "test_complement", "test_composition", "test_int_tuple", "test_left_inverse",
           "test_right_inverse")
NAMES = ("Layout", "size", "coalesce", "complement", "composition", "left_inverse", "right_inverse",
         "inner_product", "shape_div", "prefix_product")


def shim():
    """A module named pycute holding cutelite's functions under the names the tests import."""
    module = types.ModuleType("pycute")
    for name in NAMES:
        setattr(module, name, getattr(cutelite, name))
    module.product = int_tuple.product
    module.__all__ = [*NAMES, "product"]
    return module


@pytest.mark.skipif(not os.path.isdir(SUITE), reason="set CUTLASS_DIR to a CUTLASS checkout to run pycute's tests")
@pytest.mark.parametrize("name", MODULES)
def test_pycutes_unit_tests_pass_on_cutelite(name, monkeypatch):
    monkeypatch.setitem(sys.modules, "pycute", shim())
    spec = importlib.util.spec_from_file_location(f"pycute_suite_{name}", os.path.join(SUITE, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = unittest.TextTestRunner(verbosity=0, stream=open(os.devnull, "w")).run(
        unittest.defaultTestLoader.loadTestsFromModule(module))
    assert result.testsRun > 0
    assert result.wasSuccessful(), [str(e) for _, e in result.failures + result.errors]
