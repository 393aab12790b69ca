// prelude.wgsl: helpers shared by the element-wise, reduce and scan kernels (f32 math with
// PyTorch's edge cases: NaN and infinities by their bits, accurate exp/log/expm1/log1p, erf/erfc,
// pow with negative bases, fmod). A helper of one element-wise op lives in its record
// (py/webtorch/backends/elementwise.py, `helpers`), added after this file (codegen.prelude()).

fn wisnan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
fn wisinf(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u; }
fn wisfinite(x: f32) -> bool { return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u; }
fn wsignbit(x: f32) -> bool { return (bitcast<u32>(x) >> 31u) != 0u; }
// float -> uint32 as PyTorch converts (truncated, through int64, wrapped modulo 2^32; NaN and +-inf give 0)
fn wf2u32(x: f32) -> u32 {
  if (!wisfinite(x)) { return 0u; }
  let t = trunc(x);
  if (t >= 0.0 && t < 4294967296.0) { return u32(t); }
  if (t < 0.0 && t >= -2147483648.0) { return bitcast<u32>(i32(t)); }
  return u32(t - floor(t / 4294967296.0) * 4294967296.0);  // exact: |t| >= 2^31 is a multiple of 256
}
// f32 -> i32 as PyTorch's CPU casts give it (x86's cvttss2si): NaN, +-inf and values outside the i32
// range are -2147483648 (the WGSL builtin clamps instead); an undefined cast in C++, but masks of
// finfo.min or log(0) = -inf cast to an integer are common. By bits: compilers may assume finite
fn wf2i(x: f32) -> i32 {
  if ((bitcast<u32>(x) & 0x7fffffffu) >= 0x4f000000u) { return -2147483647 - 1; }
  return i32(x);
}
// through a var: Tint (Chromium) rejects a constant-folded NaN/inf ("value nan cannot be
// represented as 'f32'")
fn wnan() -> f32 { var u = 0x7fc00000u; return bitcast<f32>(u); }
fn winf() -> f32 { var u = 0x7f800000u; return bitcast<f32>(u); }

// subnormals: lavapipe's exp/exp2 flush subnormal results to 0 and log/log2 read subnormal
// arguments as 0 (or as the smallest normal); these scale them into the normal range
fn wexp(x: f32) -> f32 {   // exp(r) 2^k, |r| <= ln(2)/2 (the builtin's error grows with |x|: 64 ulps at 88)
  if (wisnan(x)) { return x; }
  if (x > 89.0) { return winf(); }
  if (x < -104.0) { return 0.0; }
  let k = round(x * 1.4426950408889634);
  let r = (x - k * 0.693145751953125) - k * 1.428606765330187e-06;   // ln 2 in two parts: exact
  let ki = i32(k);
  let k1 = ki / 2;       // 2^k as two normal factors: the last product rounds once, subnormal or inf
  return exp(r) * bitcast<f32>(u32(k1 + 127) << 23u) * bitcast<f32>(u32(ki - k1 + 127) << 23u);
}
fn wexp2(x: f32) -> f32 {
  if (x < -125.0) { return exp2(x + 64.0) * 5.421010862427522e-20; }
  return exp2(x);
}
// log: lavapipe's builtin has an absolute error ~1e-7 near 1 (relative 4e-5 at log(0.9976); expm1,
// log1p, tanh, sinh, asinh, atanh build on it) and reads subnormals as 0. Here x = 2^e * m with
// m in [sqrt(1/2), sqrt(2)) (a subnormal's significand is an exact integer first), log(m) =
// 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172, by its series: about 1 ulp
fn wlogm(x: f32) -> vec2<f32> {   // (e, log(m)) of a finite x > 0
  var b = bitcast<u32>(x);
  var e = -126;
  if (b < 0x00800000u) { b = bitcast<u32>(f32(b)); e = -275; }   // x = b * 2^-149
  var m = bitcast<f32>((b & 0x007fffffu) | 0x3f000000u);          // [0.5, 1)
  e = e + i32(b >> 23u);
  if (m < 0.7071067811865476) { m = m * 2.0; e = e - 1; }
  return vec2<f32>(f32(e), watanh2((m - 1.0) / (m + 1.0)));
}
fn watanh2(s: f32) -> f32 {   // 2 atanh(s) = log((1 + s) / (1 - s)) for |s| <= 0.25, to s^13
  let s2 = s * s;
  return 2.0 * s + 2.0 * s * (s2 * (0.3333333333333333 + s2 * (0.2 + s2 * (0.14285714285714285 + s2 *
         (0.1111111111111111 + s2 * 0.09090909090909091)))));
}
fn wlogspecial(x: f32) -> bool {   // x <= 0, inf or NaN (by the bits: compilers may assume finite)
  let u = bitcast<u32>(x);
  return u == 0u || u >= 0x7f800000u;
}
fn wlogof(x: f32) -> f32 {   // log, log2 of those: -inf at +-0, NaN below 0 and for NaN, inf at inf
  let u = bitcast<u32>(x);
  if ((u & 0x7fffffffu) == 0u) { return -winf(); }
  if (u == 0x7f800000u) { return x; }
  return wnan();
}
fn wlog(x: f32) -> f32 {
  if (wlogspecial(x)) { return wlogof(x); }
  let p = wlogm(x);
  return p.x * 0.693145751953125 + (p.y + p.x * 1.428606765330187e-06);   // ln 2 in two parts
}
fn wlog2(x: f32) -> f32 {
  if (wlogspecial(x)) { return wlogof(x); }
  let p = wlogm(x);
  return p.x + p.y * 1.4426950408889634;
}
// sin/cos/tan: the builtins keep ~1e-7 up to |x| ~ 1e6 and return garbage past it; from 2^16 on,
// x is reduced exactly by the bits of 2/pi (Payne-Hanek): x * 2/pi = q + f (mod 4), |f| <= 1/2
fn wmul64(a: u32, b: u32) -> vec2<u32> {   // (high, low) words of a * b
  let p00 = (a & 0xffffu) * (b & 0xffffu);
  let p01 = (a & 0xffffu) * (b >> 16u);
  let p10 = (a >> 16u) * (b & 0xffffu);
  let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
  return vec2<u32>((a >> 16u) * (b >> 16u) + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u),
                   (p00 & 0xffffu) | (mid << 16u));
}
struct WRed { r: f32, q: u32 }
fn wrempio2(x: f32) -> WRed {   // |x| >= 2^16, finite: r = f * pi/2 and the quadrant q
  var t = array<u32, 9>(0x00000000u, 0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u, 0xdb629599u,
                        0x3c439041u, 0xfe5163abu, 0xdebbc561u);   // 0, then the bits of 2/pi
  let u = bitcast<u32>(x) & 0x7fffffffu;
  let m = (u & 0x7fffffu) | 0x800000u;                 // |x| = m * 2^(e - 150)
  let g = (u >> 23u) - 120u;                           // the first bit of 2/pi that counts mod 4
  let j = g >> 5u;
  let sh = g & 31u;
  var w: array<u32, 3>;
  for (var k = 0u; k < 3u; k = k + 1u) {
    w[k] = select(t[j + k], (t[j + k] << sh) | (t[j + k + 1u] >> (32u - sh)), sh != 0u);
  }
  let a = wmul64(m, w[0]);
  let b = wmul64(m, w[1]);
  let c = wmul64(m, w[2]);
  var r1 = c.x + b.y;
  var r2 = b.x + a.y + select(0u, 1u, r1 < b.y);       // bits 64..95 of m * w: q, then f
  var q = r2 >> 30u;
  r2 = r2 & 0x3fffffffu;
  let neg = (r2 & 0x20000000u) != 0u;
  if (neg) { r2 = ~r2 & 0x3fffffffu; r1 = ~r1; q = q + 1u; }   // f - 1 (to 2^-94)
  let f = f32(r2) * 9.313225746154785e-10 + f32(r1) * 2.168404344971009e-19;
  let r = f * 1.5707963267948966;
  return WRed(select(r, -r, neg), q & 3u);
}
fn wexpm1(x: f32) -> f32 {
  if (abs(x) < 1e-5) { return x * (1.0 + 0.5 * x); }   // (keeps -0.0)
  if (x > 88.7) { return winf(); }
  let u = wexp(x);
  if (u == 1.0) { return x; }
  let um1 = u - 1.0;
  if (um1 == -1.0) { return -1.0; }
  if (abs(x) > 1.0) { return um1; }
  return um1 * x / wlog(u);
}
fn wlog1p(x: f32) -> f32 {   // log(1 + x) = 2 atanh(x / (2 + x)): no rounding of 1 + x near 0
  if (abs(x) < 1e-8) { return x; }       // (x / 2 would round a subnormal x)
  if (abs(x) < 0.4) { return watanh2(x / (2.0 + x)); }
  return wlog(1.0 + x);
}
fn whalfexp(a: f32) -> f32 {   // exp(a) / 2 = exp(a - ln 2) for a > 88, where exp(a) overflows first
  return wexp(a - 0.693145751953125) * 0.9999985713952535;   // (a - the 16-bit part of ln 2: exact)
}

fn werfc_pos(z: f32) -> f32 {
  // Numerical Recipes erfcc, fractional error < 1.2e-7, z >= 0
  let t = 1.0 / (1.0 + 0.5 * z);
  return t * exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
         t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 +
         t * (-0.82215223 + t * 0.17087277)))))))));
}
fn werf(x: f32) -> f32 {
  if (wisnan(x)) { return x; }
  let a = abs(x);
  if (a < 0.5) {
    let x2 = x * x;
    return 1.1283791670955126 * x * (1.0 + x2 * (-0.3333333333333333 + x2 * (0.1 + x2 *
           (-0.023809523809523808 + x2 * (0.004629629629629629 + x2 * -0.0007575757575757576)))));
  }
  let r = 1.0 - werfc_pos(a);
  return select(r, -r, x < 0.0);
}
fn werfc(x: f32) -> f32 {
  if (wisnan(x)) { return x; }
  if (abs(x) < 0.5) { return 1.0 - werf(x); }
  let r = werfc_pos(abs(x));
  return select(r, 2.0 - r, x < 0.0);
}

fn wpow(a: f32, b: f32) -> f32 {
  if (b == 0.0 || a == 1.0 || (a == -1.0 && wisinf(b))) { return 1.0; }   // C's pow(-1, +-inf) = 1
  if (wisnan(a) || wisnan(b)) { return wnan(); }
  let bi = trunc(b);
  let is_int = bi == b;
  if (is_int && abs(b) <= 64.0) {          // exact repeated squaring for small integer powers
    var e = u32(abs(b));
    var base = a;
    var r = 1.0;
    loop {
      if ((e & 1u) != 0u) { r = r * base; }
      e = e >> 1u;
      if (e == 0u) { break; }
      base = base * base;
    }
    return select(r, 1.0 / r, b < 0.0);
  }
  let odd = is_int && abs(bi - 2.0 * trunc(bi * 0.5)) == 1.0;
  if (a == 0.0) {                          // pow(-0, odd) keeps the sign: -0 or -inf
    let z = select(0.0, winf(), b < 0.0);
    return select(z, -z, odd && wsignbit(a));
  }
  let r = wexp2(b * wlog2(abs(a)));
  if (a < 0.0) {
    if (!is_int) { return select(wnan(), r, wisinf(a)); }   // pow(-inf, 0.5) = inf
    return select(r, -r, odd);
  }
  return r;
}
// of equal values (0.0 and -0.0) these give a, as PyTorch's fmax/fmin (and its maximum/minimum's
// scalar loop: its vector loop gives b)
fn wmaximum(a: f32, b: f32) -> f32 { if (wisnan(a)) { return a; } if (wisnan(b)) { return b; } return select(b, a, a >= b); }
fn wminimum(a: f32, b: f32) -> f32 { if (wisnan(a)) { return a; } if (wisnan(b)) { return b; } return select(b, a, a <= b); }
// C's exact fmod (WGSL's float `%` is a - b * trunc(a / b), which rounds): on the bits, |a|'s
// significand reduced by |b|'s shifted left one exponent step at a time (at most 277 steps), each
// subtraction exact; the result keeps a's sign, fmod(a, 0) = fmod(inf, b) = NaN, fmod(a, inf) = a
fn wfmod(a: f32, b: f32) -> f32 {
  let ua = bitcast<u32>(a);
  let ub = bitcast<u32>(b);
  let sa = ua & 0x80000000u;
  let aa = ua & 0x7fffffffu;
  let ab = ub & 0x7fffffffu;
  if (ab == 0u || ab > 0x7f800000u || aa >= 0x7f800000u) { return wnan(); }
  if (aa < ab) { return a; }              // also b = +-inf
  if (aa == ab) { return bitcast<f32>(sa); }
  var ea = i32(aa >> 23u);
  var eb = i32(ab >> 23u);
  var ma = aa & 0x7fffffu;
  var mb = ab & 0x7fffffu;
  if (ea == 0) { let s = countLeadingZeros(ma) - 8u; ma = ma << s; ea = 1 - i32(s); } else { ma = ma | 0x800000u; }
  if (eb == 0) { let s = countLeadingZeros(mb) - 8u; mb = mb << s; eb = 1 - i32(s); } else { mb = mb | 0x800000u; }
  for (; ea > eb; ea = ea - 1) {
    if (ma >= mb) { ma = ma - mb; }
    if (ma == 0u) { return bitcast<f32>(sa); }
    ma = ma << 1u;
  }
  if (ma >= mb) { ma = ma - mb; }
  if (ma == 0u) { return bitcast<f32>(sa); }
  let s = countLeadingZeros(ma) - 8u;   // renormalize: the significand's top bit to bit 23
  ma = ma << s;
  ea = ea - i32(s);
  if (ea > 0) { return bitcast<f32>(sa | (u32(ea) << 23u) | (ma & 0x7fffffu)); }
  return bitcast<f32>(sa | (ma >> u32(1 - ea)));   // subnormal
}
fn wlogaddexp(a: f32, b: f32) -> f32 {
  if (wisnan(a) || wisnan(b)) { return wnan(); }
  if (a == -winf()) { return b; }
  if (b == -winf()) { return a; }
  if (a == winf() || b == winf()) { return winf(); }
  return max(a, b) + wlog1p(exp(-abs(a - b)));
}

// atan: lavapipe's builtins have absolute errors ~4e-8 (relative 2e-5 near 0) and mishandle NaN
// and -0.0; |x| > 1 -> pi/2 - atan(1/|x|), t > tan(pi/12) -> pi/6 + atan((t sqrt3 - 1) / (t + sqrt3)),
// then its series to u^15 (|u| <= 0.268)
fn watan(x: f32) -> f32 {
  if (wisnan(x)) { return x; }
  let a = abs(x);
  var t = select(a, 1.0 / a, a > 1.0);
  var off = 0.0;
  if (t > 0.2679491924311228) {
    t = (t * 1.7320508075688772 - 1.0) / (t + 1.7320508075688772);
    off = 0.5235987755982988;
  }
  let u = t * t;
  var r = off + t * (1.0 - u * (0.3333333333333333 - u * (0.2 - u * (0.14285714285714285 - u *
          (0.1111111111111111 - u * (0.09090909090909091 - u * (0.07692307692307693 - u * 0.06666666666666667)))))));
  r = select(r, 1.5707963267948966 - r, a > 1.0);
  return select(r, -r, wsignbit(x));
}
fn watan2(y: f32, x: f32) -> f32 {   // atan2(±0, ±0) is undefined in WGSL; IEEE/PyTorch values
  if (y == 0.0 && x == 0.0) {
    let r = select(0.0, 3.141592653589793, wsignbit(x));
    return select(r, -r, wsignbit(y));
  }
  if (wisnan(x) || wisnan(y)) { return x + y; }
  if (wisinf(x) && wisinf(y)) {           // IEEE: ±pi/4, ±3pi/4
    let r = select(0.7853981633974483, 2.356194490192345, x < 0.0);
    return select(r, -r, y < 0.0);
  }
  var r = watan(y / x);
  if (wsignbit(x)) { r = select(r + 3.141592653589793, r - 3.141592653589793, wsignbit(y)); }
  return select(r, bitcast<f32>(bitcast<u32>(y) & 0x80000000u), y == 0.0 && x > 0.0);   // atan2(-0, x) = -0
}
