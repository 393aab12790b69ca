// One replay of a captured program (browser.py's build_replay): patch the random slots'
// words, copy the inputs in, encode the prebuilt list (bind groups made once), copy the
// outputs out, submit once. `pre`/`post`/`patches` arrive as Python lists (argument proxies,
// released after the call); `scope` opens the driver's error scope.
// A script, not source for eval: the playground's worker imports it (bundled), so the page's
// Content-Security-Policy needs no 'unsafe-eval'; the driver evaluates it (run_js) only where
// no page defined `webtorchReplay`, e.g. a bare Pyodide.
globalThis.webtorchReplay = (device, scope, params, patches, ops, pre, post) => {
  const q = device.queue;
  if (scope) device.pushErrorScope('validation');
  if (patches) {
    const p = patches.toJs();
    for (let i = 0; i < p.length; i += 4) q.writeBuffer(params, p[i], new Uint32Array(p.slice(i + 1, i + 4)));
  }
  const enc = device.createCommandEncoder();
  const copies = (c) => { for (let i = 0; i < c.length; i += 5) enc.copyBufferToBuffer(c[i], c[i + 1], c[i + 2], c[i + 3], c[i + 4]); };
  copies(pre.toJs());
  let pass = null;
  for (const op of ops) {
    if (op[0] === 0) {
      if (pass === null) pass = enc.beginComputePass();
      pass.setPipeline(op[1]);
      pass.setBindGroup(0, op[2]);
      pass.dispatchWorkgroups(op[3], op[4], op[5]);
    } else {
      if (pass !== null) { pass.end(); pass = null; }
      enc.copyBufferToBuffer(op[1], op[2], op[3], op[4], op[5]);
    }
  }
  if (pass !== null) pass.end();
  copies(post.toJs());
  q.submit([enc.finish()]);
};
