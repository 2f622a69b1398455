// First-load size of the console (docs/benchmarks.md, "Console first load"):
// for every screen, the JS and CSS a browser fetches when it opens the
// console there, plus the catalogs it reads, in each of the twelve
// languages; the bytes are those of the gzip files the server sends
// (apiserver/console.go serves dist/assets/*.gz, which the build writes).
// Fails when any screen, in any language, is over the budget.
//
// What a screen fetches: the entry and its static imports; the chunks its
// route loads lazily (listed below by the source file that React.lazy
// imports) and their static imports; every CSS file of those chunks; and
// the catalogs of the namespaces that the code in those chunks reads
// (useTranslation('ns')) in the chosen language, "common" included (English
// catalogs never load: the console shows English keys). Code in
// a chunk that the screen does not render at first still counts, and so do
// its catalogs: the figure errs high, never low. Fonts and images are not
// counted; index.html (under 1 KB) neither.
//
//   npm run size              the table, and the exit status
//   npm run size -- --why     and, for the largest screen, where its bytes go
//   npm run size -- --all     and each screen in every language
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('../', import.meta.url).pathname;
const dist = join(root, 'dist');
const readJson = (file) => JSON.parse(readFileSync(join(dist, '.vite', file), 'utf8'));
const manifest = readJson('manifest.json');
const modulesOf = readJson('chunks.json'); // file → { module id → rendered bytes }
const budget = 300 * 1024;

const entry = Object.keys(manifest).find((key) => manifest[key].isEntry);
const signedIn = ['src/app/SignedInApp.tsx'];
// Every page of a project has the drawer and the task log host (the live
// socket, and the log for ?t=).
const project = [...signedIn, 'src/app/ProjectArea.tsx', 'src/resources/tasks/TaskLogHost.tsx'];
const templates = [...project, 'src/resources/templates/TemplateRoutes.tsx'];
const screens = {
  'sign-in (/auth/login)': ['src/resources/auth/LoginPage.tsx'],
  'history (history)': [...project, 'src/resources/tasks/HistoryPage.tsx'],
  'task log (history?t=)': [...project, 'src/resources/tasks/HistoryPage.tsx', 'src/resources/tasks/TaskLogDialog.tsx'],
  'templates (templates, views)': templates,
  'template (templates/{id})': [...templates, 'src/resources/templates/TemplateDetail.tsx'],
  'template editor (templates/{id}/edit)': [...templates, 'src/resources/templates/TemplateEditor.tsx'],
  'inventory (inventory)': [...project, 'src/resources/inventories/InventoriesPage.tsx'],
  'variable groups (environment)': [...project, 'src/resources/environments/EnvironmentsPage.tsx'],
  'keys (keys)': [...project, 'src/resources/keys/KeysPage.tsx'],
  'repositories (repositories)': [...project, 'src/resources/repositories/RepositoriesPage.tsx'],
  'integrations (integrations)': [...project, 'src/resources/integrations/IntegrationsPage.tsx'],
  'integration (integration/{id})': [...project, 'src/resources/integrations/IntegrationPage.tsx'],
  'team (team)': [...project, 'src/resources/team/TeamPage.tsx'],
  'settings (settings)': [...project, 'src/resources/projects/ProjectSettingsPage.tsx'],
  'activity (activity)': [...project, 'src/resources/events/ActivityPage.tsx'],
  'new project (/project/new)': [...signedIn, 'src/app/ProjectArea.tsx', 'src/resources/projects/NewProjectPage.tsx'],
  'users (/users)': [...signedIn, 'src/resources/users/UsersPage.tsx'],
};

// A page added to the routes without a line above would go unmeasured.
const measured = new Set(Object.values(screens).flat());
for (const [, file] of readFileSync(join(root, 'src/app/lazyPages.tsx'), 'utf8').matchAll(
  /import\('\.\.\/([^']+)'\), '\w+(?:Page|Routes|App)'/g,
)) {
  const source = `src/${file}.tsx`;
  if (!measured.has(source)) throw new Error(`${source} is a lazily loaded screen that bundle-size.mjs does not measure`);
}

/** The files a chunk brings, its static imports' included. */
function collect(key, files) {
  const chunk = manifest[key];
  if (!chunk) throw new Error(`${key} is not a chunk of the build`);
  if (files.has(chunk.file)) return files;
  files.add(chunk.file);
  for (const css of chunk.css ?? []) files.add(css);
  for (const imported of chunk.imports ?? []) collect(imported, files);
  return files;
}

/** The bytes the server sends for a file: its gzip, which the build wrote. */
function sent(file) {
  const gz = join(dist, `${file}.gz`);
  if (!existsSync(gz)) throw new Error(`${file}.gz is missing: run npm run build`);
  return readFileSync(gz).length;
}

// Catalogs by language and namespace.
const catalogs = {};
for (const key of Object.keys(manifest)) {
  const [, lang, ns] = /^src\/locales\/([^/]+)\/([^/]+)\.json$/.exec(key) ?? [];
  if (lang) (catalogs[lang] ??= {})[ns] = sent(manifest[key].file);
}
// English has no catalog in the build: its keys are its words.
const languages = ['en', ...Object.keys(catalogs)].sort();
if (languages.length !== 12) throw new Error(`expected English and eleven catalogued languages, found ${languages.join(', ')}`);

/** The namespaces the source modules of these files read. */
function namespacesOf(files) {
  const ns = new Set(['common']);
  for (const file of files) {
    for (const id of Object.keys(modulesOf[file] ?? {})) {
      if (!id.startsWith('src/')) continue;
      const source = readFileSync(join(root, id), 'utf8');
      for (const [, name] of source.matchAll(/useTranslation\(\s*'([^']+)'/g)) ns.add(name);
    }
  }
  return [...ns].sort();
}

/** Catalog bytes in a language (none in English, whose keys are its words). */
function catalogBytes(lang, ns) {
  let bytes = 0;
  for (const name of ns) {
    if (lang !== 'en') bytes += catalogs[lang][name] ?? 0;
  }
  return bytes;
}

const kb = (n) => (n / 1024).toFixed(1).padStart(6);
const args = new Set(process.argv.slice(2));
const results = [];
for (const [screen, chunks] of Object.entries(screens)) {
  const files = collect(entry, new Set());
  for (const chunk of chunks) collect(chunk, files);
  let js = 0;
  let css = 0;
  for (const file of files) {
    if (file.endsWith('.js')) js += sent(file);
    else if (file.endsWith('.css')) css += sent(file);
  }
  const ns = namespacesOf(files);
  const byLanguage = languages.map((lang) => ({ lang, words: catalogBytes(lang, ns), total: js + css + catalogBytes(lang, ns) }));
  const worst = byLanguage.reduce((a, b) => (b.total > a.total ? b : a));
  results.push({ screen, files, js, css, ns, byLanguage, worst });
  console.log(
    `${screen.padEnd(40)} JS ${kb(js)} KB  CSS ${kb(css)} KB  words ${kb(worst.words)} KB (${worst.lang.padEnd(7)})  total ${kb(worst.total)} KB gzip`,
  );
  if (args.has('--all')) {
    console.log(`${''.padEnd(40)} ${byLanguage.map(({ lang, total }) => `${lang} ${(total / 1024).toFixed(1)}`).join('  ')}`);
  }
}

const largest = results.reduce((a, b) => (b.worst.total > a.worst.total ? b : a));
if (args.has('--why')) explain(largest);
console.log(
  `largest first load: ${(largest.worst.total / 1024).toFixed(1)} KB gzip, ${largest.screen} in ${largest.worst.lang} (budget ${budget / 1024} KB)`,
);
const over = results.flatMap(({ screen, byLanguage }) =>
  byLanguage.filter(({ total }) => total > budget).map(({ lang, total }) => `${screen} in ${lang}: ${(total / 1024).toFixed(1)} KB`),
);
if (over.length > 0) {
  console.error(`over the ${budget / 1024} KB budget:\n  ${over.join('\n  ')}`);
  process.exit(1);
}

/**
 * Prints a screen's files, then its JS by package (or source file), each
 * module's share of its chunk's gzip in proportion to its rendered size.
 */
function explain({ screen, files }) {
  console.log(`\n${screen}, files (gzip):`);
  const sorted = [...files].sort((a, b) => sent(b) - sent(a));
  for (const file of sorted) console.log(`  ${kb(sent(file))} KB  ${file}`);
  const byPackage = new Map();
  for (const file of files) {
    const modules = Object.entries(modulesOf[file] ?? {});
    const rendered = modules.reduce((sum, [, bytes]) => sum + bytes, 0) || 1;
    for (const [id, bytes] of modules) {
      const name = id.startsWith('src/') ? id : id.match(/^(@[^/]+\/[^/]+|[^/]+)/)[1];
      const component = id.match(/components\/([^/]+)\//)?.[1];
      const key = component && !id.startsWith('src/') ? `${name} ${component}` : name;
      byPackage.set(key, (byPackage.get(key) ?? 0) + (sent(file) * bytes) / rendered);
    }
  }
  console.log(`\n${screen}, JS by package, component or source file (gzip, estimated):`);
  for (const [key, bytes] of [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, 40)) {
    console.log(`  ${kb(bytes)} KB  ${key}`);
  }
  console.log();
}
