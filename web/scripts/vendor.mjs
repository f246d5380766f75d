// Copy the files the dashboard loads from node_modules into web/vendor/, so
// that locklab-server serves them from its own origin (no CDN).  Run by
// `npm ci` (postinstall) and by `npm run vendor`.
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const web = join(dirname(fileURLToPath(import.meta.url)), '..');
const files = [
  ['node_modules/uplot/dist/uPlot.esm.js', 'vendor/uPlot.esm.js'],
  ['node_modules/uplot/dist/uPlot.min.css', 'vendor/uPlot.min.css'],
  ['node_modules/uplot/LICENSE', 'vendor/uPlot.LICENSE.txt'],
];
mkdirSync(join(web, 'vendor'), { recursive: true });
for (const [from, to] of files) {
  try {
    copyFileSync(join(web, from), join(web, to));
  } catch (e) {
    console.error(`vendor: cannot copy ${from}: ${e.message}`);
    process.exit(1);
  }
}
console.log(`vendor: ${files.length} files copied to web/vendor/`);
