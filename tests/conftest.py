"""Numba's mode for the tests, chosen once here: the CUDA simulator or the CUDA target.

Numba runs in one mode per process, fixed when it is first imported: the simulator runs kernels as Python
threads; the CUDA target compiles them to PTX (with or without a GPU) and runs them where there is a GPU. This
process takes the mode kernels.setup() chooses: the simulator where NUMBA_ENABLE_CUDASIM is set or no GPU is
found (CUTE_TEST_NUMBA=simulator or =cuda chooses instead). A test file whose tests need one mode says so:

    pytestmark = pytest.mark.numba("simulator")   # or "cuda"; on one test: @pytest.mark.numba("cuda")

The tests that need the other mode run in one more interpreter, put in that mode. It starts when collection
ends and runs beside this process; each of its tests is reported here as if it had run here (its outcome,
traceback, skip reason and output). A test module must therefore import in either mode: compile or run
kernels inside the tests (or fixtures), not when the module is imported.
"""

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading

import pytest

import kernels

MODES = ("simulator", "cuda")
MODE_ENV = "CUTE_TEST_NUMBA"          # the mode this process must take
REPORTS_ENV = "CUTE_TEST_REPORTS"     # in the other mode's interpreter: the pipe its reports go to
_here = pytest.StashKey()             # this process's mode
_other = pytest.StashKey()            # the other mode's interpreter (_OtherMode), when a test needs it


def pytest_configure(config):
    config.addinivalue_line("markers", "numba(mode): the test needs numba in this mode, 'simulator' or 'cuda'")
    wanted = os.environ.get(MODE_ENV) or None
    if wanted not in (None,) + MODES:
        raise pytest.UsageError("%s=%s: the mode is 'simulator' or 'cuda'" % (MODE_ENV, wanted))
    info = kernels.setup(verbose=False, simulator=None if wanted is None else wanted == "simulator")
    config.stash[_here] = "simulator" if info.simulator else "cuda"
    if wanted and config.stash[_here] != wanted:
        raise pytest.UsageError("%s=%s, but numba was imported in the other mode before the tests began"
                                % (MODE_ENV, wanted))
    if os.environ.get(REPORTS_ENV):
        config.pluginmanager.register(_SendReports(config, int(os.environ[REPORTS_ENV])))


def _mode(item):
    marker = item.get_closest_marker("numba")
    if marker is None:
        return None
    if marker.args not in ((m,) for m in MODES):
        raise pytest.UsageError("%s: pytest.mark.numba%r; the mode is 'simulator' or 'cuda'"
                                % (item.nodeid, marker.args))
    return marker.args[0]


def pytest_collection_finish(session):
    config = session.config
    elsewhere = [item for item in session.items if _mode(item) not in (None, config.stash[_here])]
    if elsewhere and not config.option.collectonly:
        config.stash[_other] = _OtherMode(config, elsewhere)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    other = item.config.stash.get(_other, None)
    if other is None or item.nodeid not in other.nodeids:
        return None
    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    for report in other.reports(item):
        item.ihook.pytest_runtest_logreport(report=report)
    item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True


def pytest_unconfigure(config):
    other = config.stash.get(_other, None)
    if other is not None:
        other.close()


class _OtherMode:
    """One pytest run, in the other mode, of the tests that need it. It sends each report back as a line of
    JSON (pytest's own serialization of reports) through a pipe, which a thread here drains as they come, so
    that the run never waits for this process."""

    def __init__(self, config, items):
        self.config, self.nodeids, self.received = config, {item.nodeid for item in items}, {}
        mode = next(m for m in MODES if m != config.stash[_here])
        read, write = os.pipe()
        self.output = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tb", config.option.tbstyle,
             *[item.nodeid for item in items]],
            cwd=config.rootpath, env=dict(os.environ, **{MODE_ENV: mode, REPORTS_ENV: str(write)}),
            pass_fds=(write,), stdout=self.output, stderr=subprocess.STDOUT)
        os.close(write)
        self.lines = queue.Queue()
        threading.Thread(target=self._drain, args=(os.fdopen(read),), daemon=True).start()

    def _drain(self, pipe):
        with pipe:
            for line in pipe:
                self.lines.put(line)
        self.lines.put(None)   # the run has ended

    def reports(self, item):
        """The reports of `item` (setup, call, teardown), waiting for them; a failure with the interpreter's
        output where they never came (it crashed, or could not collect the test in that mode)."""
        while not any(r.when == "teardown" for r in self.received.get(item.nodeid, ())):
            line = self.lines.get()
            if line is None:
                self.lines.put(None)
                return self.received.pop(item.nodeid, []) + [self._missing(item)]
            data = json.loads(line)
            data["location"], data["longrepr"] = _tuple(data["location"]), _tuple(data["longrepr"])
            report = self.config.hook.pytest_report_from_serializable(config=self.config, data=data)
            self.received.setdefault(report.nodeid, []).append(report)
        return self.received.pop(item.nodeid)

    def _missing(self, item):
        self.process.wait()
        self.output.seek(0)
        text = self.output.read().decode(errors="replace")
        why = ("this test's report never came back from the pytest run in numba's %s mode, which ended (exit "
               "status %s) with:\n%s" % (_mode(item), self.process.returncode, text[-4000:]))
        return pytest.TestReport(item.nodeid, item.location, {}, "failed", why, "call")

    def close(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.output.close()


def _tuple(value):
    return tuple(value) if isinstance(value, list) else value   # JSON has no tuples; pytest's reports want them


class _SendReports:
    """In the other mode's interpreter: every test report, as a line of JSON, to the pipe."""

    def __init__(self, config, fd):
        self.config, self.pipe = config, os.fdopen(fd, "w")

    def pytest_runtest_logreport(self, report):
        data = self.config.hook.pytest_report_to_serializable(config=self.config, report=report)
        self.pipe.write(json.dumps(data) + "\n")
        self.pipe.flush()
