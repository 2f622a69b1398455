// Placeholder (issue 8): opens the task log dialog for the task named by the
// `t` query parameter, on every page of a project (spec §2).
export function TaskLogHost() {
  return null;
}
