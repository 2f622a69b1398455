// History's charts (docs/features.md, "Beyond the anchors"): real bash
// tasks on `bastion dev` (three that succeed, one that fails, one stopped)
// show up in the tasks-per-day chart and in a template's duration trend,
// with screenshots in both themes on a desktop and a phone (it sets its
// own viewports, so only the desktop project runs it: @desktop).
import { expect, test, type Page } from '@playwright/test';
import { admin, apiAs, createProject, screenshot, unique, useSession } from './helpers';
import { gitRepository } from './repository';
import { createTemplate, sceneFor, startTask, taskStatus } from './tasks-helpers';

const scripts = {
  'ok.sh': '#!/bin/bash\necho "all good"\nsleep 1\n',
  'fail.sh': '#!/bin/bash\necho "about to fail" >&2\nexit 3\n',
  'slow.sh': '#!/bin/bash\nfor i in $(seq 1 600); do echo "tick $i"; sleep 1; done\n',
};

const viewports = { desktop: { width: 1280, height: 800 }, mobile: { width: 390, height: 844 } };

async function inTheme(page: Page, dark: boolean, path: string) {
  await page.evaluate((d) => window.localStorage.setItem('darkMode', d ? '1' : '0'), dark);
  await page.goto(path);
}

test('History charts count real tasks per day by result and plot a template’s run durations; screenshots @desktop', async ({
  page,
  baseURL,
}, testInfo) => {
  test.setTimeout(240_000);
  const api = await apiAs(baseURL!, admin.username, admin.password);
  const project = await createProject(api, unique(testInfo, 'Charts'));
  const scene = await sceneFor(api, project.id, gitRepository(scripts));
  const ok = await createTemplate(api, scene, { name: 'Quick check', app: 'bash', playbook: 'ok.sh' });
  const fails = await createTemplate(api, scene, { name: 'Broken check', app: 'bash', playbook: 'fail.sh' });
  const slow = await createTemplate(api, scene, { name: 'Slow job', app: 'bash', playbook: 'slow.sh' });

  const finished: number[] = [];
  for (let i = 0; i < 3; i++) finished.push(await startTask(api, project.id, { template_id: ok.id }));
  finished.push(await startTask(api, project.id, { template_id: fails.id }));
  const stopped = await startTask(api, project.id, { template_id: slow.id });
  await expect.poll(() => taskStatus(api, project.id, stopped), { timeout: 60_000 }).toBe('running');
  expect((await api.post(`/api/project/${project.id}/tasks/${stopped}/stop`, { data: {} })).status()).toBe(204);
  for (const id of [...finished, stopped]) {
    await expect.poll(() => taskStatus(api, project.id, id), { timeout: 120_000 }).toMatch(/^(success|error|stopped)$/);
  }
  expect(await Promise.all(finished.map((id) => taskStatus(api, project.id, id)))).toEqual(['success', 'success', 'success', 'error']);

  await useSession(page, api);
  await page.setViewportSize(viewports.desktop);
  await page.goto(`/project/${project.id}/history`);
  const daily = page.getByTestId('daily-chart');
  await expect(daily.getByTestId('daily-totals')).toHaveText('Total: 5 · Success: 3 · Failed: 1 · Stopped: 1');
  // The chart drew its bars: today's column has one per result.
  await expect(daily.getByRole('img', { name: 'Tasks per day' })).toBeVisible();
  await expect(daily.locator('svg path[role="presentation"]')).not.toHaveCount(0);

  const trend = page.getByTestId('duration-chart');
  await trend.getByLabel('Template').selectOption({ label: ok.name });
  await expect(trend.getByTestId('duration-median')).toContainText('Runs shown: 3 · Median:');
  await expect(trend.getByRole('img', { name: 'Duration of recent runs' })).toBeVisible();
  await expect(trend.getByRole('button', { name: 'Older runs' })).toBeDisabled();
  await trend.getByLabel('Template').selectOption({ label: slow.name });
  await expect(trend.getByTestId('duration-median')).toContainText('Runs shown: 1 · Median:');

  for (const [name, size] of Object.entries(viewports)) {
    await page.setViewportSize(size);
    for (const dark of [false, true]) {
      await inTheme(page, dark, `/project/${project.id}/history`);
      await expect(page.getByTestId('daily-totals')).toHaveText('Total: 5 · Success: 3 · Failed: 1 · Stopped: 1');
      await expect(page.getByTestId('duration-median')).toContainText('Median:');
      await expect(page.locator('html')).toHaveClass(dark ? /pf-v6-theme-dark/ : /^(?!.*pf-v6-theme-dark)/);
      await screenshot(page, testInfo, `history-charts-${name}-${dark ? 'dark' : 'light'}`);
    }
  }
});
