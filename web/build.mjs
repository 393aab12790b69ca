// Bundles web/src/app.js (the page), web/src/worker.js (the Python worker) and web/src/snapshot.js
// (the build's snapshot maker, web/tools/make_snapshot.py) into web/dist/.
// Usage: npm run build   (node web/build.mjs [--watch])
import * as esbuild from 'esbuild';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const options = {
  entryPoints: ['app.js', 'worker.js', 'snapshot.js'].map((f) => path.join(here, 'src', f)),
  outdir: path.join(here, 'dist'),
  bundle: true,
  format: 'esm',
  target: ['chrome120', 'firefox128', 'safari17'],
  minify: true,
  sourcemap: true,
  loader: { '.py': 'text' },
  logLevel: 'info',
  legalComments: 'linked',
};

if (process.argv.includes('--watch')) {
  const ctx = await esbuild.context(options);
  await ctx.watch();
} else {
  await esbuild.build(options);
}
