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
  ldl(A, herm)               LAPACK sytf2 (lower, Bunch-Kaufman; herm: hetf2): LD, pivots (negative: a 2x2
                             block), info
  ldl_solve(LD, piv, B, herm) LAPACK sytrs (hetrs): (X,); piv as a 1 x n matrix

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


def _rotate(rows, p, q, c, s, e):
    """Columns p, q of `rows` <- (c p - s conj(e) q, s e p + c q): a plane rotation after the phase e (|e| = 1;
    +-1 for a real matrix)."""
    se, sec = s * e, s * e.conjugate()
    for r in rows:
        x, y = r[p], r[q]
        r[p], r[q] = c * x - sec * y, se * x + c * y


def _jacobi(num, den):
    """(c, s) of the Jacobi rotation with cot(2 theta) = num / den."""
    zeta = num / den
    t = math.copysign(1.0, zeta) / (abs(zeta) + math.sqrt(zeta * zeta + 1))
    c = 1 / math.sqrt(t * t + 1)
    return c, t * c


def _eigh1(a, upper):
    """Cyclic Jacobi on the Hermitian matrix of a's triangle (real symmetric, or complex: each rotation after the
    phase that makes its pivot real)."""
    n = len(a)
    A = [[(a[i][j] if (j >= i) == upper else a[j][i].conjugate()) if i != j else a[i][i].real for j in range(n)]
         for i in range(n)]
    V = [[float(i == j) for j in range(n)] for i in range(n)]
    scale = sum(abs(v) ** 2 for r in A for v in r)
    for _ in range(60):
        if sum(abs(A[i][j]) ** 2 for i in range(n) for j in range(i)) <= 1e-30 * scale:
            break
        for p in range(n - 1):
            for q in range(p + 1, n):
                if A[p][q] == 0:
                    continue
                g = abs(A[p][q])
                e = A[p][q] / g
                c, s = _jacobi(A[q][q].real - A[p][p].real, 2 * g)
                _rotate(A, p, q, c, s, e)
                x, y = A[p], A[q]
                se, sec = s * e, s * e.conjugate()
                A[p], A[q] = [c * i - se * j for i, j in zip(x, y)], [sec * i + c * j for i, j in zip(x, y)]
                _rotate(V, p, q, c, s, e)
    order = sorted(range(n), key=lambda i: A[i][i].real)
    return [A[i][i].real for i in order], [[r[i] for i in order] for r in V]


def _complete(cols, m, k):
    """Orthonormal columns of length m extended to k of them by Gram-Schmidt against the unit vectors."""
    for e in range(m):
        if len(cols) == k:
            break
        v = [float(i == e) for i in range(m)]
        for _ in range(2):
            for c in cols:
                d = sum(x.conjugate() * y for x, y in zip(c, v))
                v = [x - d * y for x, y in zip(v, c)]
        nv = math.sqrt(sum(abs(x) ** 2 for x in v))
        if nv > 1e-8:
            cols.append([x / nv for x in v])
    return cols


def _adjoint(a):
    return [[v.conjugate() for v in r] for r in zip(*a)]


def _svd1(a, full):
    """One-sided Jacobi (Hestenes) on a's columns, real or complex (each rotation after its pair's phase)."""
    m, n = len(a), len(a[0]) if a else 0
    if m < n:
        u, s, vh = _svd1(_adjoint(a), full)
        return _adjoint(vh), s, _adjoint(u)
    U = [list(c) for c in zip(*a)] if a else []  # columns
    V = [[float(i == j) for i in range(n)] for j in range(n)]  # columns
    for _ in range(60):
        rotated = False
        for p in range(n - 1):
            for q in range(p + 1, n):
                al, be = sum(abs(x) ** 2 for x in U[p]), sum(abs(x) ** 2 for x in U[q])
                ga = sum(x.conjugate() * y for x, y in zip(U[p], U[q]))
                if abs(ga) <= 1e-15 * math.sqrt(al * be) or ga == 0:
                    continue
                rotated = True
                c, s = _jacobi(be - al, 2 * abs(ga))
                se, sec = s * (ga / abs(ga)), s * (ga / abs(ga)).conjugate()
                for M in (U, V):
                    x, y = M[p], M[q]
                    M[p], M[q] = [c * i - sec * j for i, j in zip(x, y)], [se * i + c * j for i, j in zip(x, y)]
        if not rotated:
            break
    sv = [math.sqrt(sum(abs(x) ** 2 for x in c)) for c in U]
    order = sorted(range(n), key=lambda j: -sv[j])
    ucols, tiny = [], 1e-13 * max(sv, default=0.0)   # below it a column is rounding noise, not orthogonal
    for j in order:
        if sv[j] > max(tiny, 1e-300) and len(ucols) == order.index(j):
            ucols.append([x / sv[j] for x in U[j]])
    ucols = _complete(ucols, m, m if full else n)
    return [list(r) for r in zip(*ucols)], [sv[j] for j in order], [[v.conjugate() for v in V[j]] for j in order]


_BK_ALPHA = (1 + math.sqrt(17)) / 8


def _bk_pivot(a, k, n, herm):
    """Bunch-Kaufman's choice at column k: (kp, kstep), or None when the column is zero (sytf2; hetf2 sizes a
    diagonal entry by its real part)."""
    dsize = (lambda v: abs(v.real)) if herm else _cabs1
    absakk = dsize(a[k][k])
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
    return imax, 1 if dsize(a[imax][imax]) >= _BK_ALPHA * rowmax else 2


def _conj(herm):
    return (lambda v: v.conjugate()) if herm else (lambda v: v)


def _bk_swap(a, k, kk, kp, kstep, herm):
    """Interchange rows and columns kk and kp of the trailing matrix (hetf2: the entries between them
    conjugated, the diagonal real)."""
    cj = _conj(herm)
    for i in range(kp + 1, len(a)):
        a[i][kk], a[i][kp] = a[i][kp], a[i][kk]
    for j in range(kk + 1, kp):
        a[j][kk], a[kp][j] = cj(a[kp][j]), cj(a[j][kk])
    a[kp][kk] = cj(a[kp][kk])
    a[kk][kk], a[kp][kp] = (a[kp][kp].real, a[kk][kk].real) if herm else (a[kp][kp], a[kk][kk])
    if kstep == 2:
        a[k + 1][k], a[kp][k] = a[kp][k], a[k + 1][k]


def _bk_step1(a, k, herm):
    cj, n = _conj(herm), len(a)
    d11 = 1 / (a[k][k].real if herm else a[k][k])
    for j in range(k + 1, n):
        for i in range(j, n):
            a[i][j] -= d11 * a[i][k] * cj(a[j][k])
        if herm:
            a[j][j] = a[j][j].real
    for i in range(k + 1, n):
        a[i][k] *= d11


def _bk_step2(a, k, herm):
    n = len(a)
    if herm:  # hetf2's 2 x 2 block
        d = abs(a[k + 1][k])
        d11, d22 = a[k + 1][k + 1].real / d, a[k][k].real / d
        d21 = a[k + 1][k] / d
        d = 1 / (d11 * d22 - 1) / d
        for j in range(k + 2, n):
            wk = d * (d11 * a[j][k] - d21 * a[j][k + 1])
            wkp1 = d * (d22 * a[j][k + 1] - d21.conjugate() * a[j][k])
            for i in range(j, n):
                a[i][j] -= a[i][k] * wk.conjugate() + a[i][k + 1] * wkp1.conjugate()
            a[j][k], a[j][k + 1], a[j][j] = wk, wkp1, a[j][j].real
        return
    d21 = a[k + 1][k]
    d11, d22 = a[k + 1][k + 1] / d21, a[k][k] / d21
    d21 = 1 / (d11 * d22 - 1) / d21
    for j in range(k + 2, n):
        wk = d21 * (d11 * a[j][k] - a[j][k + 1])
        wkp1 = d21 * (d22 * a[j][k + 1] - a[j][k])
        for i in range(j, n):
            a[i][j] -= a[i][k] * wk + a[i][k + 1] * wkp1
        a[j][k], a[j][k + 1] = wk, wkp1


def _ldl1(a, herm=False):
    """LAPACK's sytf2 (herm: hetf2, A = L D L^H), lower: LD, pivots, info."""
    a = [r[:] for r in a]
    n, k, info, piv = len(a), 0, 0, []
    while k < n:
        choice = _bk_pivot(a, k, n, herm)
        if herm:
            a[k][k] = a[k][k].real
        if choice is None:
            info = info or k + 1
            piv.append(k + 1)
            k += 1
            continue
        kp, kstep = choice
        if herm and kstep == 2:
            a[k + 1][k + 1] = a[k + 1][k + 1].real
        if kp != k + kstep - 1:
            _bk_swap(a, k, k + kstep - 1, kp, kstep, herm)
        if kstep == 1:
            _bk_step1(a, k, herm)
            piv.append(kp + 1)
        else:
            if k < n - 2:
                _bk_step2(a, k, herm)
            piv += [-(kp + 1)] * 2
        k += kstep
    return [[v if j <= i else 0.0 for j, v in enumerate(r)] for i, r in enumerate(a)], piv, info


def _ldl_solve1(a, piv, b, herm=False):
    """LAPACK's sytrs (herm: hetrs) with sytf2's LD and pivots."""
    cj = _conj(herm)
    piv = [int(p) for p in piv[0]]
    n, x = len(a), [r[:] for r in b]
    k = 0
    while k < n:  # L D Y = B
        if piv[k] > 0:
            kp = piv[k] - 1
            x[k], x[kp] = x[kp], x[k]
            for i in range(k + 1, n):
                x[i] = [xi - a[i][k] * xk for xi, xk in zip(x[i], x[k])]
            d = a[k][k].real if herm else a[k][k]
            x[k] = [v / d for v in x[k]]
            k += 1
            continue
        kp = -piv[k] - 1
        x[k + 1], x[kp] = x[kp], x[k + 1]
        for i in range(k + 2, n):
            x[i] = [xi - a[i][k] * xk - a[i][k + 1] * xk1 for xi, xk, xk1 in zip(x[i], x[k], x[k + 1])]
        akm1k = a[k + 1][k]
        akm1, ak = a[k][k] / cj(akm1k), a[k + 1][k + 1] / akm1k
        denom = akm1 * ak - 1
        bkm1, bk = [v / cj(akm1k) for v in x[k]], [v / akm1k for v in x[k + 1]]
        x[k] = [(ak * u - v) / denom for u, v in zip(bkm1, bk)]
        x[k + 1] = [(akm1 * v - u) / denom for u, v in zip(bkm1, bk)]
        k += 2
    k = n - 1
    while k >= 0:  # L^T X = Y (L^H)
        step = 1 if piv[k] > 0 else 2
        for c in range(k, k - step, -1):
            x[c] = [xc - sum(cj(a[i][c]) * x[i][j] for i in range(k + 1, n)) for j, xc in enumerate(x[c])]
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
PY_COMPLEX = ("lu", "cholesky", "trisolve", "geqrf", "qr", "ldl", "ldl_solve", "eigh", "svd")


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


def _np_each(name, k):
    """A pure kernel on numpy's batches (its k matrices as float64 or complex128 lists in, its params after them;
    arrays of the results out)."""
    def run(*args):
        per = PY[name](*[[m.tolist() for m in a] for a in args[:k]], *args[k:])
        return tuple(np.array([r[k] for r in per]).reshape((len(per),) + np.shape(per[0][k]) if per else (0,))
                     for k in range(len(per[0])))
    return run


NP = {"ldl": _np_each("ldl", 1), "ldl_solve": _np_each("ldl_solve", 3), "lu": _np_lu, "cholesky": _np_cholesky,
      "trisolve": _np_trisolve, "geqrf": _np_geqrf, "qr": _np_qr, "eigh": _np_eigh, "svd": _np_svd}
