import { expect, test } from '@playwright/test';
import { admin, apiAs, createProject, createUser, openDrawer, screenshot, signIn, unique } from './helpers';

test('a wrong password says so, the right one opens the project page', async ({ page, baseURL }, testInfo) => {
  const api = await apiAs(baseURL!, admin.username, admin.password);
  const project = await createProject(api, unique(testInfo, 'home'));
  // A user of its own, so the failed attempt never counts against the admin.
  const user = await createUser(api, unique(testInfo, 'signin'));
  await api.post(`/api/project/${project.id}/users`, { data: { user_id: user.id, role: 'manager' } });

  await signIn(page, user.username, 'not-the-password');
  await expect(page.getByTestId('login-error')).toContainText('Incorrect login or password');
  await expect(page).toHaveURL(/\/auth\/login$/);
  await screenshot(page, testInfo, 'signin-wrong-password');

  await page.getByLabel(/^Password/).fill(user.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await expect(page).toHaveURL(new RegExp(`/project/${project.id}/history$`));
  await openDrawer(page);
  await expect(page.getByTestId('project-switcher')).toContainText(project.name);
});

test('a new user with no projects lands on the new project screen', async ({ page, baseURL }, testInfo) => {
  const api = await apiAs(baseURL!, admin.username, admin.password);
  const user = await createUser(api, unique(testInfo, 'newbie'), { can_create_project: true });

  await signIn(page, user.username, user.password);
  await expect(page).toHaveURL(/\/project\/new$/);
  await expect(page.getByRole('heading', { name: 'New project' })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Create Demo Project' })).toBeVisible();
});

test('sign-in help explains the bastion user commands', async ({ page }, testInfo) => {
  await page.goto('/auth/login');
  await page.getByRole('button', { name: "Don't have an account or can't sign in?" }).click();
  const dialog = page.getByRole('dialog');
  await expect(dialog.getByRole('textbox').first()).toHaveValue('bastion user list');
  await expect(dialog.getByRole('textbox').nth(2)).toHaveValue(/^bastion user add --admin .* --password [A-Za-z0-9]{10}$/);
  await screenshot(page, testInfo, 'signin-help');
});

// docs/features.md §2: the sign-in form is 300 pixels wide (on a narrower screen it may shrink).
test('the sign-in form is 300 pixels wide on a desktop @desktop', async ({ page }) => {
  await page.goto('/auth/login');
  const form = page.locator('form').filter({ has: page.getByRole('button', { name: 'Sign in', exact: true }) });
  await expect(form).toBeVisible();
  expect((await form.boundingBox())!.width).toBe(300);
});
