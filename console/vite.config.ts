import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
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

// PatternFly ships rules for themes the console never turns on (high
// contrast, glass, felt, Red Hat); they are more than a third of its CSS.
// Rules that apply only under those themes are dropped from the bundle.
const unusedTheme = /\.pf-v6-theme-(high-contrast|glass|felt|redhat)\b/;
function dropUnusedThemes(): PostcssPlugin {
  return {
    postcssPlugin: 'bastion-drop-unused-patternfly-themes',
    Rule(rule) {
      const kept = rule.selectors.filter((selector) => !unusedTheme.test(selector));
      if (kept.length === 0) rule.remove();
      else if (kept.length < rule.selectors.length) rule.selectors = kept;
    },
  };
}

// The Go server (`bastion dev`) listens here by default.
const apiServer = 'http://127.0.0.1:3000';

export default defineConfig({
  base: '/',
  plugins: [react(), keepDistPlaceholder()],
  css: { postcss: { plugins: [dropUnusedThemes()] } },
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
  },
});
