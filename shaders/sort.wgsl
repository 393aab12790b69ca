// sort.wgsl: sort along the last dim (values + int positions), NaN largest, ties by position
// (so every sort is stable). Two forms, chosen by backend.py:
//  * main: one workgroup per row, bitonic network over N (a power of two >= L) slots in
//    workgroup memory; slots past L are padding that always sorts last.
//  * init / step / fin: rows longer than a workgroup holds: padded copies in global temp
//    buffers, one dispatch per bitonic (k, j) step, then a gather to the outputs.
// P: [n_rows, L, <row index params>]  (step: [n_rows, L, N, k, j])
{{ENABLE}}
{{PRELUDE}}
{{BINDINGS}}

fn before(av: {{CT}}, ai: u32, bv: {{CT}}, bi: u32, L: u32) -> bool {   // a sorts before b
  if (ai >= L) { return false; }
  if (bi >= L) { return true; }
{{BEFORE}}
}

{{KERNEL}}
