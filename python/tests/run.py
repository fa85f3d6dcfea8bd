#!/usr/bin/env python3
"""The Python package's tests, as CTest and scripts/device-check.sh run them.

    python3 python/tests/run.py host [--library PATH] [--cli PATH] [PYTEST_ARGS...]
    python3 python/tests/run.py gpu  [--library PATH] [PYTEST_ARGS...]

host   test_host.py, test_frameworks_host.py: no GPU needed (CTest's
       python_host; torch's and JAX's tests skip where they do not import)
gpu    test_gpu.py: torch and CuPy arrays, JAX where it imports (python_gpu)

--library PATH   the libpipegemm.so to test (sets PIPEGEMM_LIBRARY)
--cli PATH       the pipegemm tool, whose `list` the registry is held to
                 (sets PIPEGEMM_TEST_CLI; without it that test is skipped,
                 and pytest's summary says why)

pytest: python3's own, else the one scripts/deps.sh fetched into
.deps/pytest. Exit codes: pytest's; 77 (CTest's "skipped", with a line
"skipped: REASON") where pytest is missing, and for gpu where the library
sees no CUDA device or neither torch nor CuPy with CUDA imports. Where the
environment variable CI is set a missing pytest fails instead (exit 1), and
PG_PYTHON_REQUIRE=torch,cupy[,jax] makes a missing framework a failure too.
A run in which no test passed fails: a check that cannot run must not pass.
"""
import os
import sys

TESTS = os.path.dirname(os.path.abspath(__file__))
PYTHON = os.path.dirname(TESTS)
REPO = os.path.dirname(PYTHON)
SKIP = 77


def skip_or_fail(reason, fail):
    if fail:
        print(f"run.py: FAIL: {reason}")
        return 1
    print(f"skipped: {reason}")
    return SKIP


def import_pytest():
    """pytest, python3's own or .deps/pytest's; None if neither imports."""
    try:
        import pytest
        return pytest
    except ImportError:
        pass
    sys.path.append(os.path.join(REPO, ".deps", "pytest"))
    try:
        import pytest
        return pytest
    except ImportError:
        return None


def frameworks():
    """{name: None where it has CUDA, else why not} for torch, cupy, jax."""
    found = {}
    try:
        import torch
        found["torch"] = None if torch.cuda.is_available() else "torch sees no CUDA device"
    except ImportError as err:
        found["torch"] = f"torch does not import ({err})"
    try:
        import cupy
        found["cupy"] = None if cupy.cuda.runtime.getDeviceCount() > 0 else "CuPy sees no GPU"
    except ImportError as err:
        found["cupy"] = f"cupy does not import ({err})"
    except Exception as err:  # CuPy's CUDA errors have no common base outside cupy
        found["cupy"] = f"CuPy has no usable GPU ({type(err).__name__}: {err})"
    try:
        import jax
        jax.devices("gpu")
        found["jax"] = None
    except ImportError as err:
        found["jax"] = f"jax does not import ({err})"
    except RuntimeError as err:
        found["jax"] = f"JAX has no GPU backend ({err})"
    return found


class Outcomes:
    """A pytest plugin that counts the tests that passed."""

    def __init__(self):
        self.passed = 0

    def pytest_runtest_logreport(self, report):
        if report.when == "call" and report.passed:
            self.passed += 1


def main(argv):
    if not argv or argv[0] not in ("host", "gpu"):
        print(__doc__.strip())
        return 2
    mode, rest = argv[0], argv[1:]
    pytest_args = []
    while rest:
        option = rest.pop(0)
        if option in ("--library", "--cli") and rest:
            value = os.path.abspath(rest.pop(0))
            os.environ["PIPEGEMM_LIBRARY" if option == "--library" else "PIPEGEMM_TEST_CLI"] = value
        else:
            pytest_args.append(option)
    sys.dont_write_bytecode = True  # nothing written into the tree
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    # JAX: GPU memory as needed, not most of it at its start (conftest.py too).
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

    pytest = import_pytest()
    if pytest is None:
        return skip_or_fail("pytest is not installed (make deps fetches it into .deps/pytest; "
                            "or pip install pytest)", bool(os.environ.get("CI")))

    if mode == "gpu":
        sys.path.insert(0, PYTHON)
        from pipegemm import _library  # the library must be found: an ImportError fails
        problem = _library.device_problem()
        if problem is not None:
            return skip_or_fail(f"no CUDA device ({problem})", False)
        found = frameworks()
        required = [n for n in os.environ.get("PG_PYTHON_REQUIRE", "").split(",") if n]
        for name in required:
            if found.get(name, f"{name} is none of torch, cupy, jax") is not None:
                return skip_or_fail(f"PG_PYTHON_REQUIRE names {name}: "
                                    f"{found.get(name, 'unknown')}", True)
        for name, why in found.items():
            print(f"run.py: {name}: {'with CUDA' if why is None else why}")
        if found["torch"] is not None and found["cupy"] is not None:
            return skip_or_fail("neither torch nor CuPy with CUDA imports: "
                                f"{found['torch']}; {found['cupy']}", False)

    outcomes = Outcomes()
    names = ["test_host.py", "test_frameworks_host.py"] if mode == "host" else ["test_gpu.py"]
    test_files = [os.path.join(TESTS, name) for name in names]
    code = pytest.main(["--rootdir", PYTHON, "-c", os.path.join(PYTHON, "pyproject.toml"),
                        *test_files, *pytest_args], plugins=[outcomes])
    if code == 0 and outcomes.passed == 0:
        print("run.py: FAIL: no test passed")
        return 1
    return int(code)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
