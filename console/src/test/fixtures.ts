import type { Project } from '../resources/projects/types';
import type { User } from '../resources/users/types';

export const admin: User = {
  id: 1, username: 'admin', name: 'Administrator', email: 'admin@localhost',
  admin: true, external: false, alert: false, can_create_project: false,
};

export const alice: User = {
  id: 2, username: 'alice', name: 'Alice Liddell', email: 'alice@example.com',
  admin: false, external: false, alert: true, can_create_project: true,
};

export function project(id: number, name: string, type = ''): Project {
  return { id, name, alert: false, alert_chat: null, max_parallel_tasks: 0, type };
}
