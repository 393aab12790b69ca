// atomics.wgsl: read-modify-write helpers for put(accumulate=True). WGSL has atomics only on
// i32/u32, so float adds are compare-and-swap loops on the bit pattern (atomic<u32> +
// bitcast); f16 elements (two per 32-bit word) update their half of the word; bfloat16 (an f32
// word) rounds each sum; uint8 stored one per u32 wraps at 256. `dst` is the destination binding, declared array<atomic<u32>>.
fn atomic_add_f32(k: u32, v: f32) {
  var old = atomicLoad(&dst[k]);
  loop {
    let r = atomicCompareExchangeWeak(&dst[k], old, bitcast<u32>(bitcast<f32>(old) + v));
    if (r.exchanged) { break; }
    old = r.old_value;
  }
}
fn atomic_add_f16(k: u32, v: f32) {
  let w = k >> 1u;
  let hi = (k & 1u) == 1u;
  var old = atomicLoad(&dst[w]);
  loop {
    var h = unpack2x16float(old);
    if (hi) { h.y = h.y + v; } else { h.x = h.x + v; }
    let r = atomicCompareExchangeWeak(&dst[w], old, pack2x16float(h));
    if (r.exchanged) { break; }
    old = r.old_value;
  }
}
fn atomic_add_bf16(k: u32, v: f32) {  // bfloat16 stored as f32 words: each sum rounded (bf16r)
  var old = atomicLoad(&dst[k]);
  loop {
    let r = atomicCompareExchangeWeak(&dst[k], old, bitcast<u32>(bf16r(bitcast<f32>(old) + v)));
    if (r.exchanged) { break; }
    old = r.old_value;
  }
}
fn atomic_add_wrap(k: u32, v: u32, mask: u32) {  // uint8, uint16: one u32 per element, wrapped
  var old = atomicLoad(&dst[k]);
  loop {
    let r = atomicCompareExchangeWeak(&dst[k], old, (old + v) & mask);
    if (r.exchanged) { break; }
    old = r.old_value;
  }
}
