import { expect, test } from '@playwright/test';
import { admin, apiAs, clickAndSeeSnackbar, screenshot, unique, useSession } from './helpers';

test('an admin creates, edits and deletes a user', async ({ page, baseURL }, testInfo) => {
  const api = await apiAs(baseURL!, admin.username, admin.password);
  await useSession(page, api);
  const username = unique(testInfo, 'carol');

  await page.goto('/users');
  await expect(page.getByRole('heading', { name: 'Users' })).toBeVisible();
  await page.getByRole('button', { name: 'New user' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByRole('button', { name: 'Create' }).click();
  await expect(dialog.getByText('Email is required')).toBeVisible();
  await screenshot(page, testInfo, 'user-dialog-invalid');
  await dialog.getByLabel(/^Name/).fill('Carol Danvers');
  await dialog.getByLabel(/^Username/).fill(username);
  await dialog.getByLabel(/^Email/).fill(`${username}@example.com`);
  await dialog.getByLabel(/^Password/).fill('pw-carol-1');
  await clickAndSeeSnackbar(page, dialog.getByRole('button', { name: 'Create' }), `User ${username} created`);
  const row = page.getByRole('row').filter({ hasText: username });
  await expect(row).toContainText('Carol Danvers');

  await row.getByRole('button', { name: `Actions for ${username}` }).click();
  await page.getByRole('menuitem', { name: 'Edit' }).click();
  await page.getByRole('dialog').getByLabel(/^Name/).fill('Carol Marvel');
  await page.getByRole('dialog').getByLabel('Send alerts').check();
  await clickAndSeeSnackbar(page, page.getByRole('dialog').getByRole('button', { name: 'Save' }), `User ${username} saved`);
  await expect(row).toContainText('Carol Marvel');
  await expect(row.getByRole('img', { name: 'Alert' })).toBeVisible();

  await row.getByRole('button', { name: `Actions for ${username}` }).click();
  await page.getByRole('menuitem', { name: 'Delete' }).click();
  await clickAndSeeSnackbar(page, page.getByRole('dialog').getByRole('button', { name: 'Delete' }), `User ${username} deleted`);
  await expect(page.getByRole('row').filter({ hasText: username })).toHaveCount(0);

  const users: { username: string }[] = await (await api.get('/api/users')).json();
  expect(users.map((u) => u.username)).not.toContain(username);
});

test('an admin cannot delete their own row', async ({ page, baseURL }) => {
  const api = await apiAs(baseURL!, admin.username, admin.password);
  await useSession(page, api);
  await page.goto('/users');
  await page.getByRole('button', { name: 'Actions for admin' }).click();
  await expect(page.getByRole('menuitem', { name: 'Delete' })).toBeDisabled();
});
