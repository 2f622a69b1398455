// Approvals (docs/features.md, "Beyond the anchors"): a task runner starts a
// task of a template that requires approval; it waits, and nothing runs,
// until another user, an owner of the project, approves it in the task log;
// a second task is rejected with a reason. One page session per user; the
// screenshots switch theme and viewport inside the test.
import { expect, test, type Browser, type Page, type TestInfo } from '@playwright/test';
import { addMember, admin, apiAs, createProject, createUser, screenshot, unique, useSession } from './helpers';
import { gitRepository } from './repository';
import { createTemplate, sceneFor, startTask, taskStatus } from './tasks-helpers';

const logDialog = (page: Page) => page.getByRole('dialog', { name: /^Task #/ });
const status = (page: Page) => logDialog(page).getByTestId('task-detail-status');
const panel = (page: Page) => logDialog(page).getByTestId('approval-panel');

async function pageOf(browser: Browser, baseURL: string, user: { username: string; password: string }) {
  const api = await apiAs(baseURL, user.username, user.password);
  const page = await (await browser.newContext({ baseURL, viewport: { width: 1280, height: 800 } })).newPage();
  await useSession(page, api);
  return { api, page };
}

/** Screenshots of the open log in light and dark, at 1280×800 and on a phone-sized screen. */
async function shootAll(page: Page, testInfo: TestInfo, path: string) {
  await page.goto(path); // localStorage needs the console's origin
  for (const [size, viewport] of [['desktop', { width: 1280, height: 800 }], ['mobile', { width: 412, height: 915 }]] as const) {
    await page.setViewportSize(viewport);
    for (const theme of ['light', 'dark'] as const) {
      await page.evaluate((dark) => window.localStorage.setItem('darkMode', dark ? '1' : '0'), theme === 'dark');
      await page.goto(path);
      await expect(panel(page)).toBeVisible();
      await screenshot(page, testInfo, `approval-${size}-${theme}`);
    }
  }
  await page.setViewportSize({ width: 1280, height: 800 });
}

test('a task runner’s task waits for approval; another owner approves it and it runs, or rejects one with a reason @desktop', async ({
  browser,
  baseURL,
}, testInfo) => {
  const root = await apiAs(baseURL!, admin.username, admin.password);
  const project = await createProject(root, unique(testInfo, 'Approvals'));
  const scene = await sceneFor(root, project.id, gitRepository({ 'hello.sh': '#!/bin/bash\necho "the approved run"\n' }));
  const template = await createTemplate(root, scene, { name: 'Prod deploy', app: 'bash', playbook: 'hello.sh' });
  const put = await root.put(`/api/project/${project.id}/templates/${template.id}`, {
    data: { id: template.id, name: 'Prod deploy', app: 'bash', playbook: 'hello.sh', type: '', arguments: '[]', survey_vars: [],
      repository_id: scene.repositoryId, environment_id: scene.environmentId, inventory_id: null, require_approval: true },
  });
  expect(put.status(), await put.text()).toBe(204);
  const runner = await createUser(root, unique(testInfo, 'runner'), { name: 'Rita Runner' });
  const owner = await createUser(root, unique(testInfo, 'owner'), { name: 'Otto Owner' });
  await addMember(root, project.id, runner.id, 'task_runner');
  await addMember(root, project.id, owner.id, 'owner');

  // The task runner starts it: it waits, and they cannot approve it.
  const starter = await pageOf(browser, baseURL!, runner);
  const taskId = await startTask(starter.api, project.id, { template_id: template.id });
  const path = `/project/${project.id}/history?t=${taskId}`;
  await starter.page.goto(path);
  await expect(status(starter.page)).toHaveText('Waiting confirmation');
  await expect(panel(starter.page)).toContainText('Waiting for approval');
  await expect(panel(starter.page)).toContainText('You started this task: another project owner must approve it.');
  await expect(logDialog(starter.page).getByRole('button', { name: /Approve|Reject|Confirm/ })).toHaveCount(0);

  // The owner approves it: it runs to its end.
  const approver = await pageOf(browser, baseURL!, owner);
  await shootAll(approver.page, testInfo, path);
  await approver.page.goto(path);
  await panel(approver.page).getByRole('button', { name: 'Approve' }).click();
  await expect.poll(() => taskStatus(root, project.id, taskId), { timeout: 120_000 }).toBe('success');
  await expect(status(approver.page)).toHaveText('Success');
  await expect(logDialog(approver.page).getByRole('log')).toContainText('the approved run');
  await expect(panel(approver.page)).toHaveCount(0);
  // The starter's log follows it live.
  await expect(status(starter.page)).toHaveText('Success');

  // A second task, rejected with a reason: stopped, and its message says why.
  const second = await startTask(starter.api, project.id, { template_id: template.id });
  await approver.page.goto(`/project/${project.id}/history?t=${second}`);
  await panel(approver.page).getByRole('button', { name: 'Reject' }).click();
  await approver.page.getByLabel('Reason').fill('change freeze');
  await panel(approver.page).getByRole('button', { name: 'Reject task' }).click();
  await expect(status(approver.page)).toHaveText('Stopped');
  await expect(logDialog(approver.page).getByTestId('task-message')).toContainText('Rejected by Otto Owner');
  await expect(logDialog(approver.page).getByTestId('task-message')).toContainText('change freeze');

  // The project's events name the approver.
  const events = (await (await root.get(`/api/project/${project.id}/events/last`)).json()) as { description: string; username: string }[];
  expect(events.some((e) => e.username === owner.username && e.description.includes(`Task ${taskId} of Prod deploy approved by Otto Owner`))).toBe(true);
  expect(events.some((e) => e.username === owner.username && e.description.includes(`Task ${second} of Prod deploy rejected by Otto Owner`))).toBe(true);
});
