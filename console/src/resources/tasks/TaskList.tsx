export interface TaskListProps {
  projectId: number;
  /** Only this template's tasks (template detail); else the project's. */
  templateId?: number;
}

// Placeholder (issue 8): a table of tasks, 20 rows per page, updated live;
// a row opens the task log (the `t` query parameter).
export function TaskList(_props: TaskListProps) {
  return null;
}
