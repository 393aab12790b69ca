"""torch.linalg's factorizations as WGSL kernels, one workgroup per matrix: batched LU with partial
pivoting and Cholesky (64 threads over its rows) and triangular solve (a thread per right-hand side).
`ops/_linalg_factor.py`'s host bridge takes a kernel from `DEVICE_KERNELS` for a webgpu tensor when
there is one (float32, square matrices up to MAX_N, at most 65,535 of them), so det, slogdet,
lu_factor, lu_solve, solve, inv, solve_triangular, cholesky and cholesky_solve run on the GPU;
otherwise the host computes. On CPU adapters a kernel's loops must stay within BUDGET iterations per
thread: lavapipe (llvmpipe) ends a shader's loops after 65,535 iterations per invocation, counted over all
its loops (each entered loop costs 2 more), which silently cut LU from n = 200 and Cholesky from n = 220."""
from .. import _dtype
from ..ops import _linalg_factor
from .custom import custom_op

MAX_N = 256
BUDGET = 50000     # loop iterations per thread and dispatch on CPU adapters


def _cdiv(a, b):
    return -(-a // b)


# each kernel's loop iterations for its busiest thread (thread 0), as its loops run
def _lu_cost(n, k):
    return _cdiv(n * n, 64) + 2 + sum(_cdiv(n - j, 64) + 72 + _cdiv(n, 64) + _cdiv(n - j - 1, 64) * (n - j + 1)
                                      for j in range(n))


def _cholesky_cost(n, k):
    return _cdiv(n * n, 64) + 2 + sum(j + 5 + _cdiv(n - j - 1, 64) * (j + 2) for j in range(n))


def _trisolve_cost(n, k):
    return _cdiv(k, 64) * (n * (n - 1) // 2 + 3 * n)

# out per matrix: n*n packed LU, n pivots (1-based, as f32), info; LAPACK getrf's choices (first
# largest |pivot|, a zero pivot sets info and skips the scaling)
_LU = """
var<workgroup> red_v: array<f32, 64>;
var<workgroup> red_i: array<u32, 64>;
var<workgroup> piv: u32;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lix: u32) {
  let n = param_u32(0);
  let b = wid.x;
  let src = b * n * n;
  let ob = b * (n * n + n + 1u);
  for (var e = lix; e < n * n; e += 64u) { out[ob + e] = in0[src + e]; }
  storageBarrier();
  workgroupBarrier();
  var info = 0u;
  for (var k = 0u; k < n; k++) {
    var bv = -1.0;
    var bi = k;
    for (var i = k + lix; i < n; i += 64u) {
      let v = abs(out[ob + i * n + k]);
      if (v > bv) { bv = v; bi = i; }
    }
    red_v[lix] = bv;
    red_i[lix] = bi;
    workgroupBarrier();
    if (lix == 0u) {
      var mv = red_v[0];
      var mi = red_i[0];
      for (var t = 1u; t < 64u; t++) {
        if (red_v[t] > mv || (red_v[t] == mv && red_i[t] < mi)) { mv = red_v[t]; mi = red_i[t]; }
      }
      piv = mi;
      out[ob + n * n + k] = f32(mi + 1u);
    }
    let p = workgroupUniformLoad(&piv);
    if (p != k) {
      for (var j = lix; j < n; j += 64u) {
        let t = out[ob + k * n + j];
        out[ob + k * n + j] = out[ob + p * n + j];
        out[ob + p * n + j] = t;
      }
    }
    storageBarrier();
    workgroupBarrier();
    let d = out[ob + k * n + k];
    if (d == 0.0) {
      if (info == 0u) { info = k + 1u; }
    } else {
      for (var i = k + 1u + lix; i < n; i += 64u) {
        let f = out[ob + i * n + k] / d;
        out[ob + i * n + k] = f;
        for (var j = k + 1u; j < n; j++) { out[ob + i * n + j] -= f * out[ob + k * n + j]; }
      }
    }
    storageBarrier();
    workgroupBarrier();
  }
  if (lix == 0u) { out[ob + n * n + n] = f32(info); }
}
"""

def _matrix_op(name, source, tail):
    """A kernel over a batch of n x n matrices writing n*n + tail(n) values per matrix."""
    return custom_op(name, source, workgroup_size=64,
                     output_shape=lambda a: (a.shape[0], a.shape[1] * a.shape[1] + tail(a.shape[1])),
                     grid=lambda a: (a.shape[0], 1, 1))


def _packed(op, A, cost):
    """(op's output on A's matrices [B, n*n + tail], n, batch), or None: not the kernels' input."""
    n, B = A.shape[-1], _batch(A, cost)
    if B is None:
        return None
    return op(A.reshape(B, n, n).contiguous(), params=(n,)), n, tuple(A.shape[:-2])


_lu_op = _matrix_op("LinalgLuFactorKernel", _LU, lambda n: n + 1)


def lu(A):
    """(LU, pivots, info) of a batch of float32 square matrices on the GPU, or None: not this kernel's."""
    got = _packed(_lu_op, A, _lu_cost)
    if got is None:
        return None
    r, n, batch = got
    nn = n * n
    return (r[:, :nn].reshape(batch + (n, n)), r[:, nn:nn + n].to(_dtype.int32).reshape(batch + (n,)),
            r[:, nn + n].to(_dtype.int32).reshape(batch))


# X with A X = B: each thread substitutes one column of B, rows in order (IEEE: a zero pivot gives inf/nan)
_TRISOLVE = """
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lix: u32) {
  let n = param_u32(0);
  let k = param_u32(1);
  let upper = param_u32(2) == 1u;
  let unit = param_u32(3) == 1u;
  let a0 = wid.x * n * n;
  let b0 = wid.x * n * k;
  for (var c = lix; c < k; c += 64u) {
    for (var s = 0u; s < n; s++) {
      let i = select(s, n - 1u - s, upper);
      var acc = in1[b0 + i * k + c];
      let lo = select(0u, i + 1u, upper);
      let hi = select(i, n, upper);
      for (var j = lo; j < hi; j++) { acc -= in0[a0 + i * n + j] * out[b0 + j * k + c]; }
      out[b0 + i * k + c] = select(acc / in0[a0 + i * n + i], acc, unit);
    }
  }
}
"""

_trisolve_op = custom_op("LinalgSolveTriangularKernel", _TRISOLVE, workgroup_size=64,
                         output_shape=lambda a, b: tuple(b.shape), grid=lambda a, b: (a.shape[0], 1, 1))


def _batch(A, cost, k=0):
    n = A.shape[-1]
    B = A.numel() // (n * n) if n else 0
    ok = A.dtype is _dtype.float32 and A.shape[-2] == n and 0 < n <= MAX_N and 0 < B <= 65535 and \
        (not A._backend.is_cpu_adapter or cost(n, k) <= BUDGET)
    return B if ok else None


def trisolve(A, Bm, upper, unit):
    """(X,) with A X = Bm for float32 batches on the GPU (one batch: `host`'s inputs), or None."""
    B = _batch(A, _trisolve_cost, Bm.shape[-1])
    if B is None or Bm.dtype is not _dtype.float32 or Bm.shape[-1] == 0:
        return None
    n, k = A.shape[-1], Bm.shape[-1]
    X = _trisolve_op(A.reshape(B, n, n).contiguous(), Bm.reshape(B, n, k).contiguous(),
                     params=(n, k, int(upper), int(unit)))
    return (X.reshape(tuple(Bm.shape)),)


# out per matrix: n*n lower L (zeros above, and from a failing column on), info (the order of the first
# leading minor that is not positive-definite), from A's lower triangle
_CHOLESKY = """
var<workgroup> dj: f32;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lix: u32) {
  let n = param_u32(0);
  let src = wid.x * n * n;
  let ob = wid.x * (n * n + 1u);
  for (var e = lix; e < n * n; e += 64u) { out[ob + e] = 0.0; }
  storageBarrier();
  workgroupBarrier();
  var info = 0u;
  for (var j = 0u; j < n; j++) {
    if (lix == 0u) {
      var s = in0[src + j * n + j];
      for (var k = 0u; k < j; k++) { s -= out[ob + j * n + k] * out[ob + j * n + k]; }
      dj = select(0.0, sqrt(s), s > 0.0);
      out[ob + j * n + j] = dj;
    }
    let d = workgroupUniformLoad(&dj);
    if (d == 0.0) {
      info = j + 1u;
      break;
    }
    for (var i = j + 1u + lix; i < n; i += 64u) {
      var s = in0[src + i * n + j];
      for (var k = 0u; k < j; k++) { s -= out[ob + i * n + k] * out[ob + j * n + k]; }
      out[ob + i * n + j] = s / d;
    }
    storageBarrier();
    workgroupBarrier();
  }
  if (lix == 0u) { out[ob + n * n] = f32(info); }
}
"""

_cholesky_op = _matrix_op("LinalgCholeskyKernel", _CHOLESKY, lambda n: 1)


def cholesky(A):
    """(L, info) of a batch of float32 matrices on the GPU, or None: not this kernel's."""
    got = _packed(_cholesky_op, A, _cholesky_cost)
    if got is None:
        return None
    r, n, batch = got
    return r[:, :n * n].reshape(batch + (n, n)), r[:, n * n].to(_dtype.int32).reshape(batch)


_linalg_factor.DEVICE_KERNELS[("webgpu", "lu")] = lu
_linalg_factor.DEVICE_KERNELS[("webgpu", "cholesky")] = cholesky
_linalg_factor.DEVICE_KERNELS[("webgpu", "trisolve")] = trisolve
