"""The engine and the live page's modules import with the standard library alone.

Each check runs in a fresh interpreter in which importing numpy, matplotlib, PIL or ipywidgets raises
ImportError (a meta-path finder refuses them), as in the reader's browser, where Pyodide has no NumPy.
"""

import subprocess
import sys
import textwrap

import pytest

BLOCK = textwrap.dedent("""
    import sys

    class Refuse:
        BLOCKED = ("numpy", "matplotlib", "PIL", "ipywidgets", "IPython")

        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in self.BLOCKED:
                raise ImportError(f"{name} is blocked in this test")
            return None

    sys.meta_path.insert(0, Refuse())
""")


def run_blocked(code):
    done = subprocess.run([sys.executable, "-c", BLOCK + textwrap.dedent(code)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_blocker_blocks():
    with pytest.raises(AssertionError, match="blocked"):
        run_blocked("import numpy")


@pytest.mark.parametrize("module", ["cutelite", "cutelite.parse", "cutelite.explain", "cutelite.atoms",
                                    "cutelite.bank_conflicts", "cutelite.teach.exercises", "cutelite.teach.live",
                                    "cutelite.teach.explorers", "cutelite.teach.svg",
                                    "cutelite.tiled", "cutelite.copy_atoms", "cutelite.teach.checks", "cutelite.dsl",
                                    "cutelite.teach.softmax", "cutelite.teach.attention"])
def test_imports_without_numpy(module):
    run_blocked(f"import {module}")


def test_engine_works_without_numpy():
    out = run_blocked("""
        import cutelite as c
        from cutelite.teach import live
        L = c.composition(c.Layout((4, 8), (8, 1)), c.Layout((2, 2), (1, 4)))
        print(L)
        print(c.format_layout(L), end="")
        print(c.make_mma_atom("SM80_16x8x8_F32F16F16F32_TN").LayoutC_TV)
        print(live.view("layout", '{"shape": "(32,32)", "stride": "(1,32)"}')[:20])
    """)
    assert out.startswith("(_2,_2):(_8,_1)\n")
    assert "((_4,_8),(_2,_2)):((_32,_1),(_16,_8))" in out
