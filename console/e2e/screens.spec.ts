// A screenshot of every screen in the light and the dark theme, kept under
// test-results/ for a person to look at. The assertions only make sure each
// screenshot shows the screen it is named after.
import { expect, test, type Page, type TestInfo } from '@playwright/test';
import { addMember, admin, apiAs, createProject, createUser, openDrawer, screenshot, unique, useSession } from './helpers';

const themes = ['light', 'dark'] as const;

async function inTheme(page: Page, theme: (typeof themes)[number], path: string) {
  await page.evaluate((dark) => window.localStorage.setItem('darkMode', dark ? '1' : '0'), theme === 'dark');
  await page.goto(path);
}

async function shoot(page: Page, testInfo: TestInfo, name: string, theme: string) {
  await screenshot(page, testInfo, `${name}-${theme}`);
}

test('screens of a signed-out browser', async ({ page }, testInfo) => {
  await page.goto('/auth/login');
  for (const theme of themes) {
    await inTheme(page, theme, '/auth/login');
    await expect(page.getByRole('button', { name: 'Sign in', exact: true })).toBeVisible();
    await shoot(page, testInfo, 'signin', theme);
    await page.getByRole('button', { name: "Don't have an account or can't sign in?" }).click();
    await expect(page.getByRole('dialog')).toBeVisible();
    await shoot(page, testInfo, 'signin-help', theme);
  }
});

test('screens of a project', async ({ page, baseURL }, testInfo) => {
  const api = await apiAs(baseURL!, admin.username, admin.password);
  const project = await createProject(api, unique(testInfo, 'Screenshot project'));
  const member = await createUser(api, unique(testInfo, 'erin'), { name: 'Erin Example' });
  await addMember(api, project.id, member.id, 'task_runner');
  await useSession(page, api);
  await page.goto('/');

  for (const theme of themes) {
    await inTheme(page, theme, `/project/${project.id}/history`);
    await expect(page.getByRole('heading', { name: 'History' })).toBeVisible();
    await shoot(page, testInfo, 'project-history', theme);
    await openDrawer(page);
    await shoot(page, testInfo, 'drawer', theme);
    await page.getByTestId('user-menu').click();
    await expect(page.getByRole('menuitem', { name: 'Sign out' })).toBeVisible();
    await shoot(page, testInfo, 'user-menu', theme);
    await page.getByRole('menuitem', { name: 'Edit account' }).click();
    await expect(page.getByRole('dialog')).toBeVisible();
    await shoot(page, testInfo, 'account-dialog', theme);
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    await openDrawer(page);
    await page.getByTestId('user-menu').click();
    await page.getByRole('menuitem', { name: 'Change password' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Save' }).click();
    await expect(page.getByRole('dialog').getByText('Password is required')).toBeVisible();
    await shoot(page, testInfo, 'change-password-dialog', theme);

    await inTheme(page, theme, `/project/${project.id}/activity`);
    await expect(page.getByRole('heading', { name: 'Activity' })).toBeVisible();
    await expect(page.getByRole('row').nth(1)).toBeVisible();
    await shoot(page, testInfo, 'activity', theme);

    await inTheme(page, theme, `/project/${project.id}/team`);
    await expect(page.getByRole('combobox', { name: `Role of ${member.username}` })).toBeVisible();
    await shoot(page, testInfo, 'team', theme);
    await page.getByRole('button', { name: 'New Team Member' }).click();
    await expect(page.getByRole('dialog')).toBeVisible();
    await shoot(page, testInfo, 'team-member-dialog', theme);

    await inTheme(page, theme, `/project/${project.id}/settings`);
    await expect(page.getByRole('heading', { name: 'Project settings' })).toBeVisible();
    await shoot(page, testInfo, 'settings', theme);
    await page.getByRole('button', { name: 'Delete project' }).click();
    await expect(page.getByRole('dialog')).toBeVisible();
    await shoot(page, testInfo, 'delete-project-dialog', theme);

    await inTheme(page, theme, `/project/${project.id}/history`);
    await openDrawer(page);
    await page.getByTestId('project-switcher').click();
    await page.getByRole('menuitem', { name: 'Restore project' }).click();
    await expect(page.getByRole('dialog')).toBeVisible();
    await shoot(page, testInfo, 'restore-dialog', theme);

    await inTheme(page, theme, '/project/new');
    await expect(page.getByRole('heading', { name: 'New project' })).toBeVisible();
    await shoot(page, testInfo, 'new-project', theme);

    await inTheme(page, theme, '/users');
    await expect(page.getByRole('row').filter({ hasText: member.username })).toBeVisible();
    await shoot(page, testInfo, 'users', theme);
    await page.getByRole('button', { name: 'New user' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Create' }).click();
    await expect(page.getByRole('dialog').getByText(/^Name is required/)).toBeVisible();
    await shoot(page, testInfo, 'user-dialog', theme);
  }
});

test('the startup error screen', async ({ page, baseURL }, testInfo) => {
  const api = await apiAs(baseURL!, admin.username, admin.password);
  await useSession(page, api);
  await page.goto('/auth/login');
  // The real server does not fail on demand; this screenshot alone stands in
  // a failing /api/projects. The behaviour is tested in App.test.tsx.
  await page.route('**/api/projects', (route) =>
    route.fulfill({ status: 503, contentType: 'application/json', body: '{"error":"the cluster is unreachable"}' }),
  );
  for (const theme of themes) {
    await inTheme(page, theme, '/');
    await expect(page.getByRole('heading', { name: 'The console could not start' })).toBeVisible({ timeout: 30_000 });
    await shoot(page, testInfo, 'startup-error', theme);
  }
});
