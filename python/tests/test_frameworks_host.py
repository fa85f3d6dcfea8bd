"""torch and JAX around pipegemm, without a GPU: what can be traced.

torch (where it imports): the operators' fake implementations on meta
tensors, torch.compile(fullgraph=True) over them, the autograd formula's
shapes for every broadcast and 1-D case, the routing switch's graph, and
the refusals that come before any device work.

JAX (where it imports): shapes under jit, grad and vmap on abstract arrays,
and the custom call XLA would run on a CUDA GPU (lowered for the CUDA
platform on this machine), with the ops its gradients use.

Each framework's tests skip, saying so, where it does not import; neither
is needed by the package itself."""
import importlib
import re
import warnings

import pytest

import pipegemm
from pipegemm import _library

# ---- torch -------------------------------------------------------------------------------------

CASES = [
    # (a's shape, b's shape): 2-D, batches equal and broadcast, 1-D rows and columns
    ((4, 5), (5, 6)),
    ((3, 4, 5), (3, 5, 6)),
    ((2, 3, 4, 5), (5, 6)),
    ((4, 5), (2, 5, 6)),
    ((2, 1, 4, 5), (3, 5, 6)),
    ((5,), (5, 6)),
    ((4, 5), (5,)),
    ((5,), (5,)),
    ((5,), (2, 5, 6)),
    ((2, 4, 5), (5,)),
]


@pytest.fixture
def torch():
    torch = pytest.importorskip("torch", reason="torch is not installed: its host tests "
                                                "(fake tensors, torch.compile) are skipped")
    import pipegemm.torch  # noqa: F401  (the operators)
    return torch


def meta(torch, shape, grad=False):
    return torch.empty(shape, device="meta", requires_grad=grad)


@pytest.mark.parametrize("a_shape, b_shape", CASES)
def test_torch_fake_shapes_are_torch_matmuls(torch, a_shape, b_shape):
    a, b = meta(torch, a_shape), meta(torch, b_shape)
    assert pipegemm.matmul(a, b).shape == torch.matmul(a, b).shape
    # a transposed view of b, read as op T
    if len(b_shape) >= 2:
        bt = meta(torch, b_shape[:-2] + b_shape[-2:][::-1]).mT
        assert pipegemm.matmul(a, bt).shape == torch.matmul(a, bt).shape


@pytest.mark.parametrize("a_shape, b_shape", CASES)
def test_torch_gradients_have_the_inputs_shapes(torch, a_shape, b_shape):
    a, b = meta(torch, a_shape, grad=True), torch.nn.Parameter(meta(torch, b_shape))
    pipegemm.matmul(a, b, alpha=2.0).sum().backward()
    assert a.grad.shape == a.shape and b.grad.shape == b.shape


def test_torch_backward_is_pipegemm_on_transposed_views(torch):
    # The backward graph: two more pipegemm.matmul calls, no copy of an
    # operand (transposes are views, read as op T), the broadcast batch of b
    # summed by one GEMM over the batch's rows.
    from torch.fx.experimental.proxy_tensor import make_fx

    def loss(x, w):
        y = pipegemm.matmul(x, w.mT, alpha=0.5, variant="auto_emulated")
        return torch.autograd.grad(y.sum(), (x, w), create_graph=False)

    graph = make_fx(loss)(meta(torch, (2, 3, 4, 5), grad=True), meta(torch, (6, 5), grad=True))
    calls = [n for n in graph.graph.nodes if n.target is torch.ops.pipegemm.matmul.default]
    assert len(calls) == 3
    for node in calls:
        assert node.args[2:] == (0.5, "auto_emulated", 0)
    assert not [n for n in graph.graph.nodes if "clone" in str(n.target) or
                "contiguous" in str(n.target)]
    shapes = sorted(tuple(n.meta["val"].shape) for n in calls)
    assert shapes == [(2, 3, 4, 5), (2, 3, 4, 6), (5, 6)]


def test_torch_compile_fullgraph(torch):
    calls = []

    def backend(gm, example_inputs):
        calls.extend(n.target for n in gm.graph.nodes if n.op == "call_function")
        return gm.forward

    def f(x, w, out):
        y = pipegemm.matmul(x, w.mT, variant="auto_tf32")
        pipegemm.matmul(x, w.mT, out=out, alpha=2.0, beta=1.0)
        return torch.relu(y) + out

    compiled = torch.compile(f, fullgraph=True, backend=backend)
    result = compiled(meta(torch, (3, 4, 5)), meta(torch, (6, 5)), meta(torch, (3, 4, 6)))
    assert result.shape == (3, 4, 6)
    names = {str(target).replace(".default", "") for target in calls}
    assert {"pipegemm.matmul", "pipegemm.matmul_out"} <= names, names


def test_torch_compile_with_autograd(torch):
    model = torch.nn.Linear(5, 6, device="meta")

    def step(x):
        with_grad = pipegemm.matmul(x, model.weight.mT) + model.bias
        return with_grad.square().sum()

    compiled = torch.compile(step, fullgraph=True, backend="aot_eager")
    compiled(meta(torch, (2, 4, 5))).backward()
    assert model.weight.grad.shape == (6, 5)


def test_torch_use_routes_a_models_matmuls(torch):
    from torch.fx.experimental.proxy_tensor import make_fx
    model = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.ReLU(),
                                torch.nn.Linear(7, 6, bias=False)).to("meta")
    other = meta(torch, (6, 3))

    def forward(x):
        y = model(x) @ other
        y = torch.mm(y, meta(torch, (3, 3)))
        y = torch.bmm(y.expand(2, 4, 3), meta(torch, (2, 3, 3)))
        y = torch.baddbmm(meta(torch, (1, 3)), y, meta(torch, (2, 3, 3)), beta=2, alpha=0.5)
        return torch.addmm(meta(torch, (3,)), y[0], meta(torch, (3, 3)), beta=0.5, alpha=2)

    for precision, variant in pipegemm.torch.PRECISIONS.items():
        with pipegemm.torch.use(precision=precision):
            graph = make_fx(forward)(meta(torch, (4, 5)))
        calls = [n for n in graph.graph.nodes if n.target is torch.ops.pipegemm.matmul.default]
        assert len(calls) == 7, graph.graph
        assert {n.args[3] for n in calls} == {variant}
        assert not [n for n in graph.graph.nodes
                    if n.target in (torch.ops.aten.mm.default, torch.ops.aten.bmm.default,
                                    torch.ops.aten.addmm.default, torch.ops.aten.baddbmm.default)]
    # Outside the switch, and for other dtypes, torch runs its own.
    graph = make_fx(forward)(meta(torch, (4, 5)))
    assert not [n for n in graph.graph.nodes if "pipegemm" in str(n.target)]
    with pipegemm.torch.use():
        graph = make_fx(lambda x: x @ x)(torch.empty((3, 3), device="meta",
                                                     dtype=torch.float64))
    assert not [n for n in graph.graph.nodes if "pipegemm" in str(n.target)]


def test_torch_route_switches_a_thread_on_and_off(torch):
    from torch.fx.experimental.proxy_tensor import make_fx

    def routed(x):
        graph = make_fx(lambda x: x @ x)(x)
        return [n.args[3] for n in graph.graph.nodes
                if n.target is torch.ops.pipegemm.matmul.default]

    x = meta(torch, (3, 3))
    try:
        assert pipegemm.torch.route("emulated").variant == "auto_emulated"
        assert routed(x) == ["auto_emulated"]
        pipegemm.torch.route("tf32")  # replaces the first
        assert routed(x) == ["auto_tf32"]
        # another thread runs torch's own
        import threading
        seen = []
        worker = threading.Thread(target=lambda: seen.append(routed(x)))
        worker.start()
        worker.join()
        assert seen == [[]]
    finally:
        assert pipegemm.torch.route(None) is None
    assert routed(x) == []


def test_torch_use_refuses_what_it_does_not_know(torch):
    with pytest.raises(ValueError, match=r"precision = 'fp16': pipegemm\.torch\.use takes "
                                         r"'strict', 'emulated', 'tf32', or variant="):
        pipegemm.torch.use(precision="fp16")
    with pytest.raises(pipegemm.ArgumentError, match="PG_ERR_UNKNOWN_VARIANT"):
        pipegemm.torch.use(variant="nope")


def test_torch_refusals(torch):
    a = meta(torch, (4, 5), grad=True)
    with pytest.raises(ValueError, match=r"^pipegemm\.matmul with out= has no autograd"):
        pipegemm.matmul(a, meta(torch, (5, 6)), out=meta(torch, (4, 6)))
    with pytest.raises(ValueError, match=r"a is 4 x 5 and b 4 x 6: a's width must equal"):
        pipegemm.matmul(meta(torch, (4, 5)), meta(torch, (4, 6)))
    with pytest.raises(ValueError, match=r"^a is torch\.float64: pipegemm\.matmul takes "
                                         r"torch\.float32$"):
        pipegemm.matmul(torch.empty((4, 5), device="meta", dtype=torch.float64),
                        meta(torch, (5, 6)))
    with pytest.raises(ValueError, match=r"^a is on cpu: pipegemm\.matmul takes CUDA tensors$"):
        pipegemm.matmul(torch.zeros(4, 5), torch.zeros(5, 6))
    with pytest.raises(ValueError, match=r"^beta = 1\.0 scales out"):
        pipegemm.matmul(meta(torch, (4, 5)), meta(torch, (5, 6)), beta=1.0)
    with pytest.raises(pipegemm.ArgumentError, match=r"stages = 9: cp_async takes 1\.\.8"):
        pipegemm.matmul(meta(torch, (4, 5)), meta(torch, (5, 6)), variant="cp_async",
                        stages=9)


# ---- JAX ---------------------------------------------------------------------------------------

@pytest.fixture
def jax():
    jax = pytest.importorskip("jax", reason="jax is not installed: its host tests (jit, grad "
                                            "and vmap on abstract arrays) are skipped")
    if not _library.has_xla_handler():
        pytest.skip(f"{pipegemm.library_path} has no XLA handler (built without jaxlib's "
                    f"headers: CMake's PG_XLA_FFI)")
    importlib.import_module("pipegemm.jax")  # the FFI target (an import statement here
    # would make `pipegemm` this function's own name, unbound above)
    return jax


def spec(jax, shape):
    return jax.ShapeDtypeStruct(shape, jax.numpy.float32)


@pytest.mark.parametrize("a_shape, b_shape", CASES)
def test_jax_shapes_under_jit_grad_vmap(jax, a_shape, b_shape):
    jnp = jax.numpy
    a, b = spec(jax, a_shape), spec(jax, b_shape)
    expected = jax.eval_shape(jnp.matmul, a, b)
    assert jax.eval_shape(jax.jit(pipegemm.jax.matmul), a, b) == expected
    grads = jax.eval_shape(jax.grad(lambda x, y: pipegemm.jax.matmul(x, y).sum(),
                                    argnums=(0, 1)), a, b)
    assert (grads[0].shape, grads[1].shape) == (a_shape, b_shape)
    mapped = jax.eval_shape(jax.vmap(pipegemm.jax.matmul, in_axes=(0, None)),
                            spec(jax, (7,) + a_shape), b)
    assert mapped.shape == (7,) + expected.shape


def custom_calls(text):
    """(op_a, op_b, operand shapes) of each pipegemm custom call in StableHLO text."""
    found = []
    for line in text.splitlines():
        if "@pipegemm_matmul" not in line:
            continue
        ops = re.search(r"op_a = (\d) : i32, op_b = (\d) : i32", line)
        shapes = re.findall(r"tensor<([0-9x]+)xf32>", line.split(") ->")[0].split("(")[-1])
        found.append((int(ops.group(1)), int(ops.group(2)), shapes))
    return found


def test_jax_lowers_to_the_custom_call_with_transposes_as_ops(jax):
    jnp = jax.numpy

    def loss(x, w):
        return pipegemm.jax.matmul(x, w, alpha=0.5, variant="auto_emulated").sum()

    x, w = jnp.zeros((3, 4, 5), jnp.float32), jnp.zeros((5, 6), jnp.float32)
    lowered = jax.jit(jax.grad(loss, argnums=(0, 1))).trace(x, w).lower(
        lowering_platforms=("cuda",))
    text = lowered.as_text()
    assert 'variant = "auto_emulated"' in text and "alpha = 5.000000e-01" in text
    # dx = dC w^T (w read as op T); dw = x^T dC over the batch's rows (x as op T)
    assert sorted(custom_calls(text)) == [(0, 1, ["12x6", "5x6"]), (1, 0, ["12x5", "12x6"])]
    assert "stablehlo.transpose" not in text
    # the forward: the batch's rows at once
    text = jax.jit(loss).trace(x, w).lower(lowering_platforms=("cuda",)).as_text()
    assert custom_calls(text) == [(0, 0, ["12x5", "5x6"])]


@pytest.mark.parametrize("a_shape, b_shape", [((4, 5), (6, 5)), ((3, 4, 5), (6, 5)),
                                              ((3, 5, 4), (3, 6, 5)), ((2, 1, 5, 4), (3, 6, 5))])
def test_jax_transposes_read_as_stored(jax, a_shape, b_shape):
    """transpose_a / transpose_b: the shapes of a.mT @ b.mT (as each flag
    says), under jit, grad and vmap, and the call reads the operand as
    stored (op T, no transpose written by XLA)."""
    jnp = jax.numpy
    t_a = a_shape[-1] == 4  # a stored K x M in these cases
    t_b = True

    def ours(x, y):
        return pipegemm.jax.matmul(x, y, transpose_a=t_a, transpose_b=t_b)

    def theirs(x, y):
        return jnp.matmul(jnp.swapaxes(x, -1, -2) if t_a else x, jnp.swapaxes(y, -1, -2))

    a, b = spec(jax, a_shape), spec(jax, b_shape)
    expected = jax.eval_shape(theirs, a, b)
    assert jax.eval_shape(jax.jit(ours), a, b) == expected
    grads = jax.eval_shape(jax.grad(lambda x, y: ours(x, y).sum(), argnums=(0, 1)), a, b)
    assert (grads[0].shape, grads[1].shape) == (a_shape, b_shape)
    mapped = jax.eval_shape(jax.vmap(ours, in_axes=(0, None)), spec(jax, (7,) + a_shape), b)
    assert mapped.shape == (7,) + expected.shape
    text = jax.jit(ours).trace(jnp.zeros(a_shape, jnp.float32),
                               jnp.zeros(b_shape, jnp.float32)).lower(
        lowering_platforms=("cuda",)).as_text()
    calls = custom_calls(text)
    assert len(calls) == 1 and calls[0][:2] == (int(t_a), 1), text
    assert "stablehlo.transpose" not in text


def test_jax_transpose_of_a_vector_is_refused(jax):
    jnp = jax.numpy
    with pytest.raises(ValueError, match=r"^transpose_b: b is 1-D \(5\), which has no transpose$"):
        pipegemm.jax.matmul(jnp.zeros((4, 5)), jnp.zeros(5), transpose_b=True)


def test_jax_vmap_is_a_batch_dimension_of_the_call(jax):
    jnp = jax.numpy
    xs, w = jnp.zeros((7, 4, 5), jnp.float32), jnp.zeros((5, 6), jnp.float32)
    f = jax.jit(jax.vmap(lambda x, y: pipegemm.jax.matmul(y, x), in_axes=(None, 0)))
    text = f.trace(w, xs).lower(lowering_platforms=("cuda",)).as_text()
    assert [shapes for _, _, shapes in custom_calls(text)] == [["7x4x5", "1x5x6"]] or \
        [shapes for _, _, shapes in custom_calls(text)] == [["28x5", "5x6"]], text


def test_jax_refusals(jax):
    jnp = jax.numpy
    with pytest.raises(ValueError, match=r"a is 4 x 5 and b 4 x 6: a's width must equal"):
        pipegemm.jax.matmul(jnp.zeros((4, 5)), jnp.zeros((4, 6)))
    with pytest.raises(ValueError, match=r"^a is int32: pipegemm\.matmul takes float32$"):
        pipegemm.jax.matmul(jnp.zeros((4, 5), jnp.int32), jnp.zeros((5, 6)))
    with pytest.raises(pipegemm.ArgumentError, match="PG_ERR_UNKNOWN_VARIANT"):
        pipegemm.jax.matmul(jnp.zeros((4, 5)), jnp.zeros((5, 6)), variant="nope")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert pipegemm.jax.TARGET == "pipegemm_matmul"
