import { expect, test } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { addMember, admin, apiAs, clickAndSeeSnackbar, createProject, createUser, openDrawer, screenshot, unique, useSession } from './helpers';

test('creates a project and opens it', async ({ page, baseURL }, testInfo) => {
  const api = await apiAs(baseURL!, admin.username, admin.password);
  await useSession(page, api);
  const name = unique(testInfo, 'created');

  await page.goto('/project/new');
  await page.getByRole('button', { name: 'Create', exact: true }).click();
  await expect(page.getByText('Project name is required')).toBeVisible();
  await page.getByLabel(/^Project name/).fill(name);
  await page.getByLabel('Max parallel tasks').fill('x');
  await expect(page.getByText('Must be integer')).toBeVisible();
  await page.getByLabel('Max parallel tasks').fill('2');
  await clickAndSeeSnackbar(page, page.getByRole('button', { name: 'Create', exact: true }), `Project ${name} created`);
  await expect(page).toHaveURL(/\/project\/\d+\/history$/);
  await openDrawer(page);
  await expect(page.getByTestId('project-switcher')).toContainText(name);
  const id = Number(/\/project\/(\d+)\//.exec(page.url())![1]);
  const saved = await (await api.get(`/api/project/${id}`)).json();
  expect(saved).toMatchObject({ name, max_parallel_tasks: 2 });
});

// Needs the demo content (POST /projects {"demo": true}) and the templates
// API: it checks that the demo project has templates.
test('creates a demo project with the demo content', async ({ page, baseURL }, testInfo) => {
  const api = await apiAs(baseURL!, admin.username, admin.password);
  await useSession(page, api);
  const name = unique(testInfo, 'demo');

  await page.goto('/project/new');
  await page.getByLabel(/^Project name/).fill(name);
  await clickAndSeeSnackbar(page, page.getByRole('button', { name: 'Create Demo Project' }), `Project ${name} created`);
  await expect(page).toHaveURL(/\/project\/\d+\/history$/);
  const id = Number(/\/project\/(\d+)\//.exec(page.url())![1]);
  const templates = await api.get(`/api/project/${id}/templates`);
  expect(templates.status()).toBe(200);
  expect((await templates.json()).length).toBeGreaterThan(0);
});

test('switches projects with the switcher', async ({ page, baseURL }, testInfo) => {
  const api = await apiAs(baseURL!, admin.username, admin.password);
  const first = await createProject(api, unique(testInfo, 'Alpha one'));
  const second = await createProject(api, unique(testInfo, 'Beta two'));
  await useSession(page, api);

  await page.goto(`/project/${first.id}/history`);
  await openDrawer(page);
  await page.getByTestId('project-switcher').click();
  await expect(page.getByRole('menuitem', { name: second.name })).toContainText('BT');
  await screenshot(page, testInfo, 'project-switcher');
  await page.getByRole('menuitem', { name: second.name }).click();
  await expect(page).toHaveURL(new RegExp(`/project/${second.id}/history$`));

  // The base page now opens the project last used.
  await page.goto('/');
  await expect(page).toHaveURL(new RegExp(`/project/${second.id}/history$`));
});

test('backs up a project and restores it as a new one', async ({ page, baseURL }, testInfo) => {
  const api = await apiAs(baseURL!, admin.username, admin.password);
  const project = await createProject(api, unique(testInfo, 'backed up'));
  await useSession(page, api);

  await page.goto(`/project/${project.id}/settings`);
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Back up project' }).click(),
  ]);
  expect(download.suggestedFilename()).toMatch(new RegExp(`^backup-project-${project.id}-\\d{8}-\\d{6}\\.json$`));
  const file = testInfo.outputPath(download.suggestedFilename());
  await download.saveAs(file);
  expect(JSON.parse(readFileSync(file, 'utf8')).meta.name).toBe(project.name);

  await openDrawer(page);
  await page.getByTestId('project-switcher').click();
  await page.getByRole('menuitem', { name: 'Restore project' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.locator('input[type=file]').setInputFiles(file);
  await screenshot(page, testInfo, 'restore-dialog');
  await dialog.getByRole('button', { name: 'Restore' }).click();

  await expect(page.getByText(`Project ${project.name} restored`)).toBeVisible();
  await expect(page).toHaveURL(/\/project\/\d+\/history$/);
  const restoredId = Number(/\/project\/(\d+)\//.exec(page.url())![1]);
  expect(restoredId).not.toBe(project.id);
  const projects: { id: number; name: string }[] = await (await api.get('/api/projects')).json();
  expect(projects.filter((p) => p.name === project.name).map((p) => p.id).sort()).toEqual([project.id, restoredId].sort());
});

test('edits and deletes a project from its settings', async ({ page, baseURL }, testInfo) => {
  // An owner of these three projects only: which project comes first in
  // their list cannot change while other workers create projects.
  const admins = await apiAs(baseURL!, admin.username, admin.password);
  const owner = await createUser(admins, unique(testInfo, 'olive'));
  const keep = await createProject(admins, unique(testInfo, 'kept b'));
  const project = await createProject(admins, unique(testInfo, 'doomed'));
  // Made later but first by name: the choice goes by name, not by id.
  const first = await createProject(admins, unique(testInfo, 'kept a'));
  for (const p of [keep, project, first]) await addMember(admins, p.id, owner.id, 'owner');
  const api = await apiAs(baseURL!, owner.username, owner.password);
  await useSession(page, api);

  await page.goto(`/project/${project.id}/settings`);
  await page.getByLabel(/^Project name/).fill(`${project.name}-renamed`);
  await clickAndSeeSnackbar(page, page.getByRole('button', { name: 'Save', exact: true }), `Project ${project.name}-renamed saved`);

  await page.getByRole('button', { name: 'Delete project' }).click();
  await clickAndSeeSnackbar(page, page.getByRole('dialog').getByRole('button', { name: 'Delete' }), `Project ${project.name}-renamed deleted`);
  // The first remaining project, by name as the switcher lists them, is selected.
  const projects: { id: number; name: string }[] = await (await api.get('/api/projects')).json();
  expect(projects.map((p) => p.id).sort()).toEqual([keep.id, first.id].sort());
  const [firstByName] = projects.sort((a, b) => a.name.localeCompare(b.name, undefined, { sensitivity: 'base' }) || a.id - b.id);
  expect(firstByName.id).toBe(first.id);
  await expect(page).toHaveURL(new RegExp(`/project/${first.id}/history$`));
});
