// Scenes for the task tests: a project whose templates run real scripts,
// playbooks and Terraform code from a repository of e2e/repository.ts.
import { expect, type APIRequestContext } from '@playwright/test';

async function idByName(api: APIRequestContext, path: string, name: string): Promise<number> {
  const res = await api.get(path);
  expect(res.status(), await res.text()).toBe(200);
  const found = ((await res.json()) as { id: number; name: string }[]).find((item) => item.name === name);
  expect(found, `${name} in ${path}`).toBeTruthy();
  return found!.id;
}

async function post(api: APIRequestContext, path: string, data: object): Promise<unknown> {
  const res = await api.post(path, { data });
  expect([200, 201, 204], `${path}: ${await res.text()}`).toContain(res.status());
  return res.status() === 204 ? undefined : res.json();
}

export interface Scene {
  projectId: number;
  repositoryId: number;
  environmentId: number;
  inventoryId: number;
}

/** The resources every template of a project needs, around a repository at path. */
export async function sceneFor(api: APIRequestContext, projectId: number, path: string): Promise<Scene> {
  const base = `/api/project/${projectId}`;
  await post(api, `${base}/keys`, { name: 'None', type: 'none' });
  const keyId = await idByName(api, `${base}/keys`, 'None');
  await post(api, `${base}/repositories`, { name: 'Code', git_url: path, git_branch: 'main', ssh_key_id: keyId });
  await post(api, `${base}/environment`, { name: 'Empty', json: '{}', env: '{}' });
  const inventory = (await post(api, `${base}/inventory`, {
    name: 'Local', type: 'static', inventory: 'localhost ansible_connection=local', ssh_key_id: keyId,
  })) as { id: number };
  return {
    projectId,
    repositoryId: await idByName(api, `${base}/repositories`, 'Code'),
    environmentId: await idByName(api, `${base}/environment`, 'Empty'),
    inventoryId: inventory.id,
  };
}

export interface TemplateOptions {
  name: string;
  playbook: string;
  app?: '' | 'bash' | 'terraform';
  type?: '' | 'build' | 'deploy';
  start_version?: string;
  build_template_id?: number;
  allow_override_args_in_task?: boolean;
}

export async function createTemplate(api: APIRequestContext, scene: Scene, options: TemplateOptions): Promise<{ id: number; name: string }> {
  return (await post(api, `/api/project/${scene.projectId}/templates`, {
    app: '', type: '', arguments: '[]', survey_vars: [], description: '',
    repository_id: scene.repositoryId, environment_id: scene.environmentId,
    inventory_id: options.app ? null : scene.inventoryId,
    ...options,
  })) as { id: number; name: string };
}

/** Starts a task through the API; returns its id. */
export async function startTask(api: APIRequestContext, projectId: number, data: object): Promise<number> {
  const task = (await post(api, `/api/project/${projectId}/tasks`, data)) as { id: number };
  return task.id;
}

export async function taskStatus(api: APIRequestContext, projectId: number, taskId: number): Promise<string> {
  const res = await api.get(`/api/project/${projectId}/tasks/${taskId}`);
  return ((await res.json()) as { status: string }).status;
}
