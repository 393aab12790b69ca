"""Dense factorizations on the host, batched: numpy's LAPACK where numpy is importable (`NP`), pure
Python where it is not (`PY`: the page; small matrices, computed in float64). Each entry takes and
returns batches: numpy arrays (B, m, n) for `NP`, lists of matrices (lists of rows) for `PY`.

  lu(A)                      LAPACK getrf: packed LU, pivots (1-based), info (first zero pivot)
  cholesky(A)                lower L from A's lower triangle, info (order of the first failing minor)
  trisolve(A, B, upper, unit) (X,) with A X = B, A triangular (IEEE: a zero pivot gives inf/nan)
  geqrf(A)                   LAPACK geqrf: Householder vectors below R, tau
  qr(A, mode)                Q, R ('reduced', 'complete'; 'r' gives an empty Q)
  eigh(A, upper)             ascending eigenvalues, eigenvectors (from one triangle)
  svd(A, full)               U, S (descending), Vh
  ldl(A)                     LAPACK sytf2 (lower, Bunch-Kaufman): LD, pivots (negative: a 2x2 block), info
  ldl_solve(LD, piv, B)      LAPACK sytrs: (X,); piv as a 1 x n matrix

Complex matrices (complex128 arrays, Python complex) take the same entries: LAPACK's z routines through
numpy, and in pure Python LU, Cholesky, triangular solve and QR (PY_COMPLEX); `REAL_OUTPUTS` names the
results that are real for a complex input (eigenvalues, singular values).
"""
import math

from ._numpy import np

# ---- pure Python: one matrix at a time, lists of rows -----------------------------------------

def _div(a, b):
    if b == 0:
        if isinstance(a, complex) or isinstance(b, complex):  # numpy's complex quotient by zero
            return complex(_div(complex(a).real, 0.0), _div(complex(a).imag, 0.0))
        return math.nan if a == 0 or a != a else math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def _cabs1(x):
    """LAPACK's pivot size (izamax): |re| + |im|, |x| for a real x."""
    return abs(x.real) + abs(x.imag)


def _lu1(a):
    m, n = len(a), len(a[0]) if a else 0
    piv, info = [], 0
    for k in range(min(m, n)):
        p = max(range(k, m), key=lambda i: _cabs1(a[i][k]))
        piv.append(p + 1)
        a[k], a[p] = a[p], a[k]
        d, rk = a[k][k], a[k]
        if d == 0:
            info = info or k + 1
            continue
        for ri in a[k + 1:]:
            f = ri[k] = ri[k] / d
            for j in range(k + 1, n):
                ri[j] -= f * rk[j]
    return a, piv, info


def _cholesky1(a):
    """L L^H = A (real or complex; the diagonal's real parts, as LAPACK's potrf)."""
    n = len(a)
    L = [[0.0] * n for _ in range(n)]
    for j in range(n):
        s = a[j][j].real - sum(abs(v) ** 2 for v in L[j][:j])
        if not s > 0:
            return L, j + 1
        d = L[j][j] = math.sqrt(s)
        for i in range(j + 1, n):
            L[i][j] = (a[i][j] - sum(x * y.conjugate() for x, y in zip(L[i][:j], L[j][:j]))) / d
    return L, 0


def _trisolve1(a, b, upper, unit):
    n = len(a)
    x = [row[:] for row in b]
    for i in (range(n - 1, -1, -1) if upper else range(n)):
        js = range(i + 1, n) if upper else range(i)
        for c in range(len(x[i])):
            s = x[i][c] - sum(a[i][j] * x[j][c] for j in js)
            x[i][c] = s if unit else _div(s, a[i][i])
    return (x,)


def _geqrf1(a):
    """LAPACK's geqr2 (larfg's reflectors H = I - tau v v^H, beta real; H^H applied), real or complex."""
    m, n = len(a), len(a[0]) if a else 0
    taus = []
    for j in range(min(m, n)):
        alpha = a[j][j]
        xn = math.sqrt(sum(abs(a[i][j]) ** 2 for i in range(j + 1, m)))
        if xn == 0 and alpha.imag == 0:
            taus.append(0.0)
            continue
        beta = -math.copysign(math.hypot(abs(alpha), xn), alpha.real)
        tau = (beta - alpha) / beta
        for i in range(j + 1, m):
            a[i][j] /= alpha - beta
        a[j][j] = 1.0
        v = [a[i][j] for i in range(j, m)]
        for c in range(j + 1, n):
            s = tau.conjugate() * sum(vi.conjugate() * a[j + i][c] for i, vi in enumerate(v))
            for i, vi in enumerate(v):
                a[j + i][c] -= s * vi
        a[j][j] = beta
        taus.append(tau)
    return a, taus


def _orgqr1(h, taus, ncols):
    """Q's first `ncols` columns from geqrf's vectors: H_1 ... H_k applied to the identity's."""
    m = len(h)
    q = [[float(i == j) for j in range(ncols)] for i in range(m)]
    for j in range(len(taus) - 1, -1, -1):
        v = [1.0] + [h[i][j] for i in range(j + 1, m)]
        for c in range(ncols):
            s = taus[j] * sum(vi.conjugate() * q[j + i][c] for i, vi in enumerate(v))
            for i, vi in enumerate(v):
                q[j + i][c] -= s * vi
    return q


def _qr1(a, mode):
    m, n = len(a), len(a[0]) if a else 0
    h, taus = _geqrf1(a)
    rows = m if mode == "complete" else min(m, n)
    r = [[h[i][j] if j >= i else 0.0 for j in range(n)] for i in range(rows)]
    return ([] if mode == "r" else _orgqr1(h, taus, rows)), r


def _rotate(rows, p, q, c, s):
    """Columns p, q of `rows` <- (c p - s q, s p + c q)."""
    for r in rows:
        x, y = r[p], r[q]
        r[p], r[q] = c * x - s * y, s * x + c * y


def _eigh1(a, upper):
    n = len(a)
    A = [[a[min(i, j)][max(i, j)] if upper else a[max(i, j)][min(i, j)] for j in range(n)] for i in range(n)]
    V = [[float(i == j) for j in range(n)] for i in range(n)]
    scale = sum(v * v for r in A for v in r)
    for _ in range(60):
        if sum(A[i][j] ** 2 for i in range(n) for j in range(i)) <= 1e-30 * scale:
            break
        for p in range(n - 1):
            for q in range(p + 1, n):
                if A[p][q] == 0:
                    continue
                theta = (A[q][q] - A[p][p]) / (2 * A[p][q])
                t = math.copysign(1.0, theta) / (abs(theta) + math.sqrt(theta * theta + 1))
                c = 1 / math.sqrt(t * t + 1)
                s = t * c
                _rotate(A, p, q, c, s)
                x, y = A[p], A[q]
                A[p], A[q] = [c * i - s * j for i, j in zip(x, y)], [s * i + c * j for i, j in zip(x, y)]
                _rotate(V, p, q, c, s)
    order = sorted(range(n), key=lambda i: A[i][i])
    return [A[i][i] for i in order], [[r[i] for i in order] for r in V]


def _complete(cols, m, k):
    """Orthonormal columns of length m extended to k of them by Gram-Schmidt against the unit vectors."""
    for e in range(m):
        if len(cols) == k:
            break
        v = [float(i == e) for i in range(m)]
        for _ in range(2):
            for c in cols:
                d = sum(x * y for x, y in zip(c, v))
                v = [x - d * y for x, y in zip(v, c)]
        nv = math.sqrt(sum(x * x for x in v))
        if nv > 1e-8:
            cols.append([x / nv for x in v])
    return cols


def _svd1(a, full):
    m, n = len(a), len(a[0]) if a else 0
    if m < n:
        u, s, vh = _svd1([list(r) for r in zip(*a)], full)
        return [list(r) for r in zip(*vh)], s, [list(r) for r in zip(*u)]
    U = [list(c) for c in zip(*a)] if a else []  # columns
    V = [[float(i == j) for i in range(n)] for j in range(n)]  # columns
    for _ in range(60):
        rotated = False
        for p in range(n - 1):
            for q in range(p + 1, n):
                al, be = sum(x * x for x in U[p]), sum(x * x for x in U[q])
                ga = sum(x * y for x, y in zip(U[p], U[q]))
                if abs(ga) <= 1e-15 * math.sqrt(al * be) or ga == 0:
                    continue
                rotated = True
                zeta = (be - al) / (2 * ga)
                t = math.copysign(1.0, zeta) / (abs(zeta) + math.sqrt(1 + zeta * zeta))
                c = 1 / math.sqrt(1 + t * t)
                s = c * t
                for M in (U, V):
                    x, y = M[p], M[q]
                    M[p], M[q] = [c * i - s * j for i, j in zip(x, y)], [s * i + c * j for i, j in zip(x, y)]
        if not rotated:
            break
    sv = [math.sqrt(sum(x * x for x in c)) for c in U]
    order = sorted(range(n), key=lambda j: -sv[j])
    ucols, tiny = [], 1e-13 * max(sv, default=0.0)   # below it a column is rounding noise, not orthogonal
    for j in order:
        if sv[j] > max(tiny, 1e-300) and len(ucols) == order.index(j):
            ucols.append([x / sv[j] for x in U[j]])
    ucols = _complete(ucols, m, m if full else n)
    return [list(r) for r in zip(*ucols)], [sv[j] for j in order], [V[j] for j in order]


_BK_ALPHA = (1 + math.sqrt(17)) / 8


def _bk_pivot(a, k, n):
    """Bunch-Kaufman's choice at column k: (kp, kstep), or None when the column is zero (sytf2)."""
    absakk = _cabs1(a[k][k])
    imax = max(range(k + 1, n), key=lambda i: _cabs1(a[i][k])) if k < n - 1 else k
    colmax = _cabs1(a[imax][k]) if k < n - 1 else 0.0
    if max(absakk, colmax) == 0 or absakk != absakk:
        return None
    if absakk >= _BK_ALPHA * colmax:
        return k, 1
    rowmax = max(_cabs1(a[imax][j]) for j in range(k, imax))
    if imax < n - 1:
        rowmax = max(rowmax, max(_cabs1(a[i][imax]) for i in range(imax + 1, n)))
    if absakk >= _BK_ALPHA * colmax * (colmax / rowmax):
        return k, 1
    return imax, 1 if _cabs1(a[imax][imax]) >= _BK_ALPHA * rowmax else 2


def _ldl1(a):
    a = [r[:] for r in a]
    n, k, info, piv = len(a), 0, 0, []
    while k < n:
        choice = _bk_pivot(a, k, n)
        if choice is None:
            info = info or k + 1
            piv.append(k + 1)
            k += 1
            continue
        kp, kstep = choice
        kk = k + kstep - 1
        if kp != kk:  # interchange rows and columns kk and kp of the trailing matrix
            for i in range(kp + 1, n):
                a[i][kk], a[i][kp] = a[i][kp], a[i][kk]
            for j in range(kk + 1, kp):
                a[j][kk], a[kp][j] = a[kp][j], a[j][kk]
            a[kk][kk], a[kp][kp] = a[kp][kp], a[kk][kk]
            if kstep == 2:
                a[k + 1][k], a[kp][k] = a[kp][k], a[k + 1][k]
        if kstep == 1:
            d11 = 1 / a[k][k]
            for j in range(k + 1, n):
                for i in range(j, n):
                    a[i][j] -= d11 * a[i][k] * a[j][k]
            for i in range(k + 1, n):
                a[i][k] *= d11
            piv.append(kp + 1)
        else:
            if k < n - 2:
                d21 = a[k + 1][k]
                d11, d22 = a[k + 1][k + 1] / d21, a[k][k] / d21
                d21 = 1 / (d11 * d22 - 1) / d21
                for j in range(k + 2, n):
                    wk = d21 * (d11 * a[j][k] - a[j][k + 1])
                    wkp1 = d21 * (d22 * a[j][k + 1] - a[j][k])
                    for i in range(j, n):
                        a[i][j] -= a[i][k] * wk + a[i][k + 1] * wkp1
                    a[j][k], a[j][k + 1] = wk, wkp1
            piv += [-(kp + 1)] * 2
        k += kstep
    return [[v if j <= i else 0.0 for j, v in enumerate(r)] for i, r in enumerate(a)], piv, info


def _ldl_solve1(a, piv, b):
    piv = [int(p) for p in piv[0]]
    n, x = len(a), [r[:] for r in b]
    k = 0
    while k < n:  # L D Y = B
        if piv[k] > 0:
            kp = piv[k] - 1
            x[k], x[kp] = x[kp], x[k]
            for i in range(k + 1, n):
                x[i] = [xi - a[i][k] * xk for xi, xk in zip(x[i], x[k])]
            x[k] = [v / a[k][k] for v in x[k]]
            k += 1
            continue
        kp = -piv[k] - 1
        x[k + 1], x[kp] = x[kp], x[k + 1]
        for i in range(k + 2, n):
            x[i] = [xi - a[i][k] * xk - a[i][k + 1] * xk1 for xi, xk, xk1 in zip(x[i], x[k], x[k + 1])]
        akm1k = a[k + 1][k]
        akm1, ak = a[k][k] / akm1k, a[k + 1][k + 1] / akm1k
        denom = akm1 * ak - 1
        bkm1, bk = [v / akm1k for v in x[k]], [v / akm1k for v in x[k + 1]]
        x[k] = [(ak * u - v) / denom for u, v in zip(bkm1, bk)]
        x[k + 1] = [(akm1 * v - u) / denom for u, v in zip(bkm1, bk)]
        k += 2
    k = n - 1
    while k >= 0:  # L^T X = Y
        step = 1 if piv[k] > 0 else 2
        for c in range(k, k - step, -1):
            x[c] = [xc - sum(a[i][c] * x[i][j] for i in range(k + 1, n)) for j, xc in enumerate(x[c])]
        kp = abs(piv[k]) - 1
        x[k], x[kp] = x[kp], x[k]
        k -= step
    return (x,)


def _each(fn, k=1):
    """fn of one matrix (its first k arguments) mapped over a batch: a list of results."""
    return lambda *args: [fn(*xs, *args[k:]) for xs in zip(*args[:k])]


# results that are real for a complex input: kernel -> their positions
REAL_OUTPUTS = {"eigh": (0,), "svd": (1,)}

PY = {
    "lu": _each(lambda a: _lu1([r[:] for r in a])),
    "cholesky": _each(_cholesky1),
    "trisolve": _each(_trisolve1, 2),
    "geqrf": _each(lambda a: _geqrf1([r[:] for r in a])),
    "qr": _each(lambda a, mode: _qr1([r[:] for r in a], mode)),
    "eigh": _each(_eigh1),
    "svd": _each(_svd1),
    "ldl": _each(_ldl1),
    "ldl_solve": _each(_ldl_solve1, 3),
}
# the pure kernels written for complex too
PY_COMPLEX = ("lu", "cholesky", "trisolve", "geqrf", "qr", "ldl", "ldl_solve")


# ---- numpy: vectorized over the batch ---------------------------------------------------------

def _np_lu(a):
    a = a.copy()
    B, m, n = a.shape
    k = min(m, n)
    piv = np.zeros((B, k), dtype=np.int32)
    info = np.zeros(B, dtype=np.int32)
    rows = np.arange(B)
    for j in range(k):
        col = a[:, j:, j]
        p = np.argmax(np.abs(col.real) + np.abs(col.imag) if a.dtype.kind == "c" else np.abs(col), axis=1) + j
        piv[:, j] = p + 1
        top = a[rows, j].copy()
        a[rows, j] = a[rows, p]
        a[rows, p] = top
        d = a[:, j, j]
        zero = d == 0
        info[(info == 0) & zero] = j + 1
        a[:, j + 1:, j] /= np.where(zero, 1, d)[:, None]
        a[:, j + 1:, j + 1:] -= a[:, j + 1:, j:j + 1] * a[:, j:j + 1, j + 1:]
    return a, piv, info


def _np_cholesky(a):
    try:
        return np.linalg.cholesky(a), np.zeros(a.shape[0], dtype=np.int32)
    except np.linalg.LinAlgError:  # one failed: the first failing minor of each, as LAPACK's info
        done = [_cholesky1(m.tolist()) for m in a]
        return np.array([L for L, _ in done], dtype=a.dtype).reshape(a.shape), \
            np.array([i for _, i in done], dtype=np.int32)


def _np_trisolve(a, b, upper, unit):
    x = b.copy()
    n = a.shape[-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in (range(n - 1, -1, -1) if upper else range(n)):
            js = slice(i + 1, n) if upper else slice(0, i)
            s = x[:, i, :] - np.einsum("bj,bjk->bk", a[:, i, js], x[:, js, :])
            x[:, i, :] = s if unit else s / a[:, i, i][:, None]
    return (x,)


def _np_geqrf(a):
    if 0 in a.shape:
        return a.copy(), np.zeros((a.shape[0], min(a.shape[1:])), dtype=a.dtype)
    h, tau = np.linalg.qr(a, mode="raw")  # LAPACK's geqrf (h transposed: Fortran's order)
    return np.ascontiguousarray(np.swapaxes(h, -1, -2)), tau


def _np_qr(a, mode):
    B, m, n = a.shape
    if 0 in (B, m, n):
        rows = m if mode == "complete" else min(m, n)
        q = np.broadcast_to(np.eye(m, rows, dtype=a.dtype), (B, m, rows)).copy()
        return (q[:, :0] if mode == "r" else q), np.zeros((B, rows, n), dtype=a.dtype)
    if mode == "r":
        return np.zeros((B, 0, 0), dtype=a.dtype), np.linalg.qr(a, mode="r")
    return np.linalg.qr(a, mode=mode)


def _np_eigh(a, upper):
    if a.shape[-1] == 0:
        return np.zeros(a.shape[:-1], dtype=a.real.dtype), a.copy()
    return np.linalg.eigh(a, UPLO="U" if upper else "L")


def _np_svd(a, full):
    B, m, n = a.shape
    if 0 in (m, n):
        k = min(m, n)
        return (np.broadcast_to(np.eye(m, m if full else k, dtype=a.dtype), (B, m, m if full else k)).copy(),
                np.zeros((B, k), dtype=a.real.dtype),
                np.broadcast_to(np.eye(n if full else k, n, dtype=a.dtype), (B, n if full else k, n)).copy())
    return np.linalg.svd(a, full_matrices=full)


def _np_each(name):
    """A pure kernel on numpy's batches (float64 lists in, arrays of the results out)."""
    def run(*arrs):
        per = PY[name](*[[m.tolist() for m in a] for a in arrs])
        return tuple(np.array([r[k] for r in per]).reshape((len(per),) + np.shape(per[0][k]) if per else (0,))
                     for k in range(len(per[0])))
    return run


NP = {"ldl": _np_each("ldl"), "ldl_solve": _np_each("ldl_solve"), "lu": _np_lu, "cholesky": _np_cholesky,
      "trisolve": _np_trisolve, "geqrf": _np_geqrf, "qr": _np_qr, "eigh": _np_eigh, "svd": _np_svd}
