// Run all (issue #23 item 3): a view's templates, real bash scripts on a
// local git repository, each started as its own task in the view's order;
// the deploy and the template with a required question ask first.
import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import { admin, apiAs, createProject, screenshot, unique, useSession } from './helpers';
import { taskStatus } from './tasks-helpers';
import { gitRepository } from './repository';
import { createScenery, createTemplate } from './templates-helpers';

const script = { 'hello.sh': '#!/bin/bash\necho "hello from Run all"\n' };

interface TaskRow {
  id: number;
  template_id: number;
  build_task_id: number | null;
  environment: string;
}

async function tasksOf(api: APIRequestContext, projectId: number): Promise<TaskRow[]> {
  const res = await api.get(`/api/project/${projectId}/tasks`);
  expect(res.status(), await res.text()).toBe(200);
  return ((await res.json()) as TaskRow[]).sort((a, b) => a.id - b.id);
}

async function setTheme(page: Page, theme: 'light' | 'dark', path: string) {
  await page.evaluate((dark) => window.localStorage.setItem('darkMode', dark ? '1' : '0'), theme === 'dark');
  await page.goto(path);
}

test('Run all starts every template of a view in its order, asking the deploy and the survey first @desktop', async ({ page, baseURL }, testInfo) => {
  const api = await apiAs(baseURL!, admin.username, admin.password);
  const project = await createProject(api, unique(testInfo, 'run all'));
  const scenery = await createScenery(api, project.id, gitRepository(script));
  expect((await api.post(`/api/project/${project.id}/views`, { data: { title: 'Nightly', position: 0 } })).ok()).toBe(true);
  const views = (await (await api.get(`/api/project/${project.id}/views`)).json()) as { id: number; title: string }[];
  const viewId = views.find((v) => v.title === 'Nightly')!.id;
  const inView = { view_id: viewId, playbook: 'hello.sh' };
  const hello = await createTemplate(api, project.id, scenery, 'A hello', inView);
  const build = await createTemplate(api, project.id, scenery, 'B build', { ...inView, type: 'build', start_version: '1.0.0' });
  const deploy = await createTemplate(api, project.id, scenery, 'C deploy', { ...inView, type: 'deploy', build_template_id: build.id });
  const greet = await createTemplate(api, project.id, scenery, 'D greet', {
    ...inView,
    survey_vars: [{ name: 'who', title: 'Who', description: '', type: '', required: true }],
  });
  await createTemplate(api, project.id, scenery, 'Outside the view', { playbook: 'hello.sh' });

  // The deploy needs a successful build to pick.
  const res = await api.post(`/api/project/${project.id}/tasks`, { data: { template_id: build.id } });
  expect(res.status(), await res.text()).toBe(201);
  const firstBuild = ((await res.json()) as { id: number }).id;
  await expect.poll(() => taskStatus(api, project.id, firstBuild), { timeout: 120_000 }).toBe('success');

  await useSession(page, api);
  const path = `/project/${project.id}/views/${viewId}/templates`;
  await page.goto(path);
  await expect(page.getByRole('link', { name: 'D greet' })).toBeVisible({ timeout: 60_000 });
  await page.getByRole('button', { name: 'Run all' }).click();
  const dialog = page.getByRole('dialog', { name: 'Run all in Nightly' });
  await expect(dialog.getByRole('heading', { level: 3 })).toHaveText(['C deploy', 'D greet', 'Starting as they are']);
  await expect(dialog.getByRole('list', { name: 'Starting as they are' }).getByRole('listitem')).toHaveText(['A hello', 'B build']);
  await expect(dialog.getByRole('combobox', { name: 'Build version' })).toHaveValue(String(firstBuild));
  await dialog.getByRole('button', { name: 'Run all' }).click();
  await expect(dialog.getByText('Who is required')).toBeVisible();
  await dialog.getByLabel(/^Who/).fill('world');
  await screenshot(page, testInfo, 'runall-ask-light-desktop');

  await dialog.getByRole('button', { name: 'Run all' }).click();
  const results = dialog.getByRole('list', { name: 'Results' }).getByRole('listitem');
  await expect(results).toHaveCount(4);
  await expect(dialog.getByText('4 of 4 started')).toBeVisible();
  await expect(results).toHaveText([/^A hello: Task #\d+$/, /^B build: Task #\d+$/, /^C deploy: Task #\d+$/, /^D greet: Task #\d+$/]);
  await screenshot(page, testInfo, 'runall-results-light-desktop');

  // Four new tasks, one per template of the view, numbered in its order; the
  // template outside the view did not run.
  const started = (await tasksOf(api, project.id)).filter((t) => t.id !== firstBuild);
  expect(started.map((t) => t.template_id)).toEqual([hello.id, build.id, deploy.id, greet.id]);
  expect(started[2].build_task_id).toBe(firstBuild);
  expect(JSON.parse(started[3].environment)).toEqual({ who: 'world' });
  for (const task of started) {
    await expect.poll(() => taskStatus(api, project.id, task.id), { timeout: 120_000 }).toBe('success');
  }
  // A result's link opens that task's log.
  await results.nth(3).getByRole('link').click();
  await expect(page).toHaveURL(new RegExp(`\\?t=${started[3].id}$`));
  await expect(dialog).toHaveCount(0);

  // The asking dialog in the dark theme, and on a phone-sized screen in both.
  const shots: [theme: 'light' | 'dark', width: number, height: number, name: string][] = [
    ['dark', 1280, 800, 'desktop'],
    ['light', 800, 1000, 'mobile'],
    ['dark', 800, 1000, 'mobile'],
  ];
  for (const [theme, width, height, name] of shots) {
    await page.setViewportSize({ width, height });
    await setTheme(page, theme, path);
    await expect(page.getByRole('link', { name: 'D greet' })).toBeVisible();
    await page.getByRole('button', { name: 'Run all' }).click();
    await expect(dialog.getByRole('combobox', { name: 'Build version' })).toHaveValue(/\d+/);
    await screenshot(page, testInfo, `runall-ask-${theme}-${name}`);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await expect(dialog).toHaveCount(0);
  }
});
