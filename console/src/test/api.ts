// A stand-in for the server in component tests: answers fetch by "METHOD
// /path" and records every call, so a test can say which calls were made
// (and that a failed validation made none). End-to-end tests run the real
// server; these only check what the components do with its answers.
import { vi } from 'vitest';

export type Answer = [status: number, body?: unknown] | ((body: unknown) => [number, unknown?]);

export interface Call {
  method: string;
  path: string;
  body: unknown;
}

export function stubApi(routes: Record<string, Answer>) {
  const calls: Call[] = [];
  const fetchMock = vi.fn(async (url: string, init: RequestInit = {}) => {
    const method = init.method ?? 'GET';
    const path = url.replace(/^\/api/, '');
    const body = typeof init.body === 'string' ? tryJson(init.body) : undefined;
    calls.push({ method, path, body });
    const answer = routes[`${method} ${path}`];
    if (!answer) return new Response(JSON.stringify({ error: `no stub for ${method} ${path}` }), { status: 599 });
    const [status, payload] = typeof answer === 'function' ? answer(body) : answer;
    const text = payload === undefined ? null : JSON.stringify(payload);
    return new Response(status === 204 ? null : text, { status, statusText: statusText(status) });
  });
  vi.stubGlobal('fetch', fetchMock);
  return {
    calls,
    /** Calls other than reads. */
    writes: () => calls.filter((c) => c.method !== 'GET'),
  };
}

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function statusText(status: number): string {
  return { 200: 'OK', 201: 'Created', 204: 'No Content', 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 500: 'Internal Server Error' }[status] ?? '';
}

/** Signs the browser in, as far as the console can tell (the marker cookie). */
export function setSessionCookie(): void {
  document.cookie = 'semaphore=1; Path=/';
}
