// Scenery for the template tests, made through the real API: a local git
// repository with a script, and the key, repository, environment and
// inventory a template needs.
import { expect, type APIRequestContext } from '@playwright/test';

async function idByName(api: APIRequestContext, path: string, name: string): Promise<number> {
  const res = await api.get(path);
  expect(res.status(), await res.text()).toBe(200);
  const item = ((await res.json()) as { id: number; name: string }[]).find((i) => i.name === name);
  expect(item, `${name} in ${path}`).toBeTruthy();
  return item!.id;
}

export interface Scenery {
  keyId: number;
  repositoryId: number;
  environmentId: number;
  inventoryId: number;
  names: { repository: string; environment: string; inventory: string };
}

/** What a template refers to, in project projectId, on the repository at gitUrl. */
export async function createScenery(api: APIRequestContext, projectId: number, gitUrl: string): Promise<Scenery> {
  const base = `/api/project/${projectId}`;
  const names = { repository: 'Scripts', environment: 'Quiet', inventory: 'Local' };
  let res = await api.post(`${base}/keys`, { data: { name: 'None', type: 'none' } });
  expect(res.status(), await res.text()).toBe(204);
  const keyId = await idByName(api, `${base}/keys`, 'None');
  res = await api.post(`${base}/repositories`, {
    data: { name: names.repository, git_url: gitUrl, git_branch: 'main', ssh_key_id: keyId },
  });
  expect(res.status(), await res.text()).toBe(204);
  res = await api.post(`${base}/environment`, { data: { name: names.environment, json: '{}', env: '{}' } });
  expect(res.status(), await res.text()).toBe(204);
  res = await api.post(`${base}/inventory`, {
    data: { name: names.inventory, type: 'static', inventory: 'localhost ansible_connection=local\n', ssh_key_id: keyId },
  });
  expect(res.status(), await res.text()).toBe(201);
  return {
    keyId,
    repositoryId: await idByName(api, `${base}/repositories`, names.repository),
    environmentId: await idByName(api, `${base}/environment`, names.environment),
    inventoryId: ((await res.json()) as { id: number }).id,
    names,
  };
}

/** A bash template made through the API. */
export async function createTemplate(
  api: APIRequestContext,
  projectId: number,
  scenery: Scenery,
  name: string,
  extra: Record<string, unknown> = {},
): Promise<{ id: number; name: string }> {
  const res = await api.post(`/api/project/${projectId}/templates`, {
    data: {
      name, app: 'bash', type: '', playbook: 'hello.sh', repository_id: scenery.repositoryId,
      environment_id: scenery.environmentId, inventory_id: scenery.inventoryId, arguments: '[]', ...extra,
    },
  });
  expect(res.status(), await res.text()).toBe(201);
  return res.json();
}
