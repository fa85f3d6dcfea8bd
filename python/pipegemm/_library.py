"""libpipegemm.so through ctypes: where it is looked for, how it is loaded,
and the part of include/pipegemm.h that the package calls.

Where, in this order; the first file that exists is loaded, and one that
exists but does not load is an error (its loader message), not a reason to
look further:

  1. $PIPEGEMM_LIBRARY, where it is set: that file and nothing else;
  2. the package's own, libpipegemm.so beside its modules, as
     `pip install ./python` puts it in the wheel (an editable install's
     build tree included: each folder of the package's __path__);
  3. the build tree of the pipegemm checkout the package lies in,
     <checkout>/build/libpipegemm.so (`make`; the package run from
     python/ with PYTHONPATH);
  4. the install prefixes of `cmake --install build --prefix PREFIX`: this
     Python's (sys.prefix: a virtual environment, conda) and the user's
     (site.USER_BASE: ~/.local), in lib/ and lib64/;
  5. the dynamic loader, by the library's soname (libpipegemm.so.0.5):
     LD_LIBRARY_PATH, then ldconfig's cache (/usr/local/lib, /usr/lib).

The wheel's copy finds the CUDA runtime and cuBLAS through its RUNPATH
(NVIDIA's pip packages beside it) and the dynamic loader; where neither has
them, the CUDA toolkit's ($CUDA_HOME, $CUDA_PATH, /usr/local/cuda) are
loaded first and the load tried again.

Nothing found: ImportError with every place and why it did not do.
"""

import ctypes
import os
import site
import sys

ENV = "PIPEGEMM_LIBRARY"
FILE = "libpipegemm.so"
SONAME = "libpipegemm.so.0.5"

# The header version whose declarations these are (major, minor): a library
# of another one is refused, since a struct's fields may have moved. A test
# (python/tests/test_host.py) holds it to include/pipegemm.h.
DECLARED = (0, 5)

# pg_status values this package names (the header's PG_STATUS_TABLE).
OK = 0
ERR_INVALID_ARG = -1
ERR_UNKNOWN_VARIANT = -2
ERR_STAGES = -3
ERR_NO_DEVICE = -7


class VariantInfo(ctypes.Structure):
    """pg_variant_info."""
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("kind", ctypes.c_int),
        ("precision", ctypes.c_int),
        ("technique", ctypes.c_char_p),
        ("source", ctypes.c_char_p),
        ("min_cc", ctypes.c_int),
        ("min_stages", ctypes.c_int),
        ("max_stages", ctypes.c_int),
        ("default_stages", ctypes.c_int),
        ("tile_m", ctypes.c_int),
        ("tile_n", ctypes.c_int),
        ("tile_k", ctypes.c_int),
        ("threads", ctypes.c_int),
        ("description", ctypes.c_char_p),
        ("layouts", ctypes.c_int),
    ]


# pg_variant_info.layouts; pg_op.
LAYOUT_NN, LAYOUT_ANY, LAYOUT_SOME = 0, 1, 2
OP_N, OP_T = 0, 1


class GemmDesc(ctypes.Structure):
    """pg_gemm_desc: one GEMM or a strided batch; `size` is set on creation
    (as PG_GEMM_DESC_INIT does), with its other defaults: op N, N, alpha 1,
    beta 0, one GEMM. A test holds these fields to tests/abi/."""
    _fields_ = [
        ("size", ctypes.c_size_t),
        ("op_a", ctypes.c_int),
        ("op_b", ctypes.c_int),
        ("m", ctypes.c_int),
        ("n", ctypes.c_int),
        ("k", ctypes.c_int),
        ("alpha", ctypes.c_float),
        ("beta", ctypes.c_float),
        ("a", ctypes.c_void_p),
        ("b", ctypes.c_void_p),
        ("c", ctypes.c_void_p),
        ("lda", ctypes.c_longlong),
        ("ldb", ctypes.c_longlong),
        ("ldc", ctypes.c_longlong),
        ("batch", ctypes.c_int),
        ("stride_a", ctypes.c_longlong),
        ("stride_b", ctypes.c_longlong),
        ("stride_c", ctypes.c_longlong),
    ]

    def __init__(self, **fields):
        defaults = dict(size=ctypes.sizeof(GemmDesc), alpha=1.0, batch=1)
        defaults.update(fields)
        super().__init__(**defaults)


_INFO = ctypes.POINTER(VariantInfo)
_INT, _FLOAT, _PTR, _TEXT = ctypes.c_int, ctypes.c_float, ctypes.c_void_p, ctypes.c_char_p

# name: (restype, argtypes)
FUNCTIONS = {
    "pg_version": (_INT, []),
    "pg_version_string": (_TEXT, []),
    "pg_strerror": (_TEXT, [_INT]),
    "pg_status_name": (_TEXT, [_INT]),
    "pg_last_cuda_error": (_INT, []),
    "pg_last_error_detail": (_TEXT, []),
    "pg_kind_name": (_TEXT, [_INT]),
    "pg_precision_name": (_TEXT, [_INT]),
    "pg_variant_count": (_INT, []),
    "pg_variant_at": (_INFO, [_INT]),
    "pg_variant_find": (_INFO, [_TEXT]),
    "pg_variant_supported": (_INT, [_INFO, _INT]),
    # variant, stages, gemm, stream
    "pg_gemm": (_INT, [_TEXT, _INT, ctypes.POINTER(GemmDesc), _PTR]),
}

# include/pipegemm_xla.h: built only where jaxlib's headers were found.
XLA_HANDLER = "pg_xla_matmul"


def package_folders():
    """The folders of the package (its __path__: an editable install's build
    tree and source folder both)."""
    package = sys.modules.get(__package__)
    folders = list(getattr(package, "__path__", None) or [])
    here = os.path.dirname(os.path.abspath(__file__))
    return folders if folders else [here]


def checkout():
    """The pipegemm checkout the package's modules lie in (python/pipegemm/),
    or None."""
    tree = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if os.path.isfile(os.path.join(tree, "include", "pipegemm.h")):
        return tree
    return None


def candidates():
    """(path, what it is) of every file looked for, after $PIPEGEMM_LIBRARY."""
    places = []
    for folder in package_folders():
        places.append((os.path.join(folder, FILE), "the package's own"))
    tree = checkout()
    if tree is not None:
        places.append((os.path.join(tree, "build", FILE), f"the build tree of the checkout {tree}"))
    prefixes = [(sys.prefix, "this Python's prefix")]
    user = site.getuserbase()
    if user and os.path.realpath(user) != os.path.realpath(sys.prefix):
        prefixes.append((user, "the user's prefix (site.USER_BASE)"))
    for prefix, what in prefixes:
        for lib in ("lib", "lib64"):
            places.append((os.path.join(prefix, lib, FILE), what))
    return places


CUDA_LIBRARIES = ("libcudart.so", "libcublasLt.so", "libcublas.so")


def _preload_cuda(message):
    """Where a load failed for want of the CUDA runtime or cuBLAS (`message`
    names one): loads the toolkit's copies, whose sonames then satisfy the
    library's needs. True where one was loaded."""
    if not any(name in message for name in CUDA_LIBRARIES):
        return False
    homes = [os.environ.get(v) for v in ("CUDA_HOME", "CUDA_PATH")] + ["/usr/local/cuda"]
    loaded = False
    for home in filter(None, homes):
        for lib in ("lib64", "lib"):
            folder = os.path.join(home, lib)
            if not os.path.isdir(folder):
                continue
            for name in CUDA_LIBRARIES:
                versions = sorted(f for f in os.listdir(folder)
                                  if f.startswith(name + ".") and f.count(".") == 2)
                for candidate in versions[-1:]:
                    try:
                        ctypes.CDLL(os.path.join(folder, candidate), mode=ctypes.RTLD_GLOBAL)
                        loaded = True
                    except OSError:
                        pass
        if loaded:
            return True
    return loaded


def _open(path):
    # RTLD_LOCAL (the default): the library's symbols stay its own.
    try:
        return ctypes.CDLL(path)
    except OSError as err:
        if not _preload_cuda(str(err)):
            raise
    return ctypes.CDLL(path)


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def _file_of(lib):
    """The file the dynamic loader took for `lib` (dladdr), or None."""
    try:
        dladdr = ctypes.CDLL(None).dladdr
    except (OSError, AttributeError):
        return None
    dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
    info = _DlInfo()
    address = ctypes.cast(lib.pg_version, ctypes.c_void_p)
    if not dladdr(address, ctypes.byref(info)) or not info.dli_fname:
        return None
    return os.path.realpath(os.fsdecode(info.dli_fname))


def find():
    """(ctypes.CDLL, the path it was loaded from), or ImportError."""
    explicit = os.environ.get(ENV)
    if explicit:
        if not os.path.exists(explicit):
            raise ImportError(f"pipegemm: {ENV}={explicit}: no such file")
        try:
            return _open(explicit), explicit
        except OSError as err:
            raise ImportError(f"pipegemm: {ENV}={explicit} does not load: {err}") from None
    looked = [f"{ENV}: not set"]
    for path, what in candidates():
        if not os.path.exists(path):
            looked.append(f"{path} ({what}): no such file")
            continue
        try:
            return _open(path), path
        except OSError as err:
            raise ImportError(f"pipegemm: {path} ({what}) does not load: {err}") from None
    try:
        lib = _open(SONAME)
    except OSError as err:
        looked.append(f"{SONAME} through the dynamic loader (LD_LIBRARY_PATH, ldconfig): {err}")
    else:
        return lib, _file_of(lib) or SONAME
    raise ImportError(
        "pipegemm: libpipegemm.so not found. Looked for it in:\n  " + "\n  ".join(looked) +
        f"\nInstall the package with its library (python3 -m pip install ./python, in the "
        f"checkout), build it (make), install it (cmake --install build --prefix PREFIX), or "
        f"set {ENV}=/path/to/{FILE}.")


def declare(lib, path):
    """Sets the signatures the package calls and checks the library's version."""
    for name, (restype, argtypes) in FUNCTIONS.items():
        try:
            function = getattr(lib, name)
        except AttributeError:
            raise ImportError(f"pipegemm: {path} has no {name}: not a libpipegemm "
                              f"{DECLARED[0]}.{DECLARED[1]}") from None
        function.restype = restype
        function.argtypes = argtypes
    try:
        handler = getattr(lib, XLA_HANDLER)
    except AttributeError:  # a library built without jaxlib's headers
        pass
    else:
        handler.restype = _PTR
        handler.argtypes = [_PTR]
    number = lib.pg_version()
    found = (number // 10000, number // 100 % 100)
    if found != DECLARED:
        raise ImportError(
            f"pipegemm: {path} is libpipegemm {lib.pg_version_string().decode()}; this package "
            f"declares the calls of {DECLARED[0]}.{DECLARED[1]} (python/pipegemm/_library.py): "
            f"install the package from the same checkout as the library")


def text(value):
    """A C string of the library's as str ("" for NULL)."""
    return value.decode("utf-8", "replace") if value else ""


def load():
    lib, path = find()
    declare(lib, path)
    return lib, path


LIB, PATH = load()


def has_xla_handler():
    """Whether the library exports pg_xla_matmul (include/pipegemm_xla.h)."""
    try:
        getattr(LIB, XLA_HANDLER)
    except AttributeError:
        return False
    return True


def detail():
    """pg_last_error_detail() of this thread."""
    return text(LIB.pg_last_error_detail())


def device_problem():
    """None where the current CUDA device is usable, else the library's
    reason why there is none ("no NVIDIA driver is installed"). For the
    tests, which skip on it."""
    status = LIB.pg_variant_supported(LIB.pg_variant_find(b"cublas"), 0)
    if status != ERR_NO_DEVICE:
        return None
    return detail() or "no usable CUDA device"
