import type { TaskPods } from '../taskpods/types';

/** A project as /api/projects shows it (api-contract.md). */
export interface Project {
  id: number;
  name: string;
  created?: string;
  alert: boolean;
  alert_chat: string | null;
  max_parallel_tasks: number;
  /** "" is a normal project. */
  type: string;
  /** Set when a GitOps tool manages it: read-only (docs/gitops.md). */
  managed_by?: string;
  /** Defaults of its task pods (ours; absent from older servers). */
  task_pods?: TaskPods;
}

/** The body of POST /api/projects and PUT /api/project/{id}. */
export interface ProjectRequest {
  id?: number;
  name: string;
  alert: boolean;
  alert_chat: string | null;
  max_parallel_tasks: number;
  /** Absent keeps the stored settings. */
  task_pods?: TaskPods;
  demo?: boolean;
}
