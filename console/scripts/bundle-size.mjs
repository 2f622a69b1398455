// First-load size of the console: the JS and CSS a browser fetches to show
// each screen when it opens the console there (the entry, the screen's lazily
// loaded chunks, and everything they import statically), plus the catalogs
// of the namespaces the screen reads (src/i18n: only English "common" is
// bundled; the others load with their screens), gzipped as a server would
// send them. Reads dist/.vite/manifest.json (npm run build writes it). Fonts
// and images are not counted. Each screen is counted in English and in the
// language whose catalogs for that screen are the largest, which a browser
// set to that language loads too.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

const dist = new URL('../dist/', import.meta.url).pathname;
const manifest = JSON.parse(readFileSync(join(dist, '.vite/manifest.json'), 'utf8'));
const entry = Object.keys(manifest).find((key) => manifest[key].isEntry);

const signedIn = ['src/app/SignedInApp.tsx', 'src/app/ProjectArea.tsx'];
// Each screen's lazy chunks, by the source file that React.lazy imports,
// and the namespaces it reads besides "common".
const screens = {
  'sign-in (/auth/login)': { chunks: ['src/resources/auth/LoginPage.tsx'], ns: ['auth'] },
  'history (/project/{id}/history)': { chunks: [...signedIn, 'src/resources/tasks/HistoryPage.tsx'], ns: ['tasks'] },
  'task log (/project/{id}/history?t=)': {
    chunks: [...signedIn, 'src/resources/tasks/HistoryPage.tsx', 'src/resources/tasks/TaskLogHost.tsx'],
    ns: ['tasks'],
  },
  'templates (/project/{id}/templates)': {
    chunks: [...signedIn, 'src/resources/templates/TemplateRoutes.tsx'],
    ns: ['templates', 'tasks'],
  },
  'keys (/project/{id}/keys)': { chunks: [...signedIn, 'src/resources/keys/KeysPage.tsx'], ns: ['resources'] },
  'repositories (/project/{id}/repositories)': {
    chunks: [...signedIn, 'src/resources/repositories/RepositoriesPage.tsx'],
    ns: ['resources'],
  },
  'integrations (/project/{id}/integrations)': {
    chunks: [...signedIn, 'src/resources/integrations/IntegrationsPage.tsx'],
    ns: ['integrations'],
  },
  'team (/project/{id}/team)': { chunks: [...signedIn, 'src/resources/team/TeamPage.tsx'], ns: ['team'] },
  'settings (/project/{id}/settings)': {
    chunks: [...signedIn, 'src/resources/projects/ProjectSettingsPage.tsx'],
    ns: ['projects'],
  },
  'activity (/project/{id}/activity)': { chunks: [...signedIn, 'src/resources/events/ActivityPage.tsx'], ns: [] },
  'users (/users)': { chunks: ['src/app/SignedInApp.tsx', 'src/resources/users/UsersPage.tsx'], ns: ['users'] },
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

// Catalog chunks by language and namespace (English "common" is in the entry).
const catalogs = {};
for (const key of Object.keys(manifest)) {
  const [, lang, ns] = /^src\/locales\/([^/]+)\/([^/]+)\.json$/.exec(key) ?? [];
  if (lang) (catalogs[lang] ??= {})[ns] = gzipped(manifest[key].file);
}
// A language's catalogs for a screen; English ones always load too, as the
// fallback language.
function catalogBytes(lang, ns) {
  const names = lang === 'en' ? ns : ['common', ...ns];
  return names.reduce((sum, name) => sum + (catalogs[lang]?.[name] ?? 0), 0);
}

const kb = (n) => (n / 1024).toFixed(1).padStart(6);
const budget = 300 * 1024;
let worst = { total: 0 };
for (const [screen, { chunks, ns }] of Object.entries(screens)) {
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
  const english = catalogBytes('en', ns);
  const [lang, extra] = Object.keys(catalogs)
    .filter((l) => l !== 'en')
    .map((l) => [l, catalogBytes(l, ns)])
    .sort((a, b) => b[1] - a[1])[0] ?? ['en', 0];
  const total = js + css + english + extra;
  if (total > worst.total) worst = { total, screen, lang };
  console.log(
    `${screen.padEnd(44)} JS ${kb(js)} KB  CSS ${kb(css)} KB  words ${kb(english + extra)} KB (${lang})  total ${kb(total)} KB gzip`,
  );
}
console.log(
  `largest first load: ${(worst.total / 1024).toFixed(1)} KB gzip, ${worst.screen} in ${worst.lang} (budget ${budget / 1024} KB)`,
);
process.exit(worst.total <= budget ? 0 : 1);
