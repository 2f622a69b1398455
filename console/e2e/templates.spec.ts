// The template screens against the real server (issue 8, items 1-3): a
// template made in the editor on a local git repository, run from the list;
// views added, renamed, dragged and deleted; column settings kept.
import { expect, test, type Page } from '@playwright/test';
import { admin, apiAs, createProject, screenshot, unique, useSession } from './helpers';
import { gitRepository } from './repository';
import { createScenery, createTemplate } from './templates-helpers';

const script = { 'hello.sh': '#!/bin/bash\necho "hello from the templates test"\n' };

// PatternFly names the tabs' wrapper, not the tablist itself.
const tabTitles = (page: Page) => page.getByRole('tablist').getByRole('tab').allInnerTexts();

test('a template made in the editor on a local repository runs from the list', async ({ page, baseURL }, testInfo) => {
  const api = await apiAs(baseURL!, admin.username, admin.password);
  const project = await createProject(api, unique(testInfo, 'templates'));
  const scenery = await createScenery(api, project.id, gitRepository(script));
  const name = unique(testInfo, 'Say hello');
  await useSession(page, api);

  await page.goto(`/project/${project.id}/templates`);
  await expect(page.getByText('No templates yet')).toBeVisible();
  await page.getByRole('button', { name: 'New template' }).click();
  await page.getByRole('menuitem', { name: 'Bash Script' }).click();
  await expect(page).toHaveURL(new RegExp(`/project/${project.id}/templates/new/edit\\?app=bash$`));
  await expect(page.getByRole('heading', { name: 'New template' })).toBeVisible();
  await expect(page.getByLabel('App', { exact: true })).toHaveValue('bash');

  // Nothing filled: the spec's messages, and nothing saved.
  await page.getByRole('button', { name: 'Create' }).click();
  await expect(page.getByText(/^Name is required/)).toBeVisible();
  await expect(page.getByText(/^Playbook filename is required/)).toBeVisible();
  await expect(page.getByText(/^Repository is required/)).toBeVisible();
  await expect(page.getByText(/^Environment is required/)).toBeVisible();

  await page.getByLabel(/^Name/).fill(name);
  await expect(page.getByLabel(/^Playbook filename/)).toHaveAttribute('placeholder', 'site.yml');
  await page.getByLabel(/^Playbook filename/).fill('hello.sh');
  await page.getByLabel(/^Repository/).selectOption({ label: scenery.names.repository });
  await page.getByLabel(/^Inventory/).selectOption({ label: scenery.names.inventory });
  await page.getByLabel(/^Environment/).selectOption({ label: scenery.names.environment });
  // A cron the server refuses stops the save, with the server's words.
  await page.getByLabel(/^Cron/).fill('every day');
  await page.getByRole('button', { name: 'Create' }).click();
  await expect(page.getByText(/^Cron: /)).toBeVisible();
  await expect(page).toHaveURL(/\/new\/edit/);
  await page.getByLabel(/^Cron/).fill('0 0 * * *');
  await page.getByLabel('Run only on a new commit of the repository').check({ force: true });
  await page.getByRole('button', { name: 'Create' }).click();

  // The detail: settings, the schedule, the empty history.
  await expect(page.getByRole('heading', { name })).toBeVisible();
  await expect(page).toHaveURL(new RegExp(`/project/${project.id}/templates/\\d+$`));
  await expect(page.getByText('Only on a new commit of Scripts')).toBeVisible();
  await expect(page.getByRole('definition').filter({ hasText: 'hello.sh' })).toBeVisible();
  const templateId = Number(/templates\/(\d+)$/.exec(page.url())![1]);
  const schedules = await (await api.get(`/api/project/${project.id}/templates/${templateId}/schedules`)).json();
  expect(schedules).toMatchObject([{ cron_format: '0 0 * * *', repository_id: scenery.repositoryId }]);

  // The list shows it, never run, and runs it.
  await page.getByRole('link', { name: 'Task Templates' }).first().click();
  const row = page.getByRole('row').filter({ has: page.getByRole('link', { name }) });
  await expect(row).toContainText('Not launched');
  await expect(row).toContainText('hello.sh');
  await expect(row.getByRole('img', { name: 'Bash Script' })).toBeVisible();
  await row.getByRole('button', { name: `Run ${name}` }).click();
  const dialog = page.getByRole('dialog', { name: `Run ${name}` });
  await dialog.getByRole('button', { name: 'Run', exact: true }).click();
  await expect(dialog).toBeHidden();
  await page.goto(`/project/${project.id}/templates`);
  await expect(row.getByTestId('task-status')).toHaveText('Success', { timeout: 120_000 });
  await expect(row).not.toContainText('Not launched');

  // Expanded, the row lists the run.
  await row.getByRole('button', { name: `Last tasks of ${name}` }).click();
  const last = page.getByRole('grid', { name: `Last tasks of ${name}` });
  // One run, one link to its log (below 992 pixels the header row is hidden).
  await expect(last.getByRole('link', { name: /^#\d+$/ })).toHaveCount(1);
  await expect(last.getByTestId('task-status')).toHaveText('Success');
  await screenshot(page, testInfo, 'templates-list-ran');
});

test('views are added, renamed, reordered by dragging and deleted', async ({ page, baseURL }, testInfo) => {
  const api = await apiAs(baseURL!, admin.username, admin.password);
  const project = await createProject(api, unique(testInfo, 'views'));
  await useSession(page, api);
  await page.goto(`/project/${project.id}/templates`);
  const dialog = page.getByRole('dialog', { name: 'Edit views' });

  // Add two; an empty title does not save.
  await page.getByRole('button', { name: 'Edit views' }).click();
  await dialog.getByRole('button', { name: 'Add view' }).click();
  await dialog.getByRole('button', { name: 'Save' }).click();
  await expect(dialog.getByText('Title is required')).toBeVisible();
  await dialog.getByRole('textbox', { name: 'Title of view 1' }).fill('Alpha');
  await dialog.getByRole('button', { name: 'Add view' }).click();
  await dialog.getByRole('textbox', { name: 'Title of view 2' }).fill('Beta');
  await dialog.getByRole('button', { name: 'Save' }).click();
  await expect(dialog).toBeHidden();
  await expect.poll(() => tabTitles(page)).toEqual(['All', 'Alpha', 'Beta']);

  // Rename Alpha and drag Beta above it.
  await page.getByRole('button', { name: 'Edit views' }).click();
  await dialog.getByRole('textbox', { name: 'Title of view 1' }).fill('Alpha prime');
  const items = dialog.getByTestId('view-item');
  await items.nth(1).getByTestId('view-drag-handle').dragTo(items.nth(0));
  await expect(dialog.getByRole('textbox', { name: 'Title of view 1' })).toHaveValue('Beta');
  await screenshot(page, testInfo, 'templates-edit-views');
  await dialog.getByRole('button', { name: 'Save' }).click();
  await expect(dialog).toBeHidden();
  await expect.poll(() => tabTitles(page)).toEqual(['All', 'Beta', 'Alpha prime']);
  const views: { title: string; position: number }[] = await (await api.get(`/api/project/${project.id}/views`)).json();
  expect(views.map((v) => [v.title, v.position])).toEqual([
    ['Beta', 0],
    ['Alpha prime', 1],
  ]);

  // The tab opened is remembered.
  await page.getByRole('tab', { name: 'Alpha prime' }).click();
  await expect(page).toHaveURL(/\/views\/\d+\/templates$/);
  // The URL changes before the list renders and remembers the view: wait
  // for the setting itself, or a loaded machine reloads too early.
  const viewId = /\/views\/(\d+)\//.exec(page.url())![1];
  await expect
    .poll(() => page.evaluate((key) => window.localStorage.getItem(key), `project${project.id}__lastVisitedViewId`))
    .toBe(viewId);
  await page.goto(`/project/${project.id}/templates`);
  await expect(page.getByRole('tab', { name: 'Alpha prime' })).toHaveAttribute('aria-selected', 'true');

  // Delete the open view: the list goes back to All.
  await page.getByRole('button', { name: 'Edit views' }).click();
  await dialog.getByRole('button', { name: 'Delete view 2' }).click();
  await dialog.getByRole('button', { name: 'Save' }).click();
  await expect(dialog).toBeHidden();
  await expect.poll(() => tabTitles(page)).toEqual(['All', 'Beta']);
  await expect(page).toHaveURL(new RegExp(`/project/${project.id}/templates$`));
});

test('column settings survive a reload', async ({ page, baseURL }, testInfo) => {
  const api = await apiAs(baseURL!, admin.username, admin.password);
  const project = await createProject(api, unique(testInfo, 'columns'));
  const scenery = await createScenery(api, project.id, gitRepository(script));
  await createTemplate(api, project.id, scenery, 'Column check');
  await useSession(page, api);
  await page.goto(`/project/${project.id}/templates`);
  // A column's cells carry its name: below 992 pixels rows stack and the header row is hidden.
  const cells = (column: string) => page.locator(`td[data-label="${column}"]`);
  await expect(cells('Repository')).toHaveText('Scripts');

  await page.getByRole('button', { name: 'Columns' }).click();
  const sheet = page.getByRole('dialog', { name: 'Column settings' });
  await sheet.getByRole('checkbox', { name: 'Repository' }).uncheck();
  await sheet.getByRole('checkbox', { name: 'Playbook' }).uncheck();
  await sheet.getByRole('button', { name: 'Done' }).click();
  await expect(cells('Repository')).toHaveCount(0);

  await page.reload();
  await expect(page.getByRole('link', { name: 'Column check' })).toBeVisible();
  await expect(cells('Repository')).toHaveCount(0);
  await expect(cells('Playbook')).toHaveCount(0);
  await expect(cells('Environment')).toHaveText('Quiet');
  await page.getByRole('button', { name: 'Columns' }).click();
  await expect(sheet.getByRole('checkbox', { name: 'Repository' })).not.toBeChecked();
  await expect(sheet.getByRole('checkbox', { name: 'Environment' })).toBeChecked();
});

test('screens of the templates list and the template editor', async ({ page, baseURL }, testInfo) => {
  const api = await apiAs(baseURL!, admin.username, admin.password);
  const project = await createProject(api, unique(testInfo, 'template screens'));
  const scenery = await createScenery(api, project.id, gitRepository(script));
  const build = await createTemplate(api, project.id, scenery, 'Build the app', { type: 'build', start_version: '1.0.0' });
  await createTemplate(api, project.id, scenery, 'Deploy the app', { type: 'deploy', build_template_id: build.id });
  await createTemplate(api, project.id, scenery, 'Plan the network', { app: 'terraform', playbook: '.' });
  await createTemplate(api, project.id, scenery, 'Say hello', { app: '', playbook: 'site.yml' });
  await api.post(`/api/project/${project.id}/views`, { data: { title: 'Production', position: 0 } });
  await useSession(page, api);

  for (const theme of ['light', 'dark'] as const) {
    await page.goto('/');
    await page.evaluate((dark) => window.localStorage.setItem('darkMode', dark ? '1' : '0'), theme === 'dark');
    await page.goto(`/project/${project.id}/templates`);
    // The first screen after sign-in loads the console's chunks: slow on a busy machine.
    await expect(page.getByRole('link', { name: 'Say hello' })).toBeVisible({ timeout: 60_000 });
    await expect(page.getByRole('row').filter({ hasText: 'Plan the network' })).toContainText('Not launched');
    await screenshot(page, testInfo, `templates-list-${theme}`);

    await page.goto(`/project/${project.id}/templates/${build.id}/edit`);
    await expect(page.getByRole('heading', { name: 'Edit template' })).toBeVisible();
    await expect(page.getByLabel(/^Start version/)).toHaveValue('1.0.0');
    await page.getByLabel(/^Name/).fill('');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect(page.getByText(/^Name is required/)).toBeVisible();
    await screenshot(page, testInfo, `templates-editor-${theme}`);
  }
});
