"""The package on a GPU: every variant against the FP64 reference at the
library's tolerance (reference.py) on torch and CuPy arrays, views with a
leading dimension above the width, non-default streams, CUDA graph capture,
several threads, JAX arrays, and the refusals only real arrays meet.
Skipped where the library sees no CUDA device; a framework that does not
import skips its own tests (python/tests/run.py can make that a failure)."""
import functools
import os
import subprocess
import sys
import threading
import warnings

import pytest

import pipegemm
from pipegemm import _library

_problem = _library.device_problem()
if _problem is not None:
    pytest.skip(f"no CUDA device ({_problem})", allow_module_level=True)

np = pytest.importorskip("numpy")

from reference import check, reference  # noqa: E402  (after the skip: numpy)

VARIANTS = [v.name for v in pipegemm.variants()]
PRECISION = {v.name: v.precision for v in pipegemm.variants()}
SELECTORS = [v.name for v in pipegemm.variants() if v.kind == "selector"]
# Entries with a workspace or a first kernel of their own: the stream, graph
# and thread tests take these.
SOME = ["auto", "cublas", "cp_async", "tma_ws", "tma_ws_splitk", "tma_ws_streamk",
        "wgmma_3xtf32", "auto_emulated"]
SLEEP_CYCLES = 200_000_000  # about 0.1 s at the H200's 1.98 GHz


# ---- the frameworks --------------------------------------------------------------------------

class TorchArrays:
    name = "torch"

    def __init__(self):
        self.torch = pytest.importorskip("torch")
        if not self.torch.cuda.is_available():
            pytest.skip("torch sees no CUDA device")
        self.array_type = self.torch.Tensor

    def upload(self, host):
        return self.torch.from_numpy(np.ascontiguousarray(host)).to("cuda")

    def host(self, x):
        return x.cpu().numpy()

    def device_of(self, x):
        return x.device.index

    def synchronize(self):
        self.torch.cuda.synchronize()


class CupyArrays:
    name = "cupy"

    def __init__(self):
        self.cupy = pytest.importorskip("cupy")
        self.array_type = self.cupy.ndarray

    def upload(self, host):
        return self.cupy.asarray(np.ascontiguousarray(host))

    def host(self, x):
        return self.cupy.asnumpy(x)

    def device_of(self, x):
        return x.device.id

    def synchronize(self):
        self.cupy.cuda.Device().synchronize()


@pytest.fixture(params=["torch", "cupy"])
def xp(request):
    return {"torch": TorchArrays, "cupy": CupyArrays}[request.param]()


@pytest.fixture
def torch_arrays():
    return TorchArrays()


@pytest.fixture
def cupy_arrays():
    return CupyArrays()


@functools.lru_cache(maxsize=None)
def inputs(m, n, k, seed):
    """Host float32 A, B and C0, uniform in [-1, 1) (signs mixed)."""
    rng = np.random.default_rng(seed)

    def draw(rows, cols):
        return rng.uniform(-1, 1, (rows, cols)).astype(np.float32)
    return draw(m, k), draw(k, n), draw(m, n)


@functools.lru_cache(maxsize=None)
def expected(m, n, k, seed, alpha, beta):
    a, b, c0 = inputs(m, n, k, seed)
    return reference(a, b, alpha, beta, c0)


def held_to_the_bound(out_host, m, n, k, seed, alpha, beta, variant):
    ref, scale = expected(m, n, k, seed, alpha, beta)
    return check(out_host, ref, scale, k, PRECISION[variant])


def run(variant, call):
    """call(), skipping where this GPU cannot run the variant at all."""
    try:
        return call()
    except pipegemm.Error as err:
        if err.status_name in ("PG_ERR_ARCH", "PG_ERR_SMEM"):
            pytest.skip(f"{variant} does not run on this GPU: {err}")
        # A layout rule of the variant (TMA's 16-byte rows): refused with its
        # reason, as the C tests allow.
        if err.status_name == "PG_ERR_UNSUPPORTED" and err.detail:
            pytest.skip(f"{variant} refuses this layout: {err}")
        raise


# ---- every variant against the FP64 reference ------------------------------------------------

CASES = {
    # name: (m, n, k, alpha, beta): the README's shape; odd sizes with beta;
    # few tiles and a long K (the split-K and stream-K entries split it)
    "1000x900x700": (1000, 900, 700, 1.0, 0.0),
    "129x67x300-beta": (129, 67, 300, -0.5, 2.0),
    "256x256x8192": (256, 256, 8192, 1.0, 0.0),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("variant", VARIANTS)
def test_every_variant(xp, variant, case):
    m, n, k, alpha, beta = CASES[case]
    a_host, b_host, c0_host = inputs(m, n, k, 1)
    a, b = xp.upload(a_host), xp.upload(b_host)
    if beta == 0.0:
        c = run(variant, lambda: pipegemm.matmul(a, b, alpha=alpha, variant=variant))
        assert isinstance(c, xp.array_type)
        assert tuple(c.shape) == (m, n)
        assert xp.device_of(c) == xp.device_of(a)
    else:
        out = xp.upload(c0_host)
        c = run(variant, lambda: pipegemm.matmul(a, b, out=out, alpha=alpha, beta=beta,
                                                 variant=variant))
        assert c is out
    problem = held_to_the_bound(xp.host(c), m, n, k, 1, alpha, beta, variant)
    assert problem is None, f"{variant}: {problem}"


# ---- views: a leading dimension above the width ----------------------------------------------

def views(xp, m, n, k, offset, pad):
    """A, B and C as column ranges of wider matrices: `offset` floats into a
    row, `pad` floats more per row. Returns the views, the whole C and its
    host copy, so that what lies outside C's view can be checked."""
    a_host, b_host, c0_host = inputs(m, n, k, 2)

    def wide(x):  # 7.0 in the columns around the view
        return np.pad(x, ((0, 0), (offset, pad - offset)), constant_values=7.0)

    def view(x, width):
        return x[:, offset:offset + width]
    a_all, b_all, c_all_host = xp.upload(wide(a_host)), xp.upload(wide(b_host)), wide(c0_host)
    c_all = xp.upload(c_all_host)
    return view(a_all, k), view(b_all, n), view(c_all, n), c_all, c_all_host


@pytest.mark.parametrize("variant", VARIANTS)
def test_views_with_a_leading_dimension(xp, variant):
    # 16-byte aligned views whose leading dimensions are multiples of 4:
    # the layout every variant takes (TMA's rules, docs/api.md).
    m, n, k = 200, 72, 96
    a, b, c, c_all, c_all_host = views(xp, m, n, k, offset=4, pad=12)
    result = run(variant, lambda: pipegemm.matmul(a, b, out=c, alpha=1.0, beta=1.0,
                                                  variant=variant))
    assert result is c
    whole = xp.host(c_all)
    problem = held_to_the_bound(np.ascontiguousarray(whole[:, 4:4 + n]), m, n, k, 2, 1.0, 1.0,
                                variant)
    assert problem is None, f"{variant}: {problem}"
    outside = np.ones(whole.shape, dtype=bool)
    outside[:, 4:4 + n] = False
    assert np.array_equal(whole[outside], c_all_host[outside]), \
        f"{variant} wrote outside out's columns"


@pytest.mark.parametrize("variant", VARIANTS)
def test_views_tma_cannot_read(xp, variant):
    # One float into the row, odd leading dimensions: the TMA variants that
    # read the operands where they are refuse it (PG_ERR_UNSUPPORTED, saying
    # why, out untouched); the others, the split forms (which copy them
    # first), the selectors and cuBLAS among them, compute it.
    m, n, k = 130, 67, 99
    a, b, c, c_all, c_all_host = views(xp, m, n, k, offset=1, pad=4)
    try:
        run(variant, lambda: pipegemm.matmul(a, b, out=c, beta=1.0, variant=variant))
    except pipegemm.Error as err:
        assert err.status_name == "PG_ERR_UNSUPPORTED", err
        assert variant not in SELECTORS and variant != "cublas", err
        assert "TMA" in err.detail, err
        assert not isinstance(err, ValueError)
        assert np.array_equal(xp.host(c_all), c_all_host), "a refused call wrote out"
        return
    whole = xp.host(c_all)
    problem = held_to_the_bound(np.ascontiguousarray(whole[:, 1:1 + n]), m, n, k, 2, 1.0, 1.0,
                                variant)
    assert problem is None, f"{variant}: {problem}"


@pytest.mark.parametrize("variant", ["auto", "cp_async"])
def test_out_and_a_in_one_buffer(xp, variant):
    # A in the first k columns of one buffer and C in the next n, then A in
    # the even rows of another and C in the odd ones: no element of both, so
    # taken, and the product is held to the bound with A left as it was.
    m, n, k = 200, 72, 96
    a_host, b_host, c0_host = inputs(m, n, k, 4)
    b = xp.upload(b_host)
    side = xp.upload(np.concatenate([a_host, c0_host], axis=1))
    rows_host = np.zeros((2 * m, k), np.float32)
    rows_host[0::2], rows_host[1::2, :n] = a_host, c0_host
    rows = xp.upload(rows_host)
    for a, c in ((side[:, :k], side[:, k:]), (rows[0::2], rows[1::2, :n])):
        result = run(variant, lambda: pipegemm.matmul(a, b, out=c, alpha=1.0, beta=1.0,
                                                      variant=variant))
        assert result is c
        problem = held_to_the_bound(np.ascontiguousarray(xp.host(c)), m, n, k, 4, 1.0, 1.0,
                                    variant)
        assert problem is None, f"{variant}: {problem}"
        assert np.array_equal(xp.host(a), a_host), f"{variant} wrote into a"


# ---- streams ---------------------------------------------------------------------------------

@pytest.mark.parametrize("variant", SOME)
def test_torch_current_stream(torch_arrays, variant):
    # On a side stream: a sleep, then the inputs written, then the product.
    # Run on any other stream, it would read the inputs before they are
    # written; it must also return before the sleep ends (no waiting).
    torch = torch_arrays.torch
    m, n, k = 256, 256, 4096
    a_host, b_host, _ = inputs(m, n, k, 3)
    src_a, src_b = torch_arrays.upload(a_host), torch_arrays.upload(b_host)
    a, b = torch.zeros_like(src_a), torch.zeros_like(src_b)
    run(variant, lambda: pipegemm.matmul(a, b, variant=variant))  # first use, outside the test
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(SLEEP_CYCLES)
        a.copy_(src_a)
        b.copy_(src_b)
        c = pipegemm.matmul(a, b, variant=variant)
        still_busy = not side.query()
    assert still_busy, "pipegemm.matmul waited for the stream"
    side.synchronize()
    problem = held_to_the_bound(c.cpu().numpy(), m, n, k, 3, 1.0, 0.0, variant)
    assert problem is None, f"{variant}: {problem}"


SPIN = r"""
extern "C" __global__ void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}
"""


@pytest.mark.parametrize("variant", SOME)
def test_cupy_current_stream(cupy_arrays, variant):
    cupy = cupy_arrays.cupy
    m, n, k = 256, 256, 4096
    a_host, b_host, _ = inputs(m, n, k, 3)
    src_a, src_b = cupy_arrays.upload(a_host), cupy_arrays.upload(b_host)
    a, b = cupy.zeros_like(src_a), cupy.zeros_like(src_b)
    run(variant, lambda: pipegemm.matmul(a, b, variant=variant))
    spin = cupy.RawKernel(SPIN, "spin")
    cupy.cuda.Device().synchronize()
    side = cupy.cuda.Stream(non_blocking=True)
    with side:
        spin((1,), (1,), (np.int64(SLEEP_CYCLES),))
        a[...] = src_a
        b[...] = src_b
        c = pipegemm.matmul(a, b, variant=variant)
        still_busy = not side.done
    assert still_busy, "pipegemm.matmul waited for the stream"
    side.synchronize()
    problem = held_to_the_bound(cupy.asnumpy(c), m, n, k, 3, 1.0, 0.0, variant)
    assert problem is None, f"{variant}: {problem}"


# ---- CUDA graphs -----------------------------------------------------------------------------

@pytest.mark.parametrize("variant", VARIANTS)
def test_torch_graph_capture(torch_arrays, variant):
    # Warmed up on a side stream (torch's rule for capture), then captured
    # with its result allocated inside the capture (torch's graph pool);
    # replayed on new contents of A.
    torch = torch_arrays.torch
    m, n, k = 192, 160, 2048
    a_host, b_host, _ = inputs(m, n, k, 4)
    a, b = torch_arrays.upload(a_host), torch_arrays.upload(b_host)
    warm = torch.cuda.Stream()
    warm.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(warm):
        run(variant, lambda: pipegemm.matmul(a, b, variant=variant))
    torch.cuda.current_stream().wait_stream(warm)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        c = pipegemm.matmul(a, b, variant=variant)
    a.copy_(torch.flip(a, dims=[0]))  # new contents, same pointer
    graph.replay()
    torch.cuda.synchronize()
    ref, scale = reference(a_host[::-1], b_host)
    first = c.cpu().numpy()
    problem = check(first, ref, scale, k, PRECISION[variant])
    assert problem is None, f"{variant}: {problem}"
    c.fill_(float("nan"))
    graph.replay()  # again: the same bits (no atomics, a fixed order)
    torch.cuda.synchronize()
    assert np.array_equal(c.cpu().numpy(), first), f"{variant}: a replay changed the result"


@pytest.mark.parametrize("variant", SOME)
def test_cupy_graph_capture(cupy_arrays, variant):
    cupy = cupy_arrays.cupy
    m, n, k = 192, 160, 2048
    a_host, b_host, _ = inputs(m, n, k, 4)
    a, b = cupy_arrays.upload(a_host), cupy_arrays.upload(b_host)
    c = cupy.empty((m, n), dtype=cupy.float32)
    cupy.cuda.Device().synchronize()  # the uploads, on the null stream
    side = cupy.cuda.Stream(non_blocking=True)
    with side:
        run(variant, lambda: pipegemm.matmul(a, b, out=c, variant=variant))
        side.synchronize()
        side.begin_capture()
        pipegemm.matmul(a, b, out=c, variant=variant)
        graph = side.end_capture()
        a[...] = a[::-1].copy()
        c.fill(float("nan"))
        graph.launch()
        side.synchronize()
    ref, scale = reference(a_host[::-1], b_host)
    problem = check(cupy.asnumpy(c), ref, scale, k, PRECISION[variant])
    assert problem is None, f"{variant}: {problem}"


# ---- threads ---------------------------------------------------------------------------------

def test_threads(torch_arrays):
    # Eight threads at once, each on its own stream, each through SOME's
    # entries; between them calls that fail, whose detail must be the
    # thread's own.
    torch = torch_arrays.torch
    m, n, k = 320, 256, 1024
    threads = 8
    start = threading.Barrier(threads)
    failures, results = [], {}

    def work(index):
        try:
            a_host, b_host, _ = inputs(m, n, k, 10 + index)
            a, b = torch_arrays.upload(a_host), torch_arrays.upload(b_host)
            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())  # the uploads
            start.wait()
            with torch.cuda.stream(stream):
                for step in range(2 * len(SOME)):
                    variant = SOME[(index + step) % len(SOME)]
                    if step % 3 == 2:  # a refusal: this variant's own stage rule
                        bad = 99 if variant not in SELECTORS else 1
                        try:
                            pipegemm.matmul(a, b, variant=variant, stages=bad)
                        except pipegemm.ArgumentError as err:
                            if f"stages = {bad}: {variant} takes" not in err.detail:
                                failures.append(f"thread {index}: another's detail: {err}")
                        else:
                            failures.append(f"thread {index}: {variant} took stages = {bad}")
                        continue
                    results[(index, step, variant)] = pipegemm.matmul(a, b, variant=variant)
            stream.synchronize()
        except Exception as err:  # reported below, with the thread it came from
            failures.append(f"thread {index}: {type(err).__name__}: {err}")

    pool = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    assert not failures, "\n".join(failures)
    assert len(results) == threads * sum(1 for step in range(2 * len(SOME)) if step % 3 != 2)
    for (index, step, variant), c in results.items():
        problem = held_to_the_bound(c.cpu().numpy(), m, n, k, 10 + index, 1.0, 0.0, variant)
        assert problem is None, f"thread {index}, step {step}, {variant}: {problem}"


# ---- what only real arrays meet --------------------------------------------------------------

def test_the_readme_line(torch_arrays):
    # README.md's check, as a user runs it (torch's matmul: TF32 off, its default).
    torch = torch_arrays.torch
    a = torch.rand(1000, 700, device="cuda")
    b = torch.rand(700, 900, device="cuda")
    difference = (pipegemm.matmul(a, b) - a @ b).abs().max().item()
    assert difference < 1e-2, difference


@pytest.mark.parametrize("variant", ["auto", "cublas", "cp_async", "tma_ws", "wgmma_3xtf32"])
def test_empty_and_blas_rules(xp, variant):
    m, n, k = 64, 48, 32
    a_host, b_host, c0_host = inputs(m, n, k, 5)
    a, b = xp.upload(a_host), xp.upload(b_host)
    # K = 0: C = beta C, A and B not read.
    none_a = xp.upload(np.zeros((m, 0), np.float32))
    none_b = xp.upload(np.zeros((0, n), np.float32))
    assert np.array_equal(xp.host(run(variant, lambda: pipegemm.matmul(
        none_a, none_b, variant=variant))), np.zeros((m, n), np.float32))
    out = xp.upload(c0_host)
    pipegemm.matmul(none_a, none_b, out=out, beta=0.5, variant=variant)
    assert np.array_equal(xp.host(out), c0_host * np.float32(0.5))
    # M = 0 and N = 0: empty results.
    assert tuple(pipegemm.matmul(a[:0], b, variant=variant).shape) == (0, n)
    assert tuple(pipegemm.matmul(a, b[:, :0], variant=variant).shape) == (m, 0)
    # alpha = 0 reads neither A nor B: a NaN in them does not reach C.
    a_nan = xp.upload(np.full((m, k), np.nan, np.float32))
    out = xp.upload(c0_host)
    pipegemm.matmul(a_nan, b, out=out, alpha=0.0, beta=2.0, variant=variant)
    assert np.array_equal(xp.host(out), c0_host * np.float32(2.0))


def test_torch_refusals(torch_arrays):
    torch = torch_arrays.torch
    a = torch.rand(64, 32, device="cuda")
    b = torch.rand(32, 48, device="cuda")
    with pytest.raises(ValueError, match=r"a is \(1, 64, 32\) and b 48 x 32: a's width"):
        pipegemm.matmul(a[None], b.t())
    with pytest.raises(ValueError, match=r"a is on cpu: pipegemm\.matmul takes CUDA tensors"):
        pipegemm.matmul(a.cpu(), b)
    with pytest.raises(ValueError, match=r"a is torch\.float64: .* takes torch\.float32"):
        pipegemm.matmul(a.double(), b)
    with pytest.raises(ValueError, match=r"^pipegemm\.matmul with out= has no autograd"):
        pipegemm.matmul(a.requires_grad_(True), b, out=torch.empty(64, 48, device="cuda"))
    with torch.no_grad():
        assert not pipegemm.matmul(a, b).requires_grad
    assert pipegemm.matmul(a, b).requires_grad
    a.requires_grad_(False)
    with pytest.raises(ValueError, match=r"out overlaps a"):
        pipegemm.matmul(a[:, :32], b[:, :32], out=a[:, :32])
    try:
        import cupy
    except ImportError:
        return
    with pytest.raises(TypeError, match=r"a is a torch tensor and b a CuPy array"):
        pipegemm.matmul(a, cupy.asarray(b.cpu().numpy()))


def test_cupy_refusals(cupy_arrays):
    cupy = cupy_arrays.cupy
    a = cupy.ones((64, 32), dtype=cupy.float32)
    b = cupy.ones((32, 48), dtype=cupy.float32)
    with pytest.raises(ValueError, match=r"out overlaps a"):
        pipegemm.matmul(a[:, :32], b[:, :32], out=a[:, :32])
    with pytest.raises(ValueError, match=r"a is float16: pipegemm\.matmul takes float32"):
        pipegemm.matmul(a.astype(cupy.float16), b)
    with pytest.raises(ValueError, match=r"out is 64 x 47"):
        pipegemm.matmul(a, b, out=cupy.empty((64, 47), dtype=cupy.float32))


def test_unsupported_layout_error(torch_arrays):
    # An error raised by the library on the GPU: Error, not ArgumentError.
    torch = torch_arrays.torch
    a_all = torch.rand(128, 101, device="cuda")
    b = torch.rand(100, 64, device="cuda")
    out = torch.full((128, 64), 3.0, device="cuda")
    with pytest.raises(pipegemm.Error) as caught:
        pipegemm.matmul(a_all[:, 1:], b, out=out, variant="tma")
    assert caught.value.status_name == "PG_ERR_UNSUPPORTED"
    assert not isinstance(caught.value, ValueError)
    assert "TMA" in caught.value.detail and caught.value.detail in str(caught.value)
    assert bool((out == 3.0).all())


def test_other_device(torch_arrays):
    torch = torch_arrays.torch
    if torch.cuda.device_count() < 2:
        pytest.skip("one GPU here")
    m, n, k = 256, 128, 512
    a_host, b_host, _ = inputs(m, n, k, 6)
    a, b = torch.from_numpy(a_host).to("cuda:1"), torch.from_numpy(b_host).to("cuda:1")
    with torch.cuda.device(0):
        c = pipegemm.matmul(a, b)
    assert c.device == a.device
    assert held_to_the_bound(c.cpu().numpy(), m, n, k, 6, 1.0, 0.0, "auto") is None
    with pytest.raises(ValueError, match=r"a is on cuda:1 and b on cuda:0"):
        pipegemm.matmul(a, b.to("cuda:0"))


# ---- JAX -------------------------------------------------------------------------------------

@pytest.fixture
def jax():
    jax = pytest.importorskip("jax")
    try:
        jax.devices("gpu")
    except RuntimeError as err:
        pytest.skip(f"JAX has no GPU backend: {err}")
    return jax


@pytest.mark.parametrize("variant", ["auto", "cublas", "auto_emulated"])
def test_jax(jax, variant):
    m, n, k = 300, 200, 500
    a_host, b_host, _ = inputs(m, n, k, 7)
    gpu = jax.devices("gpu")[0]
    a, b = jax.device_put(a_host, gpu), jax.device_put(b_host, gpu)
    c = pipegemm.matmul(a, b, variant=variant)
    assert isinstance(c, jax.Array)
    assert c.shape == (m, n) and c.devices() == a.devices()
    problem = held_to_the_bound(np.asarray(c), m, n, k, 7, 1.0, 0.0, variant)
    assert problem is None, f"{variant}: {problem}"
    assert np.array_equal(np.asarray(a), a_host)  # the inputs as they were


def test_jax_refusals(jax):
    gpu = jax.devices("gpu")[0]
    a = jax.device_put(np.ones((64, 32), np.float32), gpu)
    b = jax.device_put(np.ones((32, 48), np.float32), gpu)
    with pytest.raises(TypeError, match=r"out cannot be a JAX array"):
        pipegemm.matmul(a, b, out=jax.device_put(np.ones((64, 48), np.float32), gpu))
    with pytest.raises(ValueError, match=r"beta = 1\.0 scales out"):
        pipegemm.matmul(a, b, beta=1.0)


# ---- torch.matmul's semantics: every layout and batch, against float64 ------------------------

def torch_close(torch, got, a, b, alpha=1.0, precision="strict"):
    """None where `got` is within the library's bound of alpha a @ b in float64."""
    a64, b64 = a.detach().double(), b.detach().double()
    ref = alpha * torch.matmul(a64, b64)
    scale = abs(alpha) * torch.matmul(a64.abs(), b64.abs())
    k = a.shape[-1]
    from reference import tolerance
    bound = torch.from_numpy(np.asarray(tolerance(scale.cpu().numpy(), k, precision))).to(
        got.device)
    error = (got.double() - ref).abs()
    if got.shape != ref.shape:
        return f"shape {tuple(got.shape)}, torch's {tuple(ref.shape)}"
    bad = ~(error <= bound)
    return None if not bool(bad.any()) else f"{int(bad.sum())} elements outside the bound"


def layout_cases(torch):
    """(name, a, b): every op combination, batches equal, broadcast (2-D,
    expand()ed, size 1), 1-D, views a leading dimension apart."""
    g = torch.Generator(device="cuda").manual_seed(56)

    def r(*shape):
        return torch.rand(*shape, device="cuda", generator=g) * 2 - 1
    m, n, k = 67, 45, 131
    return [
        ("NN", r(m, k), r(k, n)),
        ("TN", r(k, m).t(), r(k, n)),
        ("NT", r(m, k), r(n, k).t()),
        ("TT", r(k, m).t(), r(n, k).t()),
        ("ld", r(m, k + 9)[:, 3:3 + k], r(k, n + 5)[:, :n]),
        ("batch", r(3, m, k), r(3, k, n)),
        ("batch-T", r(3, k, m).mT, r(3, n, k).mT),
        ("x@W.T", r(2, 3, m, k), r(n, k).t()),
        ("A broadcast", r(m, k), r(4, k, n)),
        ("expand", r(1, m, k).expand(5, m, k), r(5, k, n)),
        ("2x1 by 3", r(2, 1, m, k), r(3, k, n)),
        ("every other", r(6, m, k)[::2], r(3, k, n)),
        ("row", r(k), r(k, n)),
        ("column", r(m, k), r(k)),
        ("dot", r(k), r(k)),
        ("row batch", r(k), r(2, k, n)),
    ]


@pytest.mark.parametrize("variant", ["auto", "auto_emulated", "auto_tf32", "cublas",
                                     "cp_async"])
def test_layouts_against_torch(torch_arrays, variant):
    torch = torch_arrays.torch
    precision = PRECISION[variant]
    for name, a, b in layout_cases(torch):
        with warnings.catch_warnings():
            # cp_async (op N, N, one GEMM) copies op T operands, saying so
            warnings.simplefilter("ignore" if variant == "cp_async" else "error",
                                  pipegemm.CopyWarning)
            got = run(variant, lambda: pipegemm.matmul(a, b, alpha=-1.5, variant=variant))
        problem = torch_close(torch, got, a, b, -1.5, precision)
        assert problem is None, f"{variant}, {name}: {problem}"


def test_out_transposed_and_beta(torch_arrays):
    torch = torch_arrays.torch
    a, b = torch.rand(3, 40, 70, device="cuda"), torch.rand(70, 50, device="cuda")
    out = torch.rand(3, 50, 40, device="cuda").mT          # stored transposed
    before = out.clone()
    with warnings.catch_warnings():
        warnings.simplefilter("error", pipegemm.CopyWarning)
        assert pipegemm.matmul(a, b, out=out, alpha=2.0, beta=0.5) is out
    expected = 2.0 * torch.matmul(a.double(), b.double()) + 0.5 * before.double()
    assert torch.allclose(out.double(), expected, rtol=1e-5, atol=1e-4)


def test_copy_warning(torch_arrays):
    torch = torch_arrays.torch
    a = torch.rand(1, 30, device="cuda").expand(20, 30)     # rows of stride 0
    b = torch.rand(30, 10, device="cuda")
    with pytest.warns(pipegemm.CopyWarning, match=r"a \(20 x 30, strides \(0, 1\)"):
        got = pipegemm.matmul(a, b)
    assert torch_close(torch, got, a, b) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error", pipegemm.CopyWarning)
        with pytest.raises(pipegemm.CopyWarning):
            pipegemm.matmul(a, b)


@pytest.mark.parametrize("variant", ["auto", "auto_emulated"])
def test_backward_against_torch(torch_arrays, variant):
    torch = torch_arrays.torch
    for name, a, b in layout_cases(torch):
        x = a.detach().clone().requires_grad_(True)
        w = torch.nn.Parameter(b.detach().clone())
        y = pipegemm.matmul(x, w, alpha=0.75, variant=variant)
        weights = torch.rand(y.shape, device="cuda", dtype=torch.float64)
        (y.double() * weights).sum().backward()
        x64 = a.detach().double().requires_grad_(True)
        w64 = b.detach().double().requires_grad_(True)
        (0.75 * torch.matmul(x64, w64) * weights).sum().backward()
        for got, want in ((x.grad, x64.grad), (w.grad, w64.grad)):
            assert got.shape == want.shape, name
            assert torch.allclose(got.double(), want, rtol=1e-4, atol=1e-3), name


def test_torch_compile_fullgraph_on_the_gpu(torch_arrays):
    torch = torch_arrays.torch
    model = torch.nn.Linear(96, 64, device="cuda")
    x = torch.rand(4, 32, 96, device="cuda", requires_grad=True)

    def f(x):
        return torch.relu(pipegemm.matmul(x, model.weight.mT, variant="auto_emulated") +
                          model.bias).sum()
    compiled = torch.compile(f, fullgraph=True)
    loss = compiled(x)
    loss.backward()
    x64 = x.detach().double().requires_grad_(True)
    ref = torch.relu(x64 @ model.weight.double().mT + model.bias.double()).sum()
    ref.backward()
    assert torch.allclose(loss.double(), ref, rtol=1e-5)
    assert torch.allclose(x.grad.double(), x64.grad, rtol=1e-4, atol=1e-4)


def test_use_routes_a_model(torch_arrays):
    torch = torch_arrays.torch
    from torch.utils._python_dispatch import TorchDispatchMode

    class Calls(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.names = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.names.append(str(func))
            return func(*args, **(kwargs or {}))

    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(),
                                torch.nn.Linear(128, 32)).cuda()
    x = torch.rand(8, 64, device="cuda")
    expected = model.double()(x.double())
    model.float()
    for precision in ("strict", "emulated", "tf32"):
        calls = Calls()
        with pipegemm.torch.use(precision=precision), calls:
            y = model(x)
        assert sum("pipegemm.matmul" in name for name in calls.names) == 2, calls.names
        assert not any(name.startswith("aten.addmm") or name.startswith("aten.mm")
                       for name in calls.names), calls.names
        tolerance = 1e-2 if precision == "tf32" else 1e-4
        assert torch.allclose(y.double(), expected, rtol=tolerance, atol=tolerance)


def test_jax_jit_grad_vmap(jax):
    pj = pytest.importorskip("pipegemm.jax")
    if not pj.available():
        pytest.skip("this libpipegemm has no XLA handler (PG_XLA_FFI)")
    jnp = jax.numpy
    gpu = jax.devices("gpu")[0]
    x_host, w_host, _ = inputs(96, 64, 80, 8)
    x, w = jax.device_put(x_host, gpu), jax.device_put(w_host, gpu)
    f = jax.jit(lambda x, w: pj.matmul(x, w, variant="auto_emulated"))
    assert held_to_the_bound(np.asarray(f(x, w)), 96, 64, 80, 8, 1.0, 0.0,
                             "auto_emulated") is None
    weights = np.random.default_rng(9).uniform(-1, 1, (96, 64))
    gx, gw = jax.jit(jax.grad(lambda x, w: (pj.matmul(x, w) * weights).sum(),
                              argnums=(0, 1)))(x, w)
    np.testing.assert_allclose(np.asarray(gx), weights @ w_host.astype(np.float64).T,
                               rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(gw), x_host.astype(np.float64).T @ weights,
                               rtol=1e-4, atol=1e-4)
    xs = jnp.stack([x, 2 * x, -x])
    ys = jax.jit(jax.vmap(pj.matmul, in_axes=(0, None)))(xs, w)
    np.testing.assert_allclose(np.asarray(ys),
                               np.stack([s * x_host @ w_host for s in (1, 2, -1)]),
                               rtol=1e-4, atol=1e-4)


def test_jax_transposes(jax):
    """transpose_a / transpose_b on the GPU, against FP64 products of the
    stored arrays swapped, with the gradients (under jit)."""
    pj = pytest.importorskip("pipegemm.jax")
    if not pj.available():
        pytest.skip("this libpipegemm has no XLA handler (PG_XLA_FFI)")
    gpu = jax.devices("gpu")[0]
    rng = np.random.default_rng(11)
    a_host = rng.uniform(-1, 1, (3, 80, 96)).astype(np.float32)  # stored K x M: op T
    w_host = rng.uniform(-1, 1, (64, 80)).astype(np.float32)     # stored N x K: op T
    a, w = jax.device_put(a_host, gpu), jax.device_put(w_host, gpu)
    f = jax.jit(lambda a, w: pj.matmul(a, w, transpose_a=True, transpose_b=True))
    want = np.swapaxes(a_host.astype(np.float64), -1, -2) @ w_host.astype(np.float64).T
    np.testing.assert_allclose(np.asarray(f(a, w)), want, rtol=1e-4, atol=1e-4)
    weights = rng.uniform(-1, 1, want.shape)
    ga, gw = jax.jit(jax.grad(lambda a, w: (pj.matmul(a, w, transpose_a=True,
                                                     transpose_b=True) * weights).sum(),
                              argnums=(0, 1)))(a, w)
    # C = A^T W^T: dA = (dC W)^T, dW = (A dC)^T summed over the batch
    np.testing.assert_allclose(np.asarray(ga),
                               np.swapaxes(weights @ w_host.astype(np.float64), -1, -2),
                               rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(gw),
                               np.swapaxes(a_host.astype(np.float64) @ weights, -1, -2).sum(0),
                               rtol=1e-4, atol=1e-4)


# ---- the example -------------------------------------------------------------------------------

def test_bench_torch_example(torch_arrays):
    tests = os.path.dirname(os.path.abspath(__file__))
    example = os.path.join(os.path.dirname(tests), "examples", "bench_torch.py")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [os.path.dirname(tests)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    done = subprocess.run([sys.executable, example, "--m", "384", "--n", "256", "--k", "512",
                           "--rounds", "2", "--iters", "2", "--warmup", "1"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    for label in ("pipegemm auto", "pipegemm auto_emulated", "torch.matmul, TF32 off",
                  "torch.matmul, TF32 on"):
        row = [line for line in lines if line.startswith(label + " ")]
        assert len(row) == 1, done.stdout
        error = float(row[0].split()[-1])
        assert error < (8 + 512 ** 0.5) or "TF32 on" in label, done.stdout
