import { expect, test, type Page, type TestInfo } from '@playwright/test';

async function screenshot(page: Page, testInfo: TestInfo, name: string) {
  await page.screenshot({ path: testInfo.outputPath(`${name}.png`), fullPage: true });
}

test('the home page shows the product name and the server version', async ({ page }, testInfo) => {
  await page.goto('/');

  await expect(page.getByRole('link', { name: 'Bastion' })).toBeVisible();
  await expect(page.getByTestId('app-version')).toHaveText(/\d+\.\d+/);
  await screenshot(page, testInfo, 'home');
});

test('a deep link is served the console and routed on the client', async ({ page }, testInfo) => {
  await page.goto('/project/1/history');

  await expect(page.getByTestId('app-version')).toHaveText(/\d+\.\d+/);
  await expect(page.getByTestId('current-path')).toHaveText('/project/1/history');
  await screenshot(page, testInfo, 'deep-link');
});

test('the stored dark mode choice applies the PatternFly dark theme', async ({ page }, testInfo) => {
  await page.addInitScript(() => window.localStorage.setItem('darkMode', '1'));
  await page.goto('/');

  await expect(page.getByTestId('app-version')).toBeVisible();
  await expect(page.locator('html')).toHaveClass(/\bpf-v6-theme-dark\b/);
  await screenshot(page, testInfo, 'dark-mode');
});
