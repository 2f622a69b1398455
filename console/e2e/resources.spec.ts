// Keys, repositories, inventories and environments (issue 9) against a real
// `bastion dev`: each is created and edited through the screens, deletes
// check references, a guest sees no write buttons, and every screen is
// photographed in both themes.
import { expect, test, type APIRequestContext, type Page, type TestInfo } from '@playwright/test';
import { addMember, admin, apiAs, createProject, createUser, screenshot, unique, useSession } from './helpers';

const themes = ['light', 'dark'] as const;

/** POSTs a resource and returns its id, read back from the list (keys and repositories answer 204). */
async function createResource(api: APIRequestContext, projectId: number, path: string, data: Record<string, unknown>): Promise<number> {
  const res = await api.post(`/api/project/${projectId}/${path}`, { data: { project_id: projectId, ...data } });
  expect(res.status(), await res.text()).toBeLessThan(300);
  const list: { id: number; name: string }[] = await (await api.get(`/api/project/${projectId}/${path}`)).json();
  return list.find((item) => item.name === data.name)!.id;
}

/** A project holding one of each resource, made through the API. */
async function seedProject(api: APIRequestContext, testInfo: TestInfo) {
  const project = await createProject(api, unique(testInfo, 'Resources'));
  const keyId = await createResource(api, project.id, 'keys', { name: 'none key', type: 'none' });
  const repoId = await createResource(api, project.id, 'repositories', {
    name: 'site', git_url: 'https://github.com/example/site.git', git_branch: 'main', ssh_key_id: keyId,
  });
  const spareRepoId = await createResource(api, project.id, 'repositories', {
    name: 'spare', git_url: '/srv/repos/spare', git_branch: '', ssh_key_id: keyId,
  });
  const inventoryId = await createResource(api, project.id, 'inventory', {
    name: 'localhost', type: 'static', inventory: '[local]\nlocalhost ansible_connection=local', ssh_key_id: keyId,
  });
  const environmentId = await createResource(api, project.id, 'environment', {
    name: 'staging', json: '{"region": "eu"}', env: '{}', secrets: [{ type: 'var', name: 'db_password', secret: 'hunter2', operation: 'create' }],
  });
  return { project, keyId, repoId, spareRepoId, inventoryId, environmentId };
}

async function open(page: Page, path: string, heading: string) {
  await page.goto(path);
  await expect(page.getByRole('heading', { level: 1, name: heading })).toBeVisible();
}

function row(page: Page, name: string) {
  return page.getByRole('row').filter({ has: page.getByRole('gridcell', { name, exact: true }) });
}

async function newProject(page: Page, baseURL: string, testInfo: TestInfo) {
  const api = await apiAs(baseURL, admin.username, admin.password);
  const project = await createProject(api, unique(testInfo, 'Resources UI'));
  await useSession(page, api);
  return { api, project, base: `/project/${project.id}` };
}

test('creates a login_password key and renames it; its password is never read back', async ({ page, baseURL }, testInfo) => {
  const { api, project, base } = await newProject(page, baseURL!, testInfo);
  // Key: a login_password key, then renamed; its password is never shown again.
  await open(page, `${base}/keys`, 'Key Store');
  await expect(page.getByText('No keys yet')).toBeVisible();
  await page.getByRole('button', { name: 'New Key' }).click();
  let dialog = page.getByRole('dialog');
  await dialog.getByRole('button', { name: 'Create' }).click();
  await expect(dialog.getByText('Name is required')).toBeVisible();
  await dialog.getByRole('textbox', { name: /^Name/ }).fill('deployer');
  await dialog.getByRole('combobox', { name: 'Type' }).selectOption('login_password');
  await dialog.getByRole('textbox', { name: /^Login/ }).fill('deploy');
  await dialog.getByLabel(/^Password/).fill('s3cret-pass');
  await dialog.getByRole('button', { name: 'Create' }).click();
  await expect(dialog).toBeHidden();
  await expect(row(page, 'deployer')).toContainText('Login with password');
  await page.getByRole('button', { name: 'Edit deployer' }).click();
  dialog = page.getByRole('dialog');
  await expect(dialog.getByLabel(/^Password/)).toHaveValue('');
  await expect(dialog.getByLabel(/^Password/)).toBeDisabled();
  await dialog.getByRole('textbox', { name: /^Name/ }).fill('deployer key');
  await dialog.getByRole('button', { name: 'Save' }).click();
  await expect(dialog).toBeHidden();
  await expect(row(page, 'deployer key')).toBeVisible();
  const keyJson = await (await api.get(`/api/project/${project.id}/keys`)).json();
  expect(keyJson).toEqual([expect.objectContaining({ name: 'deployer key', type: 'login_password', empty: false })]);
  expect(JSON.stringify(keyJson)).not.toContain('s3cret-pass');

});

test('creates a repository with the URL-type chips and edits it into a local path', async ({ page, baseURL }, testInfo) => {
  const { api, project, base } = await newProject(page, baseURL!, testInfo);
  await createResource(api, project.id, 'keys', { name: 'deployer key', type: 'none' });
  // Repository: the chips rewrite the URL; local disables the branch.
  await open(page, `${base}/repositories`, 'Repositories');
  await page.getByRole('button', { name: 'New Repository' }).click();
  let dialog = page.getByRole('dialog');
  await dialog.getByRole('textbox', { name: /^Name/ }).fill('playbooks');
  const url = dialog.getByRole('textbox', { name: /URL or path/ });
  await url.fill('git@github.com:example/playbooks.git');
  await dialog.getByRole('button', { name: 'https' }).click();
  await expect(url).toHaveValue('https://git@github.com/example/playbooks.git');
  await url.fill('http://github.com/example/playbooks.git');
  await dialog.getByRole('button', { name: 'Create' }).click();
  await expect(dialog.getByText('Incorrect URL')).toBeVisible();
  await expect(dialog.getByText('Key is required')).toBeVisible();
  await url.fill('https://github.com/example/playbooks.git');
  await dialog.getByRole('textbox', { name: /^Branch/ }).fill('main');
  await dialog.getByRole('combobox', { name: 'Access Key' }).selectOption({ label: 'deployer key' });
  await dialog.getByRole('button', { name: 'Create' }).click();
  await expect(dialog).toBeHidden();
  await expect(row(page, 'playbooks')).toContainText('https://github.com/example/playbooks.git');
  await expect(row(page, 'playbooks')).toContainText('main');
  await expect(row(page, 'playbooks')).toContainText('deployer key');
  await page.getByRole('button', { name: 'Edit playbooks' }).click();
  dialog = page.getByRole('dialog');
  await dialog.getByRole('button', { name: 'local' }).click();
  await expect(url).toHaveValue('/github.com/example/playbooks.git');
  await expect(dialog.getByRole('textbox', { name: /^Branch/ })).toBeDisabled();
  await url.fill('/srv/repos/playbooks');
  await dialog.getByRole('button', { name: 'Save' }).click();
  await expect(dialog).toBeHidden();
  await expect(row(page, 'playbooks')).toContainText('/srv/repos/playbooks');
  await expect(row(page, 'playbooks')).not.toContainText('main');

});

test('creates a static inventory and edits it into a file inventory', async ({ page, baseURL }, testInfo) => {
  const { api, project, base } = await newProject(page, baseURL!, testInfo);
  await createResource(api, project.id, 'keys', { name: 'deployer key', type: 'none' });
  // Inventory: static INI text, then a file path.
  await open(page, `${base}/inventory`, 'Inventory');
  await page.getByRole('button', { name: 'New Inventory' }).click();
  let dialog = page.getByRole('dialog');
  await dialog.getByRole('textbox', { name: /^Name/ }).fill('web servers');
  await dialog.getByRole('combobox', { name: 'User Credentials' }).selectOption({ label: 'deployer key' });
  await dialog.getByLabel(/^Inventory \(INI\)/).fill('[web]\nweb1.example.com');
  await dialog.getByRole('button', { name: 'Create' }).click();
  await expect(dialog).toBeHidden();
  await expect(row(page, 'web servers')).toContainText('Static (INI)');
  await page.getByRole('button', { name: 'Edit web servers' }).click();
  dialog = page.getByRole('dialog');
  await expect(dialog.getByLabel(/^Inventory \(INI\)/)).toHaveValue('[web]\nweb1.example.com');
  await dialog.getByRole('combobox', { name: 'Type' }).selectOption('file');
  await dialog.getByRole('button', { name: 'Save' }).click();
  await expect(dialog.getByText('Path to Inventory file is required')).toBeVisible();
  await dialog.getByRole('textbox', { name: /^Path to Inventory file/ }).fill('inventories/web.ini');
  await dialog.getByRole('button', { name: 'Save' }).click();
  await expect(dialog).toBeHidden();
  await expect(row(page, 'web servers')).toContainText('File');

});

test('creates an environment with a secret, then deletes the secret; values are never read back', async ({ page, baseURL }, testInfo) => {
  const { api, project, base } = await newProject(page, baseURL!, testInfo);
  // Environment: JSON checked, a secret added, then deleted; never read back.
  await open(page, `${base}/environment`, 'Environment');
  await page.getByRole('button', { name: 'New Environment' }).click();
  let dialog = page.getByRole('dialog');
  await dialog.getByRole('textbox', { name: /^Name/ }).fill('production');
  await dialog.getByLabel(/^Extra variables/).fill('{"region": ');
  await dialog.getByRole('button', { name: 'Create' }).click();
  await expect(dialog.getByText('Environment and extra variables must be valid JSON')).toBeVisible();
  await dialog.getByLabel(/^Extra variables/).fill('{"region": "eu"}');
  await dialog.getByRole('button', { name: 'Add Secret' }).click();
  await dialog.getByRole('textbox', { name: 'Name of Secret 1' }).fill('db_password');
  await dialog.getByLabel('Value of db_password').fill('very-secret-value');
  await dialog.getByRole('button', { name: 'Create' }).click();
  await expect(dialog).toBeHidden();
  await expect(row(page, 'production')).toContainText('db_password');
  await page.getByRole('button', { name: 'Edit production' }).click();
  dialog = page.getByRole('dialog');
  await expect(dialog.getByLabel(/^Extra variables/)).toHaveValue(/"region"/);
  await expect(dialog.getByLabel('Value of db_password')).toHaveValue('');
  await dialog.getByRole('button', { name: 'Delete db_password' }).click();
  await dialog.getByRole('button', { name: 'Save' }).click();
  await expect(dialog).toBeHidden();
  await expect(row(page, 'production')).not.toContainText('db_password');
  const environments = await (await api.get(`/api/project/${project.id}/environment`)).text();
  expect(environments).not.toContain('very-secret-value');
});

test('refuses to delete a repository a template uses, listing the template, and deletes an unused one', async ({ page, baseURL }, testInfo) => {
  const api = await apiAs(baseURL!, admin.username, admin.password);
  const { project, repoId, inventoryId, environmentId } = await seedProject(api, testInfo);
  const template = await api.post(`/api/project/${project.id}/templates`, {
    data: {
      project_id: project.id, name: 'Deploy site', playbook: 'site.yml', app: '', type: '',
      repository_id: repoId, inventory_id: inventoryId, environment_id: environmentId,
    },
  });
  expect(template.status(), await template.text()).toBe(201);
  const templateId = (await template.json()).id;
  await useSession(page, api);

  await open(page, `/project/${project.id}/repositories`, 'Repositories');
  await page.getByRole('button', { name: 'Delete site' }).click();
  const refused = page.getByRole('dialog', { name: /Can't delete the repository/ });
  await expect(refused).toBeVisible();
  await expect(refused.getByRole('link', { name: 'Deploy site' })).toHaveAttribute('href', `/project/${project.id}/templates/${templateId}`);
  await expect(refused.getByRole('button', { name: 'Delete' })).toHaveCount(0);
  await refused.locator('footer').getByRole('button', { name: 'Close' }).click();
  await expect(refused).toBeHidden();
  await expect(row(page, 'site')).toBeVisible();

  await page.getByRole('button', { name: 'Delete spare' }).click();
  const confirm = page.getByRole('dialog', { name: /Delete repository/ });
  await expect(confirm.getByText('Are you sure you want to delete the repository "spare"?')).toBeVisible();
  await confirm.getByRole('button', { name: 'Delete' }).click();
  await expect(confirm).toBeHidden();
  await expect(row(page, 'spare')).toHaveCount(0);
  const left: { name: string }[] = await (await api.get(`/api/project/${project.id}/repositories`)).json();
  expect(left.map((r) => r.name)).toEqual(['site']);
});

test('a guest sees every resource and no write button', async ({ page, baseURL }, testInfo) => {
  const api = await apiAs(baseURL!, admin.username, admin.password);
  const { project } = await seedProject(api, testInfo);
  const guest = await createUser(api, unique(testInfo, 'guest'));
  await addMember(api, project.id, guest.id, 'guest');
  const guestApi = await apiAs(baseURL!, guest.username, guest.password);
  await useSession(page, guestApi);

  const screens = [
    ['keys', 'Key Store', 'none key', 'New Key'],
    ['repositories', 'Repositories', 'site', 'New Repository'],
    ['inventory', 'Inventory', 'localhost', 'New Inventory'],
    ['environment', 'Environment', 'staging', 'New Environment'],
  ];
  for (const [path, heading, name, newLabel] of screens) {
    await open(page, `/project/${project.id}/${path}`, heading);
    await expect(row(page, name)).toBeVisible();
    await expect(page.getByRole('button', { name: newLabel })).toHaveCount(0);
    await expect(page.getByRole('button', { name: /^(Edit|Delete) / })).toHaveCount(0);
  }
});

/** Signs in to a seeded project (its repository used by a template) in the given theme. */
async function screensOf(page: Page, baseURL: string, testInfo: TestInfo, theme: (typeof themes)[number]) {
  const api = await apiAs(baseURL, admin.username, admin.password);
  const { project, repoId, inventoryId, environmentId } = await seedProject(api, testInfo);
  const template = await api.post(`/api/project/${project.id}/templates`, {
    data: { project_id: project.id, name: 'Deploy site', playbook: 'site.yml', repository_id: repoId, inventory_id: inventoryId, environment_id: environmentId },
  });
  expect(template.status()).toBe(201);
  await useSession(page, api);
  await page.goto('/');
  await page.evaluate((dark) => window.localStorage.setItem('darkMode', dark ? '1' : '0'), theme === 'dark');
  return {
    api,
    base: `/project/${project.id}`,
    shoot: (name: string) => screenshot(page, testInfo, `resources-${name}-${theme}`),
  };
}

for (const theme of themes) {
  test(`screens of keys and repositories, with their dialogs, ${theme}`, async ({ page, baseURL }, testInfo) => {
    const { base, shoot } = await screensOf(page, baseURL!, testInfo, theme);

    await open(page, `${base}/keys`, 'Key Store');
    await expect(row(page, 'none key')).toBeVisible();
    await shoot('keys');
    await page.getByRole('button', { name: 'New Key' }).click();
    await page.getByRole('dialog').getByRole('combobox', { name: 'Type' }).selectOption('ssh');
    await page.getByRole('dialog').getByRole('button', { name: 'Create' }).click();
    await expect(page.getByRole('dialog').getByText('Private key is required')).toBeVisible();
    await shoot('key-dialog');

    await open(page, `${base}/repositories`, 'Repositories');
    await expect(row(page, 'site')).toBeVisible();
    await shoot('repositories');
    await page.getByRole('button', { name: 'Edit site' }).click();
    await expect(page.getByRole('dialog').getByRole('button', { name: 'https' })).toHaveAttribute('aria-pressed', 'true');
    await shoot('repository-dialog');
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('button', { name: 'Delete site' }).click();
    await expect(page.getByRole('dialog', { name: /Can't delete the repository/ })).toBeVisible();
    await shoot('cannot-delete');
    await page.getByRole('dialog').locator('footer').getByRole('button', { name: 'Close' }).click();
    await page.getByRole('button', { name: 'Delete spare' }).click();
    await expect(page.getByRole('dialog', { name: /Delete repository/ })).toBeVisible();
    await shoot('delete-confirm');
  });

  test(`screens of inventory, environment and an empty list, ${theme}`, async ({ page, baseURL }, testInfo) => {
    const { api, base, shoot } = await screensOf(page, baseURL!, testInfo, theme);

    await open(page, `${base}/inventory`, 'Inventory');
    await expect(row(page, 'localhost')).toBeVisible();
    await shoot('inventory');
    await page.getByRole('button', { name: 'Edit localhost' }).click();
    await expect(page.getByRole('dialog').getByLabel(/^Inventory \(INI\)/)).toBeVisible();
    await shoot('inventory-dialog');
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();

    await open(page, `${base}/environment`, 'Environment');
    await expect(row(page, 'staging')).toBeVisible();
    await shoot('environment');
    await page.getByRole('button', { name: 'Edit staging' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Add Secret' }).click();
    await expect(page.getByRole('dialog').getByRole('textbox', { name: 'Name of Secret 2' })).toBeVisible();
    await shoot('environment-dialog');
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();

    const empty = await createProject(api, unique(testInfo, 'Empty'));
    await open(page, `/project/${empty.id}/repositories`, 'Repositories');
    await expect(page.getByText('No repositories yet')).toBeVisible();
    await shoot('repositories-empty');
  });
}
