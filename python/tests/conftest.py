"""The tests import the package of this checkout (python/pipegemm), ahead of
any installed copy, and the helpers beside them (reference.py).
PIPEGEMM_LIBRARY names the library to test; without it the package looks
where it always does (docs/python.md), this checkout's build/ first.
JAX, where the GPU tests import it, takes GPU memory as it needs it rather
than most of it at once (torch and CuPy share the GPU with it)."""
import os
import sys

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

TESTS = os.path.dirname(os.path.abspath(__file__))
PYTHON = os.path.dirname(TESTS)
for path in (TESTS, PYTHON):
    if path in sys.path:
        sys.path.remove(path)
    sys.path.insert(0, path)
