// A project's or a template's task_pods (api-contract.md): where its task
// pods run and with what, and the text forms the console edits them in.
// Parsing is lenient on purpose: the server checks every value (the lists
// the cluster admin set, label syntax, quantities) and says what is wrong.

export interface Toleration {
  key: string;
  operator: string;
  value: string;
  effect: string;
  toleration_seconds: number | null;
}

export interface TaskPods {
  node_selector: Record<string, string>;
  tolerations: Toleration[];
  resources: { requests: Record<string, string>; limits: Record<string, string> };
  runner_image: string;
  service_account: string;
}

/** GET /api/task_pods/options: what the cluster admin allows. */
export interface TaskPodOptions {
  runner_images: { name: string; image: string }[];
  service_accounts: string[];
}

export function emptyTaskPods(): TaskPods {
  return { node_selector: {}, tolerations: [], resources: { requests: {}, limits: {} }, runner_image: '', service_account: '' };
}

const lines = (text: string) =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);

/** "pool=automation" per line. */
export function formatNodeSelector(selector: Record<string, string>): string {
  return Object.entries(selector)
    .map(([key, value]) => `${key}=${value}`)
    .join('\n');
}

export function parseNodeSelector(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of lines(text)) {
    const at = line.indexOf('=');
    if (at < 0) out[line] = '';
    else out[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return out;
}

/**
 * One toleration per line, as kubectl writes a taint: key=value:Effect
 * (Equal), key:Effect (Exists), and :seconds after NoExecute.
 */
export function formatTolerations(tolerations: Toleration[]): string {
  return tolerations
    .map((t) => {
      let line = t.operator === 'Exists' ? t.key : `${t.key}=${t.value}`;
      if (t.effect) line += `:${t.effect}`;
      if (t.toleration_seconds !== null) line += `:${t.toleration_seconds}`;
      return line;
    })
    .join('\n');
}

export function parseTolerations(text: string): Toleration[] {
  return lines(text).map((line) => {
    const [keyValue, effect = '', seconds] = line.split(':').map((part) => part.trim());
    const at = keyValue.indexOf('=');
    return {
      key: at < 0 ? keyValue : keyValue.slice(0, at).trim(),
      operator: at < 0 ? 'Exists' : 'Equal',
      value: at < 0 ? '' : keyValue.slice(at + 1).trim(),
      effect,
      toleration_seconds: seconds === undefined || seconds === '' ? null : Number(seconds),
    };
  });
}

/** Whether anything is set: a template without settings runs with the project's. */
export function hasSettings(pods: TaskPods | undefined): boolean {
  if (!pods) return false;
  const { node_selector, tolerations, resources, runner_image, service_account } = pods;
  return (
    Object.keys(node_selector).length + tolerations.length > 0 ||
    Object.values(resources.requests).some(Boolean) ||
    Object.values(resources.limits).some(Boolean) ||
    Boolean(runner_image || service_account)
  );
}
