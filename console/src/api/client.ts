// The one way the console talks to the Bastion API: same-origin fetch with the
// session cookie, and errors that carry what the server said.
//
// Mutating calls need nothing extra to pass the server's cross-origin check
// (apiserver/csrf.go): it trusts the Sec-Fetch-Site header that every browser
// sends, and a same-origin fetch sends "same-origin".

// Status texts for the codes the console may meet, for servers (HTTP/2) that
// send none.
const statusTexts: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/** An HTTP failure from the API. */
export class ApiError extends Error {
  readonly status: number;
  readonly statusText: string;
  /** The server's `error` field, when the body had one. */
  readonly serverMessage?: string;

  constructor(status: number, statusText: string, serverMessage?: string) {
    const text = statusText || statusTexts[status] || '';
    super(serverMessage || `${status} ${text}`.trim());
    this.name = 'ApiError';
    this.status = status;
    this.statusText = text;
    this.serverMessage = serverMessage || undefined;
  }

  /** "401 Unauthorized": the status code and its text. */
  get statusLine(): string {
    return `${this.status} ${this.statusText}`.trim();
  }
}

// The server answers failures with {"error": "..."}; anything else (a proxy's
// HTML page, an empty body) leaves only the status line.
async function errorFrom(res: Response): Promise<ApiError> {
  let message: string | undefined;
  try {
    const body: unknown = await res.json();
    if (body && typeof body === 'object' && 'error' in body && typeof body.error === 'string') {
      message = body.error;
    }
  } catch {
    // Not JSON.
  }
  return new ApiError(res.status, res.statusText, message);
}

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** The raw fetch of /api{path}: the caller reads the body. Throws ApiError. */
export async function apiFetch(
  method: Method,
  path: string,
  body?: unknown,
  { raw = false }: { raw?: boolean } = {},
): Promise<Response> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  let payload: string | undefined;
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    payload = raw ? String(body) : JSON.stringify(body);
  }
  const res = await fetch(`/api${path}`, {
    method,
    credentials: 'same-origin',
    headers,
    body: payload,
  });
  if (!res.ok) {
    throw await errorFrom(res);
  }
  return res;
}

// 204 and empty 200 answers have no JSON to decode.
async function jsonOf<T>(res: Response): Promise<T> {
  const text = await res.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

/** GETs /api{path} and returns the decoded JSON body. */
export async function apiGet<T>(path: string): Promise<T> {
  return jsonOf<T>(await apiFetch('GET', path));
}

/** POSTs a JSON body; returns the answer's JSON, if any. */
export async function apiPost<T = void>(path: string, body?: unknown): Promise<T> {
  return jsonOf<T>(await apiFetch('POST', path, body ?? {}));
}

/** POSTs text as it is (a backup file), declared as JSON. */
export async function apiPostRaw<T>(path: string, text: string): Promise<T> {
  return jsonOf<T>(await apiFetch('POST', path, text, { raw: true }));
}

export async function apiPut(path: string, body: unknown): Promise<void> {
  await apiFetch('PUT', path, body);
}

export async function apiDelete(path: string): Promise<void> {
  await apiFetch('DELETE', path);
}
