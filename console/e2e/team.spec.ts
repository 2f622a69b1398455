import { expect, test } from '@playwright/test';
import { addMember, admin, apiAs, createProject, createUser, openDrawer, screenshot, signIn, unique, useSession } from './helpers';

test('links a team member and changes their role', async ({ page, baseURL }, testInfo) => {
  const api = await apiAs(baseURL!, admin.username, admin.password);
  const project = await createProject(api, unique(testInfo, 'team'));
  const dave = await createUser(api, unique(testInfo, 'dave'), { name: 'Dave Lister' });
  await useSession(page, api);

  await page.goto(`/project/${project.id}/team`);
  await page.getByRole('button', { name: 'New Team Member' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByRole('button', { name: 'Link' }).click();
  await expect(dialog.getByText('User is required')).toHaveCount(2);
  await dialog.getByRole('combobox', { name: 'User' }).selectOption({ label: `${dave.username} (Dave Lister)` });
  await dialog.getByRole('combobox', { name: 'Role' }).selectOption('task_runner');
  await dialog.getByRole('button', { name: 'Link' }).click();

  const role = page.getByRole('combobox', { name: `Role of ${dave.username}` });
  await expect(role).toHaveValue('task_runner');
  await screenshot(page, testInfo, 'team-linked');
  await role.selectOption('manager');
  await expect(role).toHaveValue('manager');
  await expect
    .poll(async () => {
      const team: { username: string; role: string }[] = await (await api.get(`/api/project/${project.id}/users`)).json();
      return team.find((m) => m.username === dave.username)?.role;
    })
    .toBe('manager');
  await page.reload();
  await expect(page.getByRole('combobox', { name: `Role of ${dave.username}` })).toHaveValue('manager');
});

test('a guest sees the read-only notice and no write buttons', async ({ page, baseURL }, testInfo) => {
  const api = await apiAs(baseURL!, admin.username, admin.password);
  const project = await createProject(api, unique(testInfo, 'guarded'));
  const guest = await createUser(api, unique(testInfo, 'guest'));
  await addMember(api, project.id, guest.id, 'guest');

  await signIn(page, guest.username, guest.password);
  await expect(page).toHaveURL(new RegExp(`/project/${project.id}/history$`));
  await expect(page.getByTestId('access-notice')).toHaveText(/You have read-only access/);

  await page.goto(`/project/${project.id}/team`);
  await expect(page.getByRole('row').filter({ hasText: guest.username })).toContainText('Guest');
  await expect(page.getByRole('button', { name: 'New Team Member' })).toHaveCount(0);
  await expect(page.getByRole('combobox')).toHaveCount(0);
  await expect(page.getByRole('button', { name: /^Remove / })).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Leave Project' })).toBeEnabled();
  await openDrawer(page);
  await expect(page.getByRole('link', { name: 'Team' })).toBeVisible();
  await expect(page.getByRole('link', { name: 'Settings' })).toHaveCount(0);
  await page.getByTestId('project-switcher').click();
  await expect(page.getByRole('menuitem', { name: 'New project' })).toHaveCount(0);
  await screenshot(page, testInfo, 'guest-team');

  // Settings is not theirs, even by address.
  await page.goto(`/project/${project.id}/settings`);
  await expect(page).toHaveURL(new RegExp(`/project/${project.id}/history$`));
});

test('a task runner is told they can run any tasks', async ({ page, baseURL }, testInfo) => {
  const api = await apiAs(baseURL!, admin.username, admin.password);
  const project = await createProject(api, unique(testInfo, 'runs'));
  const runner = await createUser(api, unique(testInfo, 'runner'));
  await addMember(api, project.id, runner.id, 'task_runner');

  await signIn(page, runner.username, runner.password);
  await expect(page.getByTestId('access-notice')).toHaveText(/You can run any tasks/);
});
