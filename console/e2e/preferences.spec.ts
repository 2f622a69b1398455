import { expect, test } from '@playwright/test';
import { admin, apiAs, createProject, openDrawer, unique, useSession } from './helpers';

test('dark mode and the language survive a reload', async ({ page, baseURL }, testInfo) => {
  const api = await apiAs(baseURL!, admin.username, admin.password);
  const project = await createProject(api, unique(testInfo, 'prefs'));
  await useSession(page, api);

  await page.goto(`/project/${project.id}/team`);
  await openDrawer(page);
  await page.getByText('Dark mode').click();
  await expect(page.locator('html')).toHaveClass(/\bpf-v6-theme-dark\b/);
  await page.getByTestId('language-menu').click();
  await page.getByRole('option', { name: 'Deutsch' }).click();
  await expect(page.getByRole('heading', { name: 'Team' })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Neues Teammitglied' })).toBeVisible();

  await page.reload();
  await expect(page.locator('html')).toHaveClass(/\bpf-v6-theme-dark\b/);
  await expect(page.locator('html')).toHaveAttribute('lang', 'de');
  await expect(page.getByRole('button', { name: 'Projekt verlassen' })).toBeVisible();
  await openDrawer(page);
  await expect(page.getByTestId('language-menu')).toHaveText('Deutsch');
  await expect(page.getByRole('link', { name: 'Einstellungen' })).toBeVisible();
});
