import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import react from '@vitejs/plugin-react';
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

// The Go server (`bastion dev`) listens here by default.
const apiServer = 'http://127.0.0.1:3000';

export default defineConfig({
  base: '/',
  plugins: [react(), keepDistPlaceholder()],
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
