// Every react-query key lives here, so invalidation and websocket cache updates
// can name exactly the data they touch. Keys under a project start with
// ['project', id], so invalidating that prefix refreshes all of it.
export const queryKeys = {
  info: ['info'] as const,
  currentUser: ['user'] as const,
  loginOptions: ['auth', 'login'] as const,
  users: ['users'] as const,
  projects: ['projects'] as const,
  project: (projectId: number) => ['project', projectId] as const,
  projectRole: (projectId: number) => ['project', projectId, 'role'] as const,
  team: (projectId: number) => ['project', projectId, 'team'] as const,
  events: (projectId: number) => ['project', projectId, 'events'] as const,
  // Console part 2: templates, views, tasks.
  templates: (projectId: number) => ['project', projectId, 'templates'] as const,
  template: (projectId: number, templateId: number) => ['project', projectId, 'templates', templateId] as const,
  views: (projectId: number) => ['project', projectId, 'views'] as const,
  schedules: (projectId: number) => ['project', projectId, 'schedules'] as const,
  tasks: (projectId: number) => ['project', projectId, 'tasks'] as const,
  task: (projectId: number, taskId: number) => ['project', projectId, 'tasks', taskId] as const,
  // Console part 3: resources and integrations.
  keys: (projectId: number) => ['project', projectId, 'keys'] as const,
  repositories: (projectId: number) => ['project', projectId, 'repositories'] as const,
  inventories: (projectId: number) => ['project', projectId, 'inventory'] as const,
  environments: (projectId: number) => ['project', projectId, 'environment'] as const,
  integrations: (projectId: number) => ['project', projectId, 'integrations'] as const,
  apps: ['apps'] as const,
  taskPodOptions: ['task_pods', 'options'] as const,
};
