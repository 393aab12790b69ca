"""torch.linalg's orthogonal factorizations as WGSL kernels, one workgroup (64 threads) per matrix, batched:
Householder QR (LAPACK geqrf/orgqr's reflectors and signs), the symmetric eigensolver (two-sided cyclic
Jacobi, the disjoint pairs of each round-robin step rotated in parallel) and the SVD (one-sided Jacobi,
Hestenes). `ops/_linalg_factor.py`'s host bridge takes them from `DEVICE_KERNELS` for float32 webgpu tensors
(at most 65,535 matrices; eigh and SVD up to MAX_N, the smaller side for SVD; on CPU adapters such as lavapipe
up to CPU_MAX_N on both sides, where one workgroup's sweeps run 10-100x slower than LAPACK on the host: a
96 x 96 SVD 3.3 s against 68 ms); otherwise the host computes.

Each factorization keeps its matrices' state in one buffer (`in0`: working copies, a small header, then the
results, sliced here) and advances it over several dispatches of one kernel, each running at most BUDGET loop
iterations per thread (`linalg.py`: lavapipe's limit), which also keeps a dispatch short on real GPUs."""
from .. import _dtype
from ..ops import _linalg_factor, _prims
from ..ops.shape import cat
from .custom import custom_op
from .linalg import BUDGET, _cdiv

MAX_N = 512        # eigh's n and SVD's smaller side (the workgroup holds a rotation per pair)
CPU_MAX_N = 64     # both sides, on CPU adapters
MAX_BATCH = 65535
SWEEPS = 20        # Jacobi sweeps at most (float32 converges in about 6-10)
EPS = 2.0 ** -23

# a 64-thread reduction: every thread gets the workgroup's sum (or max) of its values
_REDUCE = """
var<workgroup> red: array<f32, 64>;

fn wg_reduce(lix: u32, v: f32, is_max: bool) -> f32 {
  red[lix] = v;
  workgroupBarrier();
  for (var s = 32u; s > 0u; s >>= 1u) {
    if (lix < s) { red[lix] = select(red[lix] + red[lix + s], max(red[lix], red[lix + s]), is_max); }
    workgroupBarrier();
  }
  let r = workgroupUniformLoad(&red[0]);
  workgroupBarrier();
  return r;
}
"""

# state per matrix (m x n, k = min(m, n)): m*n geqrf's packed result (R on and above the diagonal, the
# reflectors' vectors below), k taus, m*c of Q = H_0 ... H_{k-1} I[:, :c]. Steps [s0, s1) of the k column
# steps then the min(k, c) steps applying a reflector to Q (s0 = 0: the copy of A first). LAPACK dlarfg's
# reflector: beta = -sign(alpha) |(alpha, x)|, tau = (beta - alpha) / beta, v = x / (alpha - beta); tau = 0
# where x is zero.
_QR = _REDUCE + """
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lix: u32) {
  let m = param_u32(0);
  let n = param_u32(1);
  let c = param_u32(2);
  let k = min(m, n);
  let a = wid.x * (m * n + k + m * c);
  let t = a + m * n;
  let q = t + k;
  if (param_u32(3) == 0u) {
    for (var e = lix; e < m * n; e += 64u) { in0[a + e] = in1[wid.x * m * n + e]; }
    for (var e = lix; e < m * c; e += 64u) { in0[q + e] = select(0.0, 1.0, e / c == e % c); }
    storageBarrier();
    workgroupBarrier();
  }
  for (var s = param_u32(3); s < param_u32(4); s++) {
    if (s < k) {
      let j = s;
      var mx = 0.0;
      for (var i = j + 1u + lix; i < m; i += 64u) { mx = max(mx, abs(in0[a + i * n + j])); }
      let scale = wg_reduce(lix, mx, true);
      var ss = 0.0;
      if (scale > 0.0) {
        for (var i = j + 1u + lix; i < m; i += 64u) { let x = in0[a + i * n + j] / scale; ss += x * x; }
      }
      let xn = scale * sqrt(wg_reduce(lix, ss, false));
      let alpha = in0[a + j * n + j];
      var beta = alpha;
      var tau = 0.0;
      if (xn > 0.0) {
        let h = max(abs(alpha), xn);
        beta = -select(-h, h, alpha >= 0.0) * sqrt((alpha / h) * (alpha / h) + (xn / h) * (xn / h));
        tau = (beta - alpha) / beta;
        let f = 1.0 / (alpha - beta);
        for (var i = j + 1u + lix; i < m; i += 64u) { in0[a + i * n + j] *= f; }
      }
      storageBarrier();
      workgroupBarrier();
      if (lix == 0u) {
        in0[a + j * n + j] = beta;
        in0[t + j] = tau;
      }
      if (tau != 0.0) {
        for (var col = j + 1u + lix; col < n; col += 64u) {
          var d = in0[a + j * n + col];
          for (var i = j + 1u; i < m; i++) { d += in0[a + i * n + j] * in0[a + i * n + col]; }
          d *= tau;
          in0[a + j * n + col] -= d;
          for (var i = j + 1u; i < m; i++) { in0[a + i * n + col] -= d * in0[a + i * n + j]; }
        }
      }
    } else {
      let j = min(k, c) - 1u - (s - k);
      let tau = in0[t + j];
      if (tau != 0.0) {
        for (var col = lix; col < c; col += 64u) {
          var d = in0[q + j * c + col];
          for (var i = j + 1u; i < m; i++) { d += in0[a + i * n + j] * in0[q + i * c + col]; }
          d *= tau;
          in0[q + j * c + col] -= d;
          for (var i = j + 1u; i < m; i++) { in0[q + i * c + col] -= d * in0[a + i * n + j]; }
        }
      }
    }
    storageBarrier();
    workgroupBarrier();
  }
}
"""

# The round-robin (circle) schedule over an even count n2 of indices: round r pairs position k with
# n2 - 1 - k; position 0 stays, the others turn. An index >= n (n odd: the padding one) pairs with none.
# The rotation zeroing the (p, q) entry of a symmetric 2 x 2 [[app, apq], [apq, aqq]] (for the SVD: of
# the columns' Gram matrix): t = sign(theta) / (|theta| + sqrt(theta^2 + 1)), c = 1/sqrt(1 + t^2), s = c t.
# A sweep is n2 - 1 rounds; the header (3 words after the working copies: the next round, done, the
# rotations of this sweep so far) carries a matrix's progress from one dispatch to the next, and a sweep
# without a rotation ends it. Params: ..., tol, rounds in this dispatch, first (start), last (finish).
_JACOBI = _REDUCE + """
var<workgroup> rc: array<f32, 256>;
var<workgroup> rs: array<f32, 256>;
var<workgroup> rank: array<u32, 512>;
var<workgroup> turns: atomic<u32>;
var<workgroup> flag: u32;
var<workgroup> next: u32;

fn pair(k: u32, r: u32, n2: u32) -> vec2<u32> {
  let x = select(1u + (k - 1u + r) % (n2 - 1u), 0u, k == 0u);
  let y = 1u + (n2 - 2u - k + r) % (n2 - 1u);
  return vec2<u32>(min(x, y), max(x, y));
}

fn rotation(app: f32, aqq: f32, apq: f32) -> vec2<f32> {
  let theta = (aqq - app) / (2.0 * apq);
  var t = 0.5 / theta;
  if (abs(theta) < 1e18) { t = select(-1.0, 1.0, theta >= 0.0) / (abs(theta) + sqrt(theta * theta + 1.0)); }
  let c = 1.0 / sqrt(1.0 + t * t);
  return vec2<f32>(c, c * t);
}

// the header's progress into workgroup memory: the rounds this dispatch runs (0 when done)
fn resume(lix: u32, h: u32, first: bool, n: u32, rounds: u32) -> u32 {
  if (lix == 0u) {
    if (first) {
      in0[h] = 0.0;
      in0[h + 1u] = select(0.0, 1.0, n < 2u);
      in0[h + 2u] = 0.0;
    }
    next = u32(in0[h]);
    flag = u32(in0[h + 1u]);
    atomicStore(&turns, u32(in0[h + 2u]));
  }
  return select(rounds, 0u, workgroupUniformLoad(&flag) == 1u);
}

// after round r: at a sweep's end, done when it rotated nothing (1 to stop)
fn sweep_end(lix: u32, r: u32, n2: u32) -> u32 {
  if (lix == 0u && r == n2 - 2u) {
    flag = select(0u, 1u, atomicLoad(&turns) == 0u);
    atomicStore(&turns, 0u);
  }
  return workgroupUniformLoad(&flag);
}

fn suspend(lix: u32, h: u32, r: u32) {
  if (lix == 0u) {
    in0[h] = f32(r);
    in0[h + 1u] = f32(flag);
    in0[h + 2u] = f32(atomicLoad(&turns));
  }
}

// this dispatch's rounds over the matrix whose working copies start at `base` (header at h); the kernel
// defines factor (its entry: matrix b's start, rounds and finish), gram (a pair's (app, aqq, apq)) and apply
// (a round's rotations, from rc and rs)
fn sweeps(lix: u32, base: u32, h: u32, first: bool, n: u32, tol: f32) {
  let n2 = n + (n & 1u);
  let pairs = n2 / 2u;
  let rounds = resume(lix, h, first, n, param_u32(3));
  var r = workgroupUniformLoad(&next);
  for (var it = 0u; it < rounds; it++) {
    for (var k = lix; k < pairs; k += 64u) {
      let pq = pair(k, r, n2);
      var cs = vec2<f32>(1.0, 0.0);
      if (pq.y < n) {
        let g = gram(base, pq);
        if (abs(g.z) > tol * sqrt(abs(g.x)) * sqrt(abs(g.y)) && g.z != 0.0) {
          cs = rotation(g.x, g.y, g.z);
          atomicAdd(&turns, 1u);
        }
      }
      rc[k] = cs.x;
      rs[k] = cs.y;
    }
    workgroupBarrier();
    apply(lix, base, r, n2);
    storageBarrier();
    workgroupBarrier();
    let stop = sweep_end(lix, r, n2);
    r = (r + 1u) % (n2 - 1u);
    if (stop == 1u) { break; }
  }
  suspend(lix, h, r);
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lix: u32) {
  factor(wid.x, lix, param_u32(4) == 1u, param_f32(2));
}

// every thread's share of the n values' ranks: descending (or ascending) order, ties by index
fn ranks(lix: u32, base: u32, stride: u32, n: u32, desc: bool) {
  for (var i = lix; i < n; i += 64u) {
    let v = in0[base + i * stride];
    var r = 0u;
    for (var j = 0u; j < n; j++) {
      let w = in0[base + j * stride];
      if (select((w < v), (w > v), desc) || (w == v && j < i)) { r++; }
    }
    rank[i] = r;
  }
  workgroupBarrier();
}
"""

# eigh, state per matrix (n x n): A's working copy (symmetric, from one triangle), V's, the header, then the
# ascending eigenvalues (n) and their eigenvectors' columns (n*n). A pair rotates while |apq| > tol
# sqrt(|app aqq|) (relative accuracy, Demmel-Veselic), its (p, q) entries set to zero after it.
_EIGH = _JACOBI + """
fn gram(A: u32, pq: vec2<u32>) -> vec3<f32> {
  let n = param_u32(0);
  return vec3<f32>(in0[A + pq.x * n + pq.x], in0[A + pq.y * n + pq.y], in0[A + pq.x * n + pq.y]);
}

fn apply(lix: u32, A: u32, r: u32, n2: u32) {
  let n = param_u32(0);
  let pairs = n2 / 2u;
  let V = A + n * n;
  for (var e = lix; e < pairs * n; e += 64u) {   // rows p, q of A
    let k = e / n;
    let pq = pair(k, r, n2);
    if (rs[k] != 0.0) {
      let x = in0[A + pq.x * n + e % n];
      let y = in0[A + pq.y * n + e % n];
      in0[A + pq.x * n + e % n] = rc[k] * x - rs[k] * y;
      in0[A + pq.y * n + e % n] = rs[k] * x + rc[k] * y;
    }
  }
  storageBarrier();
  workgroupBarrier();
  for (var e = lix; e < pairs * n; e += 64u) {   // columns p, q of A and V
    let k = e / n;
    let i = e % n;
    let pq = pair(k, r, n2);
    if (rs[k] != 0.0) {
      let x = in0[A + i * n + pq.x];
      let y = in0[A + i * n + pq.y];
      in0[A + i * n + pq.x] = rc[k] * x - rs[k] * y;
      in0[A + i * n + pq.y] = rs[k] * x + rc[k] * y;
      let u = in0[V + i * n + pq.x];
      let w = in0[V + i * n + pq.y];
      in0[V + i * n + pq.x] = rc[k] * u - rs[k] * w;
      in0[V + i * n + pq.y] = rs[k] * u + rc[k] * w;
    }
  }
  storageBarrier();
  workgroupBarrier();
  for (var k = lix; k < pairs; k += 64u) {
    let pq = pair(k, r, n2);
    if (rs[k] != 0.0) {
      in0[A + pq.x * n + pq.y] = 0.0;
      in0[A + pq.y * n + pq.x] = 0.0;
    }
  }
}

fn factor(b: u32, lix: u32, first: bool, tol: f32) {
  let n = param_u32(0);
  let A = b * (3u * n * n + n + 3u);
  let V = A + n * n;
  let H = V + n * n;
  let W = H + 3u;
  let Z = W + n;
  if (first) {
    let src = b * n * n;
    for (var e = lix; e < n * n; e += 64u) {
      let lo = min(e / n, e % n);
      let hi = max(e / n, e % n);
      in0[A + e] = select(in1[src + hi * n + lo], in1[src + lo * n + hi], param_u32(1) == 1u);
      in0[V + e] = select(0.0, 1.0, e / n == e % n);
    }
    storageBarrier();
    workgroupBarrier();
  }
  sweeps(lix, A, H, first, n, tol);
  if (param_u32(5) == 1u) {
    ranks(lix, A, n + 1u, n, false);
    for (var e = lix; e < n * n; e += 64u) {
      let j = e % n;
      in0[Z + (e / n) * n + rank[j]] = in0[V + e];
      if (e < n) { in0[W + rank[j]] = in0[A + j * n + j]; }
    }
  }
}
"""

# SVD of an m x n matrix with m >= n, state per matrix: U's working copy (A / max|A|, column-major), V's
# (column-major), the header and max|A|, then U's columns normalized (m x n; a zero column where a norm is
# below 1e-15 max|A|: a null space's, completed by the caller), S (n, descending) and Vh (n x n). A pair of
# columns rotates while |<u_p, u_q>| > tol |u_p| |u_q|.
_SVD = _JACOBI + """
fn gram(U: u32, pq: vec2<u32>) -> vec3<f32> {
  let m = param_u32(0);
  var g = vec3<f32>(0.0);
  for (var i = 0u; i < m; i++) {
    let x = in0[U + pq.x * m + i];
    let y = in0[U + pq.y * m + i];
    g += vec3<f32>(x * x, y * y, x * y);
  }
  return g;
}

fn apply(lix: u32, U: u32, r: u32, n2: u32) {
  let m = param_u32(0);
  let n = param_u32(1);
  let pairs = n2 / 2u;
  let V = U + m * n;
  for (var e = lix; e < pairs * (m + n); e += 64u) {   // columns p, q of U and V
    let k = e / (m + n);
    let i = e % (m + n);
    let pq = pair(k, r, n2);
    if (rs[k] != 0.0) {
      let base = select(V + i - m, U + i, i < m);
      let len = select(n, m, i < m);
      let x = in0[base + pq.x * len];
      let y = in0[base + pq.y * len];
      in0[base + pq.x * len] = rc[k] * x - rs[k] * y;
      in0[base + pq.y * len] = rs[k] * x + rc[k] * y;
    }
  }
}

fn factor(b: u32, lix: u32, first: bool, tol: f32) {
  let m = param_u32(0);
  let n = param_u32(1);
  let U = b * (2u * m * n + 2u * n * n + n + 4u);
  let V = U + m * n;
  let H = V + n * n;
  let UO = H + 4u;
  let S = UO + m * n;
  let VO = S + n;
  if (first) {
    let src = b * m * n;
    var mx = 0.0;
    for (var e = lix; e < m * n; e += 64u) { mx = max(mx, abs(in1[src + e])); }
    let big = wg_reduce(lix, mx, true);
    let scale = select(1.0, big, big > 0.0 && big < 3.0e38);
    for (var e = lix; e < m * n; e += 64u) { in0[U + (e % n) * m + e / n] = in1[src + e] / scale; }
    for (var e = lix; e < n * n; e += 64u) { in0[V + e] = select(0.0, 1.0, e / n == e % n); }
    if (lix == 0u) { in0[H + 3u] = scale; }
    storageBarrier();
    workgroupBarrier();
  }
  sweeps(lix, U, H, first, n, tol);
  if (param_u32(5) == 1u) {
    for (var j = lix; j < n; j += 64u) {   // the column norms, in the results' S for now
      var h = 0.0;
      for (var i = 0u; i < m; i++) { h = max(h, abs(in0[U + j * m + i])); }
      var ss = 0.0;
      if (h > 0.0) {
        for (var i = 0u; i < m; i++) { let x = in0[U + j * m + i] / h; ss += x * x; }
      }
      in0[S + j] = h * sqrt(ss);
    }
    storageBarrier();
    workgroupBarrier();
    ranks(lix, S, 1u, n, true);
    for (var e = lix; e < (m + n) * n; e += 64u) {
      let j = e % n;
      let i = e / n;
      let sj = in0[S + j];
      if (i < m) {
        in0[UO + i * n + rank[j]] = select(0.0, in0[U + j * m + i] / sj, sj > 1e-15);
      } else {
        in0[VO + rank[j] * n + i - m] = in0[V + j * n + i - m];
      }
    }
    storageBarrier();
    workgroupBarrier();
    var sv: array<f32, 8>;
    for (var j = lix; j < n; j += 64u) { sv[j / 64u] = in0[S + j]; }
    storageBarrier();
    workgroupBarrier();
    for (var j = lix; j < n; j += 64u) { in0[S + rank[j]] = sv[j / 64u] * in0[H + 3u]; }
  }
}
"""


def _op(name, source):
    """A kernel advancing the state (in0) of a batch of matrices (in1, [B, m, n]); its own output is a word."""
    return custom_op(name, source, workgroup_size=64, output_shape=lambda s, a: (1,),
                     grid=lambda s, a: (a.shape[0], 1, 1))


_qr_op = _op("LinalgQrKernel", _QR)
_eigh_op = _op("LinalgEighKernel", _EIGH)
_svd_op = _op("LinalgSvdKernel", _SVD)


def _matrices(A, max_small=None):
    """A's matrices as [B, m, n] (float32), or None: not these kernels' input."""
    m, n = A.shape[-2:]
    B = A.numel() // (m * n) if m * n else 0
    if A.dtype is not _dtype.float32 or not 0 < B <= MAX_BATCH or (max_small and min(m, n) > max_small) or \
            (A._backend.is_cpu_adapter and max(m, n) > CPU_MAX_N):
        return None
    return A.reshape(B, m, n)


def _chunk(per_step, fixed):
    """Steps a dispatch can run: each costs up to `per_step` loop iterations of a thread, the start and the
    finish `fixed` (0: none fits)."""
    return max(0, BUDGET - fixed) // max(1, per_step)


def _run(op, X, size, steps, per_step, fixed, params):
    """The state [B, size] of X's matrices after `steps` steps of `op`, in as few dispatches as BUDGET allows,
    or None where a step does not fit in one."""
    chunk = _chunk(per_step, fixed)
    if chunk == 0:
        return None
    state = _prims.empty((X.shape[0], size), _dtype.float32, X.device)
    for s in range(0, max(steps, 1), chunk):
        op(state, X, params=params(s, min(steps, s + chunk), chunk))
    return state


def _qr_costs(m, n, c):
    """(per step, fixed) loop iterations of the QR kernel; each loop entered costs 2 more."""
    return 3 * _cdiv(m, 64) + 30 + _cdiv(max(n, c), 64) * (2 * m + 6), _cdiv(m * n, 64) + _cdiv(m * c, 64) + 4


def _householder(X, mode):
    """(geqrf's packed result [B, m, n], tau [B, k], Q [B, m, c]) of X [B, m, n], or None."""
    B, m, n = X.shape
    k = min(m, n)
    c = {"r": 0, "reduced": k, "complete": m}[mode]
    r = _run(_qr_op, X, m * n + k + m * c, k + min(k, c), *_qr_costs(m, n, c), lambda s0, s1, _: (m, n, c, s0, s1))
    if r is None:
        return None
    return r[:, :m * n].reshape(B, m, n), r[:, m * n:m * n + k], r[:, m * n + k:].reshape(B, m, c)


def qr(A, mode):
    """(Q, R) of float32 matrices on the GPU (mode 'r': an empty Q), or None."""
    X = _matrices(A)
    got = None if X is None else _householder(X, mode)
    if got is None:
        return None
    H, _, Q = got
    batch, (m, n) = tuple(A.shape[:-2]), A.shape[-2:]
    rows = m if mode == "complete" else min(m, n)
    R = H[:, :rows].triu().reshape(batch + (rows, n))
    return (A.new_zeros((0,)), R) if mode == "r" else (Q.reshape(batch + (m, rows)), R)


def geqrf(A):
    """(a, tau) as LAPACK's geqrf on the GPU, or None."""
    X = _matrices(A)
    got = None if X is None else _householder(X, "r")
    if got is None:
        return None
    return got[0].reshape(tuple(A.shape)), got[1].reshape(tuple(A.shape[:-2]) + (min(A.shape[-2:]),))


def _jacobi(op, X, size, per_round, fixed, params):
    """The state of `op`'s Jacobi sweeps over X's matrices (n2 - 1 rounds a sweep), or None."""
    n = X.shape[-1]
    rounds = SWEEPS * max(1, n + (n & 1) - 1)
    last = _cdiv(rounds, max(1, _chunk(per_round, fixed))) - 1
    return _run(op, X, size, rounds, per_round, fixed,
                lambda s0, s1, chunk: (*params, s1 - s0, int(s0 == 0), int(s0 // chunk == last)))


def eigh(A, upper):
    """(ascending eigenvalues, eigenvectors) of symmetric float32 matrices on the GPU, or None."""
    X = _matrices(A, MAX_N)
    if X is None:
        return None
    n = X.shape[-1]
    pairs = (n + 1) // 2
    per_round = 2 * _cdiv(pairs * n, 64) + 2 * _cdiv(pairs, 64) + 12
    fixed = 2 * _cdiv(n * n, 64) + _cdiv(n, 64) * (n + 4) + 12
    r = _jacobi(_eigh_op, X, 3 * n * n + n + 3, per_round, fixed, (n, int(upper), EPS))
    if r is None:
        return None
    batch, o = tuple(A.shape[:-2]), 2 * n * n + 3
    return r[:, o:o + n].reshape(batch + (n,)), r[:, o + n:].reshape(batch + (n, n))


def _orthonormal(U, full):
    """U's orthonormal columns [B, m, k], its zero ones (a null space) replaced and, for `full`, extended to
    m by the Q of U's Householder QR: with U's nonzero columns first, Q's first columns are theirs (up to sign),
    the others orthogonal to them."""
    m, k = U.shape[-2:]
    full = full and m > k
    Q = _householder(U, "complete" if full else "reduced")[2]
    U = U.where((U * U).sum(-2, keepdim=True) > 0.5, Q[..., :k])
    return cat([U, Q[..., k:]], -1) if full else U


def svd(A, full):
    """(U, S descending, Vh) of float32 matrices on the GPU, or None."""
    X = _matrices(A, MAX_N)
    if X is None:
        return None
    wide = X.shape[-2] < X.shape[-1]
    X = X.mT.contiguous() if wide else X
    B, m, n = X.shape
    pairs = (n + 1) // 2
    per_round = _cdiv(pairs, 64) * (m + 4) + _cdiv(pairs * (m + n), 64) + 8
    fixed = 2 * _cdiv(m * n, 64) + _cdiv(n * n, 64) + _cdiv(n, 64) * (2 * m + n + 14) + _cdiv((m + n) * n, 64) + 40
    if _chunk(*_qr_costs(m, n, m if full else n)) == 0:   # _orthonormal's QR
        return None
    r = _jacobi(_svd_op, X, 2 * m * n + 2 * n * n + n + 4, per_round, fixed, (m, n, EPS * max(1.0, m ** 0.5)))
    if r is None:
        return None
    o = m * n + n * n + 4
    U = _orthonormal(r[:, o:o + m * n].reshape(B, m, n), full)
    S = r[:, o + m * n:o + m * n + n]
    Vh = r[:, o + m * n + n:].reshape(B, n, n)
    U, Vh = (Vh.mT, U.mT) if wide else (U, Vh)
    batch = tuple(A.shape[:-2])
    return U.reshape(batch + tuple(U.shape[1:])), S.reshape(batch + (n,)), Vh.reshape(batch + tuple(Vh.shape[1:]))


_linalg_factor.DEVICE_KERNELS.update({("webgpu", "qr"): qr, ("webgpu", "geqrf"): geqrf, ("webgpu", "eigh"): eigh,
                                      ("webgpu", "svd"): svd})
