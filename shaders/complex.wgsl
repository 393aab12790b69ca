// complex.wgsl: complex64 arithmetic on vec2<f32> (x: real part, y: imaginary part), appended to the
// prelude of the complex kernels only (backends/webgpu/complex.py); the records' "c" WGSL forms
// (backends/elementwise.py) call these. Edge cases as C99 / numpy where cheap: inf and NaN by their bits.

fn cmul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> { return vec2<f32>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
fn cdiv0(v: f32) -> f32 {   // v / 0, by the bits (a compiler may fold 0.0 / x to 0)
  if (v == 0.0 || wisnan(v)) { return wnan(); }
  return select(winf(), -winf(), wsignbit(v));
}
fn cdiv(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {   // Smith's: no overflow of |b|^2
  if (b.x == 0.0 && b.y == 0.0) { return vec2<f32>(cdiv0(a.x), cdiv0(a.y)); }   // (1 + 1i) / 0 = inf + inf i
  if (abs(b.x) >= abs(b.y)) {
    let r = b.y / b.x;
    let d = b.x + b.y * r;
    return vec2<f32>((a.x + a.y * r) / d, (a.y - a.x * r) / d);
  }
  let r = b.x / b.y;
  let d = b.x * r + b.y;
  return vec2<f32>((a.x * r + a.y) / d, (a.y * r - a.x) / d);
}
fn cabs(z: vec2<f32>) -> f32 {   // hypot, scaled: no overflow or underflow of the squares
  if (wisinf(z.x) || wisinf(z.y)) { return winf(); }
  if (wisnan(z.x) || wisnan(z.y)) { return wnan(); }
  let m = max(abs(z.x), abs(z.y));
  if (m == 0.0) { return 0.0; }
  let a = z.x / m;
  let b = z.y / m;
  return m * sqrt(a * a + b * b);
}
fn cexp(z: vec2<f32>) -> vec2<f32> {
  let e = wexp(z.x);
  if (z.y == 0.0) { return vec2<f32>(e, z.y); }
  if (wisinf(z.x) && z.x < 0.0) { return vec2<f32>(0.0, 0.0); }   // exp(-inf + i y) = 0 (0 ** 2 = exp(2 log 0))
  if (e == 0.0 && wisfinite(z.y)) { return vec2<f32>(0.0, 0.0); }
  return vec2<f32>(e * wcos(z.y), e * wsin(z.y));
}
fn clog(z: vec2<f32>) -> vec2<f32> { return vec2<f32>(wlog(cabs(z)), watan2(z.y, z.x)); }
fn csqrt(z: vec2<f32>) -> vec2<f32> {   // the principal root; sqrt(-x - 0i) = -sqrt(x) i
  if (z.x == 0.0 && z.y == 0.0) { return vec2<f32>(0.0, z.y); }
  if (wisinf(z.y)) { return vec2<f32>(winf(), z.y); }
  let t = sqrt((abs(z.x) + cabs(z)) * 0.5);
  if (!wsignbit(z.x)) { return vec2<f32>(t, z.y / (2.0 * t)); }
  return vec2<f32>(abs(z.y) / (2.0 * t), select(t, -t, wsignbit(z.y)));
}
fn cpow(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> { return cexp(cmul(b, clog(a))); }   // C's cpow, as PyTorch
fn csin(z: vec2<f32>) -> vec2<f32> { return vec2<f32>(wsin(z.x) * wcosh(z.y), wcos(z.x) * wsinh(z.y)); }
fn ccos(z: vec2<f32>) -> vec2<f32> { return vec2<f32>(wcos(z.x) * wcosh(z.y), -wsin(z.x) * wsinh(z.y)); }
fn csinh(z: vec2<f32>) -> vec2<f32> { return vec2<f32>(wsinh(z.x) * wcos(z.y), wcosh(z.x) * wsin(z.y)); }
fn ccosh(z: vec2<f32>) -> vec2<f32> { return vec2<f32>(wcosh(z.x) * wcos(z.y), wsinh(z.x) * wsin(z.y)); }
fn ctanh(z: vec2<f32>) -> vec2<f32> {   // (sinh 2x + i sin 2y) / (cosh 2x + cos 2y); +-1 past |x| = 20
  if (abs(z.x) > 20.0) { return vec2<f32>(select(1.0, -1.0, wsignbit(z.x)), 0.0 * wsin(2.0 * z.y)); }
  let d = wcosh(2.0 * z.x) + wcos(2.0 * z.y);
  return vec2<f32>(wsinh(2.0 * z.x) / d, wsin(2.0 * z.y) / d);
}
fn ctan(z: vec2<f32>) -> vec2<f32> { let t = ctanh(vec2<f32>(-z.y, z.x)); return vec2<f32>(t.y, -t.x); }   // -i tanh(iz)
fn cnz(z: vec2<f32>) -> bool { return !(z.x == 0.0) || !(z.y == 0.0); }   // true for NaN
fn cexpm1(z: vec2<f32>) -> vec2<f32> {   // exp(z) - 1, the real part expm1(x) cos y - 2 sin^2(y/2): no cancellation at 0
  let s = wsin(0.5 * z.y);
  return vec2<f32>(wexpm1(z.x) * wcos(z.y) - 2.0 * s * s, wexp(z.x) * wsin(z.y));
}
fn clog1p(z: vec2<f32>) -> vec2<f32> {   // log(1 + z), the real part log1p(2x + x^2 + y^2) / 2 for |z| < 1/2
  if (max(abs(z.x), abs(z.y)) < 0.5) {
    return vec2<f32>(0.5 * wlog1p(z.x * (2.0 + z.x) + z.y * z.y), watan2(z.y, 1.0 + z.x));
  }
  return clog(vec2<f32>(1.0 + z.x, z.y));
}
fn casinh(z: vec2<f32>) -> vec2<f32> {   // odd; log(w + sqrt(w^2 + 1)) for Re w >= 0, log(2w) past |w| = 1e18
  let neg = wsignbit(z.x);
  let w = select(z, -z, neg);
  var r = clog(w) + vec2<f32>(0.6931471805599453, 0.0);
  if (max(abs(w.x), abs(w.y)) <= 1e18) { r = clog(w + csqrt(cmul(w, w) + vec2<f32>(1.0, 0.0))); }
  return select(r, -r, neg);
}
fn casin(z: vec2<f32>) -> vec2<f32> { let r = casinh(vec2<f32>(-z.y, z.x)); return vec2<f32>(r.y, -r.x); }   // -i asinh(iz)
fn cacosh(z: vec2<f32>) -> vec2<f32> {   // Kahan's log(z + sqrt(z + 1) sqrt(z - 1)), log(2z) past |z| = 1e18
  if (max(abs(z.x), abs(z.y)) > 1e18) { return clog(z) + vec2<f32>(0.6931471805599453, 0.0); }
  return clog(z + cmul(csqrt(z + vec2<f32>(1.0, 0.0)), csqrt(z - vec2<f32>(1.0, 0.0))));
}
fn cacos(z: vec2<f32>) -> vec2<f32> { return vec2<f32>(1.5707963267948966, 0.0) - casin(z); }
fn catanh(z: vec2<f32>) -> vec2<f32> { return 0.5 * (clog1p(z) - clog1p(-z)); }
fn catan(z: vec2<f32>) -> vec2<f32> { let r = catanh(vec2<f32>(-z.y, z.x)); return vec2<f32>(r.y, -r.x); }   // -i atanh(iz)
