"""Helpers for the kernels tests: numba runs in one mode per process (simulator or not), decided when it
is first imported, and the tests need both. A test module asks `numba_mode(simulator)`: True when this
process is (or can now be put) in that mode *and* that is the mode kernels.setup() would choose here, so
other test modules see the process as setup() leaves it. Otherwise the module reruns itself in a fresh
interpreter with `run_in_subprocess`.
"""

import os
import subprocess
import sys

from .runtime import count_gpus, in_simulator, setup

_FORCE = "KERNELS_TEST_FORCE_MODE"   # set by run_in_subprocess: "sim" or "gpu"


def numba_mode(simulator):
    """Whether this process runs numba in the wanted mode (importing numba if it was not yet)."""
    wanted = "sim" if simulator else "gpu"
    if "numba" not in sys.modules:
        natural_sim = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0") or count_gpus() == 0
        if os.environ.get(_FORCE) == wanted or natural_sim == simulator:
            setup(verbose=False, simulator=simulator)
    return "numba" in sys.modules and in_simulator() == simulator


def run_in_subprocess(test_file, simulator, timeout=900):
    """Run `pytest test_file` in a fresh interpreter with numba in the wanted mode; (returncode, output)."""
    env = dict(os.environ)
    env[_FORCE] = "sim" if simulator else "gpu"
    env["NUMBA_ENABLE_CUDASIM"] = "1" if simulator else "0"
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # the repo: kernels/ lives here
    env["PYTHONPATH"] = os.pathsep.join([root] + [p for p in [env.get("PYTHONPATH")] if p])
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test_file]
    r = subprocess.run(cmd, env=env, cwd=root, capture_output=True, text=True, timeout=timeout)
    return r.returncode, r.stdout + r.stderr
