import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import react from '@vitejs/plugin-react';
import type { Plugin as PostcssPlugin } from 'postcss';
import { defineConfig, type Plugin } from 'vitest/config';

// The Go server embeds dist/ with `//go:embed all:dist`, which needs at least
// one file there. Vite empties outDir on every build, so put the placeholder back.
function keepDistPlaceholder(): Plugin {
  let outDir = '';
  return {
    name: 'bastion-keep-dist-placeholder',
    apply: 'build',
    configResolved(config) {
      outDir = resolve(config.root, config.build.outDir);
    },
    closeBundle() {
      writeFileSync(resolve(outDir, '.keep'), '');
    },
  };
}

// Writes a gzip of every script, style sheet and catalog next to it, at the
// highest level, once per build: the server sends it to browsers that accept
// gzip (apiserver/console.go), and `npm run size` counts exactly these bytes.
function gzipAssets(): Plugin {
  let assets = '';
  return {
    name: 'bastion-gzip-assets',
    apply: 'build',
    configResolved(config) {
      assets = resolve(config.root, config.build.outDir, config.build.assetsDir);
    },
    closeBundle() {
      for (const name of readdirSync(assets)) {
        if (!/\.(js|css|json|svg)$/.test(name)) continue;
        const file = join(assets, name);
        writeFileSync(`${file}.gz`, gzipSync(readFileSync(file), { level: 9 }));
      }
    },
  };
}

// Writes which modules make up each chunk (their rendered size, before
// gzip) to .vite/chunks.json: `npm run size` reads it to find the catalogs a
// screen's code reads and, with --why, to say where a screen's bytes go.
function chunkContents(): Plugin {
  let root = '';
  return {
    name: 'bastion-chunk-contents',
    apply: 'build',
    configResolved(config) {
      root = config.root + '/';
    },
    generateBundle(_options, bundle) {
      const chunks: Record<string, Record<string, number>> = {};
      for (const output of Object.values(bundle)) {
        if (output.type !== 'chunk') continue;
        chunks[output.fileName] = Object.fromEntries(
          Object.entries(output.modules).map(([id, module]) => [
            id.replace(/^.*\/node_modules\//, '').replace(root, '').replace(/^\0/, ''),
            module.renderedLength,
          ]),
        );
      }
      this.emitFile({ type: 'asset', fileName: '.vite/chunks.json', source: JSON.stringify(chunks) });
    },
  };
}

// PatternFly ships rules for themes the console never turns on (high
// contrast, glass, felt, Red Hat); they are more than a third of its CSS.
// The same goes for three other groups of rules, each checked against what
// the console renders:
// - table features no table turns on (tree tables, favourites, inline
//   editing, nested column headers, dragging rows);
// - the notification drawer, which Page renders only when given one;
// - the Flex layout's breakpoint variants (…-on-md and the like): no Flex
//   of the console sets a property per breakpoint (grep for `md:` in src).
// Rules that apply only to those are dropped from the bundle: about 18 KB
// gzip on a project screen with a table.
const unusedTheme = /\.pf-v6-theme-(high-contrast|glass|felt|redhat)\b/;
const unusedTableFeature =
  /\.pf-(v6-c-table__(favorite|inline-edit|draggable|toggle-icon-inner--tree)|m-(tree-view|favorite|favorited|nested-column-header|inline-editable|ghost-row|drag-over|draggable))\b/;
const notificationDrawer = /\.pf-v6-c-drawer/;
const flexBreakpointVariant = /\.pf-v6-l-flex\b.*-on-(sm|md|lg|xl|2xl)\b/;
// - button, menu toggle, nav and masthead modifiers that only props the
//   console never passes turn on (isSettings, isCircle, isDocked, isFavorite,
//   size="lg", the stateful variant; grep src for them), and the docked
//   page layout (Page's dockContent) that they serve;
// - label colours and kinds no Label of the console takes: it uses blue,
//   green, grey, orange, purple and red (tasks/status.ts, TemplateSchedules,
//   SurveyEditor), no status prop, nothing editable or "add". A Label given
//   another colour would show uncoloured: add it here first.
const unusedModifier =
  /\.pf-v6-c-(button|menu-toggle|nav|masthead)\.pf-m-(stateful|settings|circle|docked|text-expanded|display-lg|favorite|favorited)\b|\.pf-v6-c-(page|compass)__dock\b|\.pf-v6-c-label\.pf-m-(teal|yellow|orangered|success|warning|danger|info|custom|editable|editable-active|add)\b/;
const unused = [unusedTheme, unusedTableFeature, notificationDrawer, flexBreakpointVariant, unusedModifier];
function dropUnusedPatternFlyRules(): PostcssPlugin {
  return {
    postcssPlugin: 'bastion-drop-unused-patternfly-rules',
    Rule(rule) {
      const kept = rule.selectors.filter((selector) => !unused.some((pattern) => pattern.test(selector)));
      if (kept.length === 0) rule.remove();
      else if (kept.length < rule.selectors.length) rule.selectors = kept;
    },
  };
}

// Each PatternFly icon carries two drawings: its own and the Red Hat UI
// set's, which shows only under a .pf-v6-icon-set-rh-ui ancestor that the
// console never sets. The second is dropped from every icon module; an
// icon without one renders its own drawing alone, as the theme shows it.
function dropRedHatIconSet(): Plugin {
  return {
    name: 'bastion-drop-red-hat-icon-set',
    apply: 'build',
    transform(code, id) {
      if (!id.includes('/@patternfly/react-icons/dist/esm/icons/')) return null;
      return { code: code.replace(/^ {2}rhUiIcon: .*,$/m, '  rhUiIcon: null,'), map: null };
    },
  };
}

// PatternFly's table merges its cells' props with lodash's mergeWith, whose
// helpers weigh about 6 KB gzip; the build uses src/vendor/mergeWith.ts,
// which behaves the same on props (its test compares the two).
function smallMergeWith(): Plugin {
  let replacement = '';
  return {
    name: 'bastion-small-merge-with',
    apply: 'build',
    enforce: 'pre', // before Vite's resolver finds lodash's
    configResolved(config) {
      replacement = resolve(config.root, 'src/vendor/mergeWith.ts');
    },
    resolveId(source) {
      return source === 'lodash/mergeWith' ? replacement : null;
    },
  };
}

// The Go server (`bastion dev`) listens here by default.
const apiServer = 'http://127.0.0.1:3000';

export default defineConfig({
  base: '/',
  plugins: [react(), dropRedHatIconSet(), smallMergeWith(), keepDistPlaceholder(), chunkContents(), gzipAssets()],
  css: { postcss: { plugins: [dropUnusedPatternFlyRules()] } },
  build: { outDir: 'dist', assetsDir: 'assets', emptyOutDir: true, manifest: true },
  server: {
    proxy: { '/api': { target: apiServer, ws: true } },
  },
  test: {
    environment: 'jsdom',
    include: ['src/**/*.test.{ts,tsx}'],
    setupFiles: ['src/test/setup.ts'],
    css: false,
    // The machine is shared: rendering PatternFly tables takes seconds there.
    testTimeout: 30_000,
    // One jsdom and one module graph per worker, not per file: setting up
    // jsdom and importing PatternFly again for each of 50 files was 60 % of
    // the suite's CPU (215 s against 85 s, docs/benchmarks.md "CI time").
    // So a test file must not depend on being first: no vi.mock of a module
    // that another file imports for real (a lazy() caches whichever it got
    // first), and whatever a test changes globally is restored in
    // src/test/setup.ts's afterEach.
    pool: 'threads',
    isolate: false,
  },
});
