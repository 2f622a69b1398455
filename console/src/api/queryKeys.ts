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
};
