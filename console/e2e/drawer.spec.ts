import { expect, test } from '@playwright/test';
import { admin, apiAs, createProject, unique, useSession } from './helpers';

// Spec §2, §9: a 260-pixel drawer, fixed from 960 pixels up, toggled below.
test('the drawer is 260 pixels wide, fixed on a desktop and toggled on a narrow screen', async ({ page, baseURL }, testInfo) => {
  const api = await apiAs(baseURL!, admin.username, admin.password);
  const project = await createProject(api, unique(testInfo, 'drawer'));
  await useSession(page, api);
  await page.goto(`/project/${project.id}/activity`);
  await expect(page.getByRole('heading', { name: 'Activity' })).toBeVisible();

  const drawer = page.locator('#drawer');
  const toggle = page.locator('#drawer-toggle');
  if (page.viewportSize()!.width >= 960) {
    await expect(toggle).toHaveCount(0);
  } else {
    await expect(toggle).toBeVisible();
    await expect(page.getByTestId('project-switcher')).not.toBeInViewport();
    await toggle.click();
    await expect(page.getByTestId('project-switcher')).toBeInViewport();
  }
  expect((await drawer.boundingBox())!.width).toBe(260);

  // Picking a page closes the drawer again on a narrow screen.
  await page.getByRole('link', { name: 'Team' }).click();
  await expect(page.getByRole('heading', { name: 'Team' })).toBeVisible();
  if (page.viewportSize()!.width < 960) await expect(page.getByTestId('project-switcher')).not.toBeInViewport();
});
