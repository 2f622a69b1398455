import { defineConfig, devices } from '@playwright/test';

// Browsers cannot be downloaded here, so Playwright drives Debian's chromium.
const chromium = {
  browserName: 'chromium' as const,
  launchOptions: {
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  },
};

export default defineConfig({
  testDir: 'e2e',
  outputDir: 'test-results',
  // Starts `bastion dev` unless BASTION_URL names a running server; see the file.
  globalSetup: './e2e/global-setup.ts',
  // Two workers on one server: a test spends most of its time waiting for
  // the browser or the server, so a second worker fills that time. The
  // specs do not get in each other's way: each test makes the projects and
  // users it works on, with names of its own (unique() in helpers.ts).
  workers: 2,
  forbidOnly: !!process.env.CI,
  // Each test signs in and renders PatternFly on a shared two-core machine.
  timeout: 180_000,
  expect: { timeout: 30_000 },
  reporter: 'list',
  use: {
    // Workers load this file again after globalSetup has set BASTION_URL.
    baseURL: process.env.BASTION_URL,
    headless: true,
    // The screens the features need are taken by the tests themselves
    // (helpers.ts screenshot); the automatic one is for a failure.
    screenshot: 'only-on-failure',
    // A trace records the DOM at every action: it doubled the suite's CPU
    // (docs/benchmarks.md "CI time") and CI keeps no files to open it from.
    // To debug a failure locally: PW_TRACE=retain-on-failure npm run e2e.
    trace: (process.env.PW_TRACE as 'retain-on-failure' | 'on' | undefined) ?? 'off',
  },
  projects: [
    {
      name: 'desktop',
      use: { ...devices['Desktop Chrome'], ...chromium, viewport: { width: 1280, height: 800 } },
    },
    {
      // 800 pixels: below the drawer's 960-pixel breakpoint (docs/features.md §9).
      name: 'mobile',
      // Tests tagged @desktop set their own viewport or measure the desktop
      // layout: the mobile project does not run them (rather than skip them).
      grepInvert: /@desktop/,
      use: { ...devices['Pixel 7'], ...chromium, viewport: { width: 800, height: 1000 } },
    },
  ],
});
