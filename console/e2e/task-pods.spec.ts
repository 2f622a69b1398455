// Issue 23, item 1: where a task runs, edited in the project settings and
// in the template editor of a real `bastion dev` (started with an image
// list and a service account allowlist by global-setup.ts), and stored:
// the API reads back what the console saved. Screenshots in light and
// dark, at 1280×800 and on a phone, in one page session.
import { expect, test, type Page, type TestInfo } from '@playwright/test';
import { admin, apiAs, createProject, screenshot, unique, useSession } from './helpers';
import { gitRepository } from './repository';
import { createScenery, createTemplate } from './templates-helpers';

const views = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'mobile', width: 412, height: 915 },
] as const;

async function shootAll(page: Page, testInfo: TestInfo, name: string, path: string, ready: () => Promise<void>) {
  for (const view of views) {
    await page.setViewportSize(view);
    for (const theme of ['light', 'dark'] as const) {
      await page.evaluate((dark) => window.localStorage.setItem('darkMode', dark ? '1' : '0'), theme === 'dark');
      await page.goto(path);
      await ready();
      await screenshot(page, testInfo, `${name}-${view.name}-${theme}`);
    }
  }
  await page.setViewportSize(views[0]);
}

test('a project’s task pod settings and a template’s override are edited and stored @desktop', async ({ page, baseURL }, testInfo) => {
  const api = await apiAs(baseURL!, admin.username, admin.password);
  const project = await createProject(api, unique(testInfo, 'Pods'));
  const scenery = await createScenery(api, project.id, gitRepository({ 'hello.sh': 'echo hello\n' }));
  const template = await createTemplate(api, project.id, scenery, 'GPU training');
  await useSession(page, api);

  // The project's defaults, from the admin's lists only.
  await page.goto(`/project/${project.id}/settings`);
  const card = page.getByRole('form', { name: 'Where tasks run' });
  await expect(card.getByLabel('Runner image')).toBeEnabled();
  await card.getByLabel('Runner image').selectOption('ansible-gpu');
  await card.getByLabel('Service account').selectOption('deployer');
  await card.getByLabel('Node selector').fill('pool=automation');
  await card.getByLabel('Tolerations').fill('dedicated=automation:NoSchedule');
  await card.getByLabel('CPU request').fill('250m');
  await card.getByRole('button', { name: 'Save task pod settings' }).click();
  await expect(page.getByText('Task pod settings saved')).toBeVisible();
  let res = await api.get(`/api/project/${project.id}`);
  expect((await res.json()).task_pods).toEqual({
    node_selector: { pool: 'automation' },
    tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'automation', effect: 'NoSchedule', toleration_seconds: null }],
    resources: { requests: { cpu: '250m' }, limits: {} },
    runner_image: 'ansible-gpu',
    service_account: 'deployer',
  });

  // A limit below its request is refused with the server's words.
  await card.getByLabel('CPU limit').fill('100m');
  await card.getByRole('button', { name: 'Save task pod settings' }).click();
  await expect(card.getByText('the cpu limit 100m is below its request 250m')).toBeVisible();
  await card.getByLabel('CPU limit').fill('');

  await shootAll(page, testInfo, 'task-pods-project', `/project/${project.id}/settings`, async () => {
    const selector = page.getByRole('form', { name: 'Where tasks run' }).getByLabel('Node selector');
    await expect(selector).toHaveValue('pool=automation');
    // The page scrolls inside its frame: bring the settings into the picture.
    await selector.scrollIntoViewIfNeeded();
  });

  // The template overrides the node selector and a limit.
  const editor = `/project/${project.id}/templates/${template.id}/edit`;
  await page.goto(editor);
  await page.getByRole('button', { name: 'Where tasks run' }).click();
  await page.getByLabel('Node selector').fill('accelerator=nvidia');
  await page.getByLabel('Memory limit').fill('8Gi');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page).toHaveURL(new RegExp(`/templates/${template.id}$`));
  res = await api.get(`/api/project/${project.id}/templates/${template.id}`);
  const pods = (await res.json()).task_pods;
  expect(pods.node_selector).toEqual({ accelerator: 'nvidia' });
  expect(pods.resources).toEqual({ requests: {}, limits: { memory: '8Gi' } });
  expect(pods.service_account).toBe('');

  await shootAll(page, testInfo, 'task-pods-template', editor, async () => {
    await expect(page.getByLabel('Node selector')).toHaveValue('accelerator=nvidia');
    await page.getByRole('button', { name: 'Where tasks run' }).scrollIntoViewIfNeeded();
  });
});
