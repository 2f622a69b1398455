// Objects a GitOps tool applies are read-only in the console (docs/gitops.md).
// The objects are applied and labelled with the real kubectl against the
// `bastion dev` under test (global-setup.ts exports its kubeconfig), carrying
// the labels and annotations Flux and Argo CD set; the screenshots show the
// read-only state in both themes, on a desktop and on a phone.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { admin, apiAs, createProject, createUser, screenshot, unique, useSession } from './helpers';
import { createScenery, createTemplate } from './templates-helpers';

// $KUBECTL, else the envtest assets' (which `bastion dev` runs on), else PATH's.
function kubectlBinary(): string {
  const assets = join(homedir(), '.cache/bastion/envtest/k8s-1.37.1-etcd-3.6.16-linux-amd64/kubectl');
  return process.env.KUBECTL ?? (existsSync(assets) ? assets : 'kubectl');
}

function kubectl(input: string, ...args: string[]): string {
  const kubeconfig = process.env.BASTION_KUBECONFIG;
  if (!kubeconfig) throw new Error('BASTION_KUBECONFIG is not set: with BASTION_URL, name the server’s kubeconfig too');
  return execFileSync(kubectlBinary(), ['--kubeconfig', kubeconfig, ...args], { input, encoding: 'utf8' });
}

const looks = [
  { theme: 'light', width: 1280, height: 800 },
  { theme: 'dark', width: 1280, height: 800 },
  { theme: 'light', width: 412, height: 915 },
  { theme: 'dark', width: 412, height: 915 },
] as const;

async function inLook(page: Page, look: (typeof looks)[number], path: string) {
  await page.setViewportSize({ width: look.width, height: look.height });
  await page.evaluate((dark) => window.localStorage.setItem('darkMode', dark ? '1' : '0'), look.theme === 'dark');
  await page.goto(path);
}

test('objects applied by Flux and Argo CD are read-only in the console (keys, templates, schedules, views, integrations, the project, a user) @desktop', async ({ page, baseURL }, testInfo) => {
  const api = await apiAs(baseURL!, admin.username, admin.password);
  const project = await createProject(api, unique(testInfo, 'GitOps'));
  const scenery = await createScenery(api, project.id, '/nonexistent');
  const template = await createTemplate(api, project.id, scenery, 'Deploy from Git');
  const name = kubectl('', 'get', 'projects', '-l', `automation.bastion.dev/id=${project.id}`, '-o', 'jsonpath={.items[0].metadata.name}');
  const ns = `bastion-${name}`;

  // A key as Flux's kustomize-controller applies it, the template and the
  // project as Argo CD and Flux track them.
  kubectl(
    `apiVersion: v1
kind: Secret
metadata:
  name: git-key
  namespace: ${ns}
  labels:
    automation.bastion.dev/key-type: none
    kustomize.toolkit.fluxcd.io/name: bastion-keys
    kustomize.toolkit.fluxcd.io/namespace: flux-system
  annotations:
    automation.bastion.dev/display-name: Key from Git
type: Opaque
`,
    'apply', '-f', '-',
  );
  kubectl('', 'label', '-n', ns, 'templates', '-l', `automation.bastion.dev/id=${template.id}`, 'argocd.argoproj.io/instance=bastion-templates');
  // A view, a schedule of the template and an integration as Flux applies
  // them: their write controls go too (views dialog, editor, detail).
  const templateName = kubectl('', 'get', '-n', ns, 'templates', '-l', `automation.bastion.dev/id=${template.id}`, '-o', 'jsonpath={.items[0].metadata.name}');
  kubectl(
    `apiVersion: automation.bastion.dev/v1alpha1
kind: View
metadata:
  name: git-view
  namespace: ${ns}
  labels: {kustomize.toolkit.fluxcd.io/name: bastion-views, kustomize.toolkit.fluxcd.io/namespace: flux-system}
spec: {title: Views from Git, position: 0}
---
apiVersion: automation.bastion.dev/v1alpha1
kind: Schedule
metadata:
  name: git-schedule
  namespace: ${ns}
  labels: {kustomize.toolkit.fluxcd.io/name: bastion-schedules, kustomize.toolkit.fluxcd.io/namespace: flux-system}
spec: {templateRef: {name: ${templateName}}, cronFormat: "0 3 * * *", active: true}
---
apiVersion: automation.bastion.dev/v1alpha1
kind: Integration
metadata:
  name: git-hook
  namespace: ${ns}
  labels: {kustomize.toolkit.fluxcd.io/name: bastion-hooks, kustomize.toolkit.fluxcd.io/namespace: flux-system}
spec:
  displayName: Hook from Git
  matchers: [{name: Push event, matchType: header, method: equals, key: X-Event, value: push}]
`,
    'apply', '-f', '-',
  );
  let hookId = 0;
  await expect(async () => {
    const hooks = (await (await api.get(`/api/project/${project.id}/integrations`)).json()) as { id: number; name: string }[];
    hookId = hooks.find((h) => h.name === 'Hook from Git')?.id ?? 0;
    expect(hookId).toBeGreaterThan(0); // its controller numbers it a moment after kubectl
  }).toPass();
  kubectl('', 'label', 'project', name, 'kustomize.toolkit.fluxcd.io/name=bastion-projects', 'kustomize.toolkit.fluxcd.io/namespace=flux-system');

  // A user declared in Git (User is cluster-scoped): its edit and delete
  // go, its password stays (docs/gitops.md).
  const declared = await createUser(api, unique(testInfo, 'declared').toLowerCase());
  const userName = kubectl('', 'get', 'users', '-l', `automation.bastion.dev/id=${declared.id}`, '-o', 'jsonpath={.items[0].metadata.name}');
  expect(userName).not.toBe('');
  kubectl('', 'label', 'user', userName, 'kustomize.toolkit.fluxcd.io/name=bastion-users', 'kustomize.toolkit.fluxcd.io/namespace=flux-system');

  // The API refuses, and says where to change it.
  const refused = await api.delete(`/api/project/${project.id}/templates/${template.id}`);
  expect(refused.status()).toBe(409);
  expect((await refused.json()).error).toContain('managed by Argo CD (Application bastion-templates)');

  await useSession(page, api);
  await page.goto('/');
  for (const look of looks) {
    const suffix = `${look.theme}-${look.width < 960 ? 'mobile' : 'desktop'}`;

    await inLook(page, look, `/project/${project.id}/keys`);
    const row = page.getByRole('row').filter({ hasText: 'Key from Git' });
    await expect(row.getByText('Managed by Flux')).toBeVisible();
    await expect(row.getByRole('button', { name: 'Edit Key from Git' })).toHaveAttribute('aria-disabled', 'true');
    await expect(row.getByRole('button', { name: 'Delete Key from Git' })).toHaveAttribute('aria-disabled', 'true');
    await expect(page.getByRole('button', { name: 'Delete None', exact: true })).not.toHaveAttribute('aria-disabled', 'true');
    await screenshot(page, testInfo, `gitops-keys-${suffix}`);

    await inLook(page, look, `/project/${project.id}/templates/${template.id}`);
    await expect(page.getByRole('heading', { name: 'Deploy from Git' })).toBeVisible();
    await expect(page.getByText('Managed by Argo CD')).toBeVisible();
    await expect(page.getByRole('button', { name: 'Edit', exact: true })).toHaveAttribute('aria-disabled', 'true');
    await expect(page.getByRole('button', { name: 'Delete', exact: true })).toHaveAttribute('aria-disabled', 'true');
    if (look.width >= 960) {
      // The reason, on hover.
      await page.getByRole('button', { name: 'Delete', exact: true }).hover();
      await expect(page.getByRole('tooltip')).toContainText('Read-only here: Argo CD keeps it in step with its source');
    }
    // Its schedule, from Flux.
    await expect(page.getByRole('grid', { name: 'Schedules' }).getByText('Managed by Flux')).toBeVisible();
    await screenshot(page, testInfo, `gitops-template-${suffix}`);

    await inLook(page, look, `/project/${project.id}/templates`);
    await page.getByRole('button', { name: 'Edit views' }).click();
    const views = page.getByRole('dialog', { name: 'Edit views' });
    await expect(views.getByText('Managed by Flux')).toBeVisible();
    await expect(views.getByRole('textbox', { name: 'Title of view 1' })).toHaveValue('Views from Git');
    await expect(views.getByRole('textbox', { name: 'Title of view 1' })).toBeDisabled();
    await expect(views.getByRole('button', { name: 'Delete view 1' })).toBeDisabled();
    await expect(views.getByRole('button', { name: 'Move view 1 down' })).toBeDisabled();
    await screenshot(page, testInfo, `gitops-views-${suffix}`);

    await inLook(page, look, `/project/${project.id}/integration/${hookId}`);
    await expect(page.getByRole('heading', { name: 'Hook from Git', level: 1 })).toBeVisible();
    await expect(page.getByText('Managed by Flux')).toBeVisible();
    await expect(page.getByRole('button', { name: 'Edit Push event' })).toHaveAttribute('aria-disabled', 'true');
    await expect(page.getByRole('button', { name: 'Delete Push event' })).toHaveAttribute('aria-disabled', 'true');
    for (const name of ['Edit', 'Add Alias', 'New Matcher', 'New Extracted Value']) {
      await expect(page.getByRole('button', { name, exact: true })).toHaveCount(0);
    }
    await expect(page.getByRole('checkbox', { name: 'Available by project and global alias' })).toBeDisabled();
    await screenshot(page, testInfo, `gitops-integration-${suffix}`);

    await inLook(page, look, `/project/${project.id}/settings`);
    await expect(page.getByText('Managed by Flux')).toBeVisible();
    await expect(page.getByRole('button', { name: 'Save', exact: true })).toBeDisabled();
    await expect(page.getByRole('button', { name: 'Save task pod settings' })).toBeDisabled();
    await expect(page.getByRole('button', { name: 'Delete project' })).toBeDisabled();
    await screenshot(page, testInfo, `gitops-settings-${suffix}`);

    await inLook(page, look, '/users');
    const userRow = page.getByRole('row').filter({ hasText: declared.username });
    await expect(userRow.getByText('Managed by Flux')).toBeVisible();
    await userRow.getByRole('button', { name: `Actions for ${declared.username}` }).click();
    await expect(page.getByRole('menuitem', { name: 'Edit' })).toBeDisabled();
    await expect(page.getByRole('menuitem', { name: 'Delete' })).toBeDisabled();
    await expect(page.getByRole('menuitem', { name: 'Change password' })).toBeEnabled();
    // The menu fades in: the screenshot waits for it to be opaque.
    await expect(page.locator('.pf-v6-c-menu').filter({ has: page.getByRole('menuitem', { name: 'Change password' }) })).toHaveCSS('opacity', '1');
    await screenshot(page, testInfo, `gitops-users-${suffix}`);
    await page.keyboard.press('Escape');
  }
});
