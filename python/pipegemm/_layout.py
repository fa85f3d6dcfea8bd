"""torch.matmul's operands as pg_gemm calls, from shapes and strides alone
(no framework, no device): which op and leading dimension each matrix is
read with, which batch dimensions collapse to one stride, and what is left
to a loop of calls or a copy.

The semantics are torch.matmul's (and numpy.matmul's): 1-D a is a row
(1 x K) and 1-D b a column (K x 1), that dimension dropped from the result;
the dimensions before the last two are a batch, broadcast against each
other (aligned from the right; a dimension of 1, or a missing one, is read
again for every index of the other's).

A matrix of rows x cols with element strides (s_row, s_col) is read by
pg_gemm as it is stored (op N: s_col = 1, rows ld = s_row >= cols apart) or
as the transpose of what is stored (op T: s_row = 1, columns ld = s_col >=
rows apart); a dimension of size 1 takes any stride. Neither: the matrix
maps onto nothing, and is copied (Plan.copies says which and why). The
result C is read as pg_gemm's C (op N) or, where out is stored transposed,
the whole product is turned around, C^T = op(B)^T op(A)^T: pg_gemm's A is
then the caller's b and its B the caller's a, each with its op flipped.

The batch dimensions of the result (those of size 1 left out) collapse from
the innermost outwards while each operand's stride at a dimension is its
stride at the next inner one times that one's size (0 stays 0: a broadcast
operand): that group is pg_gemm's strided batch, and each index of the
dimensions outside it is one more call (Plan.launches). Where B is the same
matrix for the whole batch, A is read as stored (op N), and the batch's As
and Cs are each one block of rows (stride m * ld), the batch is one GEMM of
batch * M rows, as torch does for x @ W.
"""

import itertools
import math
from typing import NamedTuple

INT_MAX = 2**31 - 1
N, T = 0, 1
OP_NAMES = ("N", "T")


def shape_text(shape):
    """"4 x 5" for a matrix, "(2, 4, 5)" otherwise."""
    shape = tuple(int(x) for x in shape)
    if len(shape) == 2:
        return f"{shape[0]} x {shape[1]}"
    return str(shape)


def matrix_layout(rows, cols, s_row, s_col):
    """(op, ld) with which pg_gemm reads a rows x cols matrix of element
    strides (s_row, s_col), op N preferred; None where it maps onto neither."""
    if rows == 0 or cols == 0 or (rows == 1 and cols == 1):
        return N, max(1, cols)
    if (cols == 1 or s_col == 1) and (rows == 1 or s_row >= max(1, cols)):
        return N, s_row if rows > 1 else max(1, cols)
    if (rows == 1 or s_row == 1) and (cols == 1 or s_col >= max(1, rows)):
        return T, s_col if cols > 1 else max(1, rows)
    return None


def broadcast(name_a, batch_a, name_b, batch_b):
    """The broadcast of two batch shapes, or ValueError."""
    rank = max(len(batch_a), len(batch_b))
    pa = (1,) * (rank - len(batch_a)) + tuple(batch_a)
    pb = (1,) * (rank - len(batch_b)) + tuple(batch_b)
    result = []
    for x, y in zip(pa, pb):
        if x != y and x != 1 and y != 1:
            raise ValueError(f"{name_a}'s batch dimensions {tuple(batch_a)} and {name_b}'s "
                             f"{tuple(batch_b)} do not broadcast: each pair, aligned from the "
                             f"right, must be equal or hold a 1")
        result.append(y if x == 1 else x)
    return tuple(result)


class Shapes(NamedTuple):
    """torch.matmul's shapes of one call."""
    result: tuple        # the result's shape
    batch: tuple         # the broadcast batch dimensions
    m: int
    n: int
    k: int
    a: tuple             # a's shape as a matrix or a batch of them (1-D promoted)
    b: tuple
    row: bool            # a was 1-D: the result has no M dimension
    column: bool         # b was 1-D: no N dimension


def shapes(a_shape, b_shape):
    """The Shapes of a @ b (torch.matmul's rules), or ValueError."""
    a_shape, b_shape = tuple(a_shape), tuple(b_shape)  # torch's symbolic sizes stay symbolic
    for name, shape in (("a", a_shape), ("b", b_shape)):
        if not shape:
            raise ValueError(f"{name} is a scalar (0 dimensions): pipegemm.matmul takes arrays "
                             f"of 1 dimension or more, as torch.matmul does")
    row, column = len(a_shape) == 1, len(b_shape) == 1
    pa = (1,) + a_shape if row else a_shape
    pb = b_shape + (1,) if column else b_shape
    m, k = pa[-2:]
    k2, n = pb[-2:]
    if k != k2:
        raise ValueError(f"a is {shape_text(a_shape)} and b {shape_text(b_shape)}: a's width "
                         f"must equal b's height")
    batch = broadcast("a", pa[:-2], "b", pb[:-2])
    result = batch + (() if row else (m,)) + (() if column else (n,))
    for what, value in (("M", m), ("N", n), ("K", k)):
        if value > INT_MAX:
            raise ValueError(f"{what} = {value}: the library takes at most {INT_MAX} (a C int)")
    return Shapes(result, batch, m, n, k, pa, pb, row, column)


def promote(s, name, shape, strides):
    """Strides of a, b or out as those of Shapes' matrices (1-D promoted)."""
    strides = tuple(int(x) for x in strides)
    if name == "a" and s.row:
        return (0,) + strides
    if name == "b" and s.column:
        return strides + (0,)
    if name == "out":
        at = len(s.batch)
        if s.row:
            strides = strides[:at] + (0,) + strides[at:]
        if s.column:
            strides = strides + (0,)
    return strides


def batch_strides(shape, strides, batch):
    """The operand's element stride at each broadcast batch dimension (0
    where it has size 1 or lacks the dimension)."""
    own = len(shape) - 2
    result = []
    for j in range(len(batch)):
        d = j - (len(batch) - own)
        result.append(0 if d < 0 or shape[d] == 1 else int(strides[d]))
    return result


def overlaps_itself(shape, strides):
    """Whether two indices of an array might address one element: False
    where the dimensions, sorted by |stride|, each step past everything the
    smaller ones reach (the test is sufficient, not necessary)."""
    reach = 0
    for size, stride in sorted(((s, abs(t)) for s, t in zip(shape, strides) if s > 1),
                               key=lambda p: p[1]):
        if stride <= reach:
            return True
        reach += (size - 1) * stride
    return False


class Launch(NamedTuple):
    """One pg_gemm call: element offsets from each array's start, and its batch."""
    offset_a: int
    offset_b: int
    offset_c: int
    batch: int
    stride_a: int
    stride_b: int
    stride_c: int


class Plan(NamedTuple):
    shapes: Shapes
    copies: dict          # {"a" | "b" | "out": why}; while not empty, nothing else is set
    swapped: bool = False  # pg_gemm's A is the caller's b (out stored transposed)
    m: int = 0            # as pg_gemm sees them
    n: int = 0
    k: int = 0
    op_a: int = N
    op_b: int = N
    lda: int = 1
    ldb: int = 1
    ldc: int = 1
    launches: tuple = ()


def copy_reason(name, shape, strides):
    return (f"{name} ({shape_text(shape)}, strides {tuple(int(x) for x in strides)} in "
            f"elements) maps onto no layout pg_gemm reads (rows or columns a leading dimension "
            f"apart, elements adjacent)")


def plan(a_shape, a_strides, b_shape, b_strides, out_shape=None, out_strides=None,
         any_layout=True, variant=""):
    """The Plan of a @ b into out (None: a new row-major result). Strides in
    elements. any_layout False (a study kernel: op N, N and one GEMM) turns
    op T operands into copies and every batch into calls. ValueError for
    shapes that do not multiply, or an out that cannot be written."""
    s = shapes(a_shape, b_shape)
    if out_shape is not None and tuple(int(x) for x in out_shape) != s.result:
        raise ValueError(f"out is {shape_text(out_shape)}; a {shape_text(a_shape)} times b "
                         f"{shape_text(b_shape)} is {shape_text(s.result)}")
    a_st = promote(s, "a", a_shape, a_strides)
    b_st = promote(s, "b", b_shape, b_strides)
    full = s.batch + (s.m, s.n)
    if out_shape is None:
        c_st, step = [], 1
        for size in reversed(full):
            c_st.insert(0, step)
            step *= max(1, size)
        c_st = tuple(c_st)
    else:
        c_st = promote(s, "out", out_shape, out_strides)
        if overlaps_itself(full, c_st):
            raise ValueError(f"out's elements overlap one another (shape {tuple(out_shape)}, "
                             f"strides {tuple(int(x) for x in out_strides)} in elements): "
                             f"pipegemm.matmul writes each element once")

    layout_a = matrix_layout(s.m, s.k, a_st[-2], a_st[-1])
    layout_b = matrix_layout(s.k, s.n, b_st[-2], b_st[-1])
    layout_c = matrix_layout(s.m, s.n, c_st[-2], c_st[-1])
    copies = {}
    for name, layout, shape, strides in (("a", layout_a, a_shape, a_strides),
                                         ("b", layout_b, b_shape, b_strides),
                                         ("out", layout_c, out_shape, out_strides)):
        if layout is None:
            copies[name] = copy_reason(name, shape, strides)
        elif not any_layout and layout[0] == T and name != "out":
            copies[name] = (f"{name} is read transposed (op T), which {variant} does not take "
                            f"(op N, N and one GEMM)")
    if not any_layout and layout_c is not None and layout_c[0] == T:
        copies["out"] = (f"out is stored transposed, which {variant} does not write (op N, N "
                         f"and one GEMM)")
    if copies:
        return Plan(s, copies)

    swapped = layout_c[0] == T
    m, n, k = s.m, s.n, s.k
    (op_a, lda), (op_b, ldb), ldc = layout_a, layout_b, layout_c[1]
    sa = batch_strides(s.a, a_st, s.batch)
    sb = batch_strides(s.b, b_st, s.batch)
    sc = [int(x) for x in c_st[:len(s.batch)]]
    if swapped:
        m, n = n, m
        (op_a, lda), (op_b, ldb) = (1 - op_b, ldb), (1 - op_a, lda)
        sa, sb = sb, sa

    if math.prod(s.batch) == 0 or m == 0 or n == 0:
        return Plan(s, {}, swapped, m, n, k, op_a, op_b, lda, ldb, ldc, ())

    # The inner group of batch dimensions: one stride each.
    dims = [j for j, size in enumerate(s.batch) if size != 1]
    group, batch = [], 1
    for j in reversed(dims):
        size = s.batch[j]
        if any(x[j] < 0 for x in (sa, sb, sc)) or batch * size > INT_MAX:
            break
        if group:
            e = group[0]
            if any(x[j] != x[e] * s.batch[e] for x in (sa, sb, sc)):
                break
        group.insert(0, j)
        batch *= size
    inner = group[-1] if group else None
    stride_a, stride_b, stride_c = ((sa[inner], sb[inner], sc[inner]) if group else (0, 0, 0))
    if (batch > 1 and op_a == N and stride_b == 0 and stride_a == m * lda and
            stride_c == m * ldc and m * batch <= INT_MAX):
        m, batch, stride_a, stride_c = m * batch, 1, 0, 0
    elif batch > 1 and not any_layout:
        group, batch, stride_a, stride_b, stride_c = [], 1, 0, 0, 0
    outer = [j for j in dims if j not in group]
    launches = []
    for index in itertools.product(*(range(s.batch[j]) for j in outer)):
        launches.append(Launch(sum(i * sa[j] for i, j in zip(index, outer)),
                               sum(i * sb[j] for i, j in zip(index, outer)),
                               sum(i * sc[j] for i, j in zip(index, outer)),
                               batch, stride_a, stride_b, stride_c))
    return Plan(s, {}, swapped, m, n, k, op_a, op_b, lda, ldb, ldc, tuple(launches))


def storage(rows, cols, strides):
    """(rows, cols, ld) of the row-major storage a matrix is read from: its
    own for op N, its transpose's for op T; None where it maps onto nothing."""
    layout = matrix_layout(rows, cols, strides[-2], strides[-1])
    if layout is None:
        return None
    op, ld = layout
    return (rows, cols, ld) if op == N else (cols, rows, ld)


def matrices(shape, strides):
    """(element offset, rows, cols, ld) of every distinct matrix an operand
    reads or writes (its own batch dimensions; stride 0 ones once), as
    stored; None where its matrices map onto nothing."""
    shape, strides = tuple(shape), tuple(strides)
    if len(shape) == 1:  # a row or a column: one matrix either way
        shape, strides = (1,) + shape, (0,) + strides
    form = storage(shape[-2], shape[-1], strides)
    if form is None:
        return None
    dims = [d for d in range(len(shape) - 2) if shape[d] > 1 and strides[d] != 0]
    offsets = {sum(i * strides[d] for i, d in zip(index, dims))
               for index in itertools.product(*(range(shape[d]) for d in dims))}
    return [(offset,) + form for offset in sorted(offsets)]


def count_matrices(shape, strides):
    """How many matrices matrices() would list, without listing them."""
    return math.prod(shape[d] for d in range(len(shape) - 2) if strides[d] != 0)
