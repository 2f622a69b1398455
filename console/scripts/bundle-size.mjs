// First-load size of the console: the JS and CSS a browser fetches to show
// each screen when it opens the console there (the entry, the screen's lazily
// loaded chunks, and everything they import statically), gzipped as a server
// would send them. Reads dist/.vite/manifest.json (npm run build writes it).
// Fonts and images are not counted. The largest screen is counted again with
// the largest language's catalogs, which a browser set to that language
// loads too.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

const dist = new URL('../dist/', import.meta.url).pathname;
const manifest = JSON.parse(readFileSync(join(dist, '.vite/manifest.json'), 'utf8'));
const entry = Object.keys(manifest).find((key) => manifest[key].isEntry);

// Each screen's lazy chunks, by the source file that React.lazy imports.
const screens = {
  'sign-in (/auth/login)': ['src/resources/auth/LoginPage.tsx'],
  'project page (/project/{id}/history)': ['src/app/SignedInApp.tsx', 'src/app/ProjectArea.tsx'],
  'team (/project/{id}/team)': ['src/app/SignedInApp.tsx', 'src/app/ProjectArea.tsx', 'src/resources/team/TeamPage.tsx'],
  'settings (/project/{id}/settings)': ['src/app/SignedInApp.tsx', 'src/app/ProjectArea.tsx', 'src/resources/projects/ProjectSettingsPage.tsx'],
  'activity (/project/{id}/activity)': ['src/app/SignedInApp.tsx', 'src/app/ProjectArea.tsx', 'src/resources/events/ActivityPage.tsx'],
  'users (/users)': ['src/app/SignedInApp.tsx', 'src/resources/users/UsersPage.tsx'],
};

function collect(key, files = new Set()) {
  const chunk = manifest[key];
  if (!chunk || files.has(chunk.file)) return files;
  files.add(chunk.file);
  for (const css of chunk.css ?? []) files.add(css);
  for (const imported of chunk.imports ?? []) collect(imported, files);
  return files;
}

const gzipped = (file) => gzipSync(readFileSync(join(dist, file)), { level: 9 }).length;
let worst = 0;
for (const [screen, chunks] of Object.entries(screens)) {
  const files = collect(entry);
  for (const chunk of chunks) {
    if (!manifest[chunk]) throw new Error(`${chunk} is not a chunk of the build`);
    collect(chunk, files);
  }
  let js = 0;
  let css = 0;
  for (const file of files) {
    if (file.endsWith('.js')) js += gzipped(file);
    else if (file.endsWith('.css')) css += gzipped(file);
  }
  worst = Math.max(worst, js + css);
  const kb = (n) => (n / 1024).toFixed(1).padStart(6);
  console.log(`${screen.padEnd(40)} JS ${kb(js)} KB  CSS ${kb(css)} KB  total ${kb(js + css)} KB gzip`);
}
// English is bundled; another language adds its catalogs to the first load.
const catalogs = {};
for (const key of Object.keys(manifest)) {
  const lang = /^src\/locales\/([^/]+)\/[^/]+\.json$/.exec(key)?.[1];
  if (lang) catalogs[lang] = (catalogs[lang] ?? 0) + gzipped(manifest[key].file);
}
const [heaviest, extra] = Object.entries(catalogs).sort((a, b) => b[1] - a[1])[0] ?? ['none', 0];
console.log(`largest language catalogs: ${heaviest}, ${(extra / 1024).toFixed(1)} KB gzip`);

const budget = 300 * 1024;
const largest = worst + extra;
console.log(`largest first load: ${(largest / 1024).toFixed(1)} KB gzip, with ${heaviest} (budget ${budget / 1024} KB)`);
process.exit(largest <= budget ? 0 : 1);
