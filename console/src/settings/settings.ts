// Browser-local settings (docs/features.md §9): dark mode, language, last project and
// last view live in localStorage. Reading or writing must never break the
// console: some privacy modes throw on any access.

export const settingKeys = {
  darkMode: 'darkMode',
  language: 'lang',
  lastProject: 'projectId',
  // The task log wraps long lines ('1') or scrolls them sideways (unset).
  logWrap: 'logWrap',
  // One last view per project: views belong to a project.
  lastView: (projectId: number) => `project${projectId}__lastVisitedViewId`,
} as const;

export function readSetting(key: string): string | null {
  try {
    return window.localStorage.getItem(key);
  } catch {
    return null;
  }
}

export function writeSetting(key: string, value: string | null): void {
  try {
    if (value === null) window.localStorage.removeItem(key);
    else window.localStorage.setItem(key, value);
  } catch {
    // Not kept: the choice still applies to this page.
  }
}

function readId(key: string): number | undefined {
  const id = Number(readSetting(key));
  return Number.isInteger(id) && id > 0 ? id : undefined;
}

/** The project the user had open last, if any. */
export const lastProject = () => readId(settingKeys.lastProject);
export const rememberProject = (projectId: number) =>
  writeSetting(settingKeys.lastProject, String(projectId));

/** The template view the user had open last in a project, if any. */
export const lastView = (projectId: number) => readId(settingKeys.lastView(projectId));
export const rememberView = (projectId: number, viewId: number | null) =>
  writeSetting(settingKeys.lastView(projectId), viewId === null ? null : String(viewId));
