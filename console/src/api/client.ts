// The one way the console talks to the Bastion API: same-origin fetch with the
// session cookie, and errors that carry the server's own message.

/** An HTTP failure from the API, with the message to show the user. */
export class ApiError extends Error {
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
  }
}

// The server answers failures with {"error": "..."}; anything else (a proxy's
// HTML page, an empty body) falls back to the status line.
async function errorFrom(res: Response): Promise<ApiError> {
  let message = '';
  try {
    const body: unknown = await res.json();
    if (body && typeof body === 'object' && 'error' in body && typeof body.error === 'string') {
      message = body.error;
    }
  } catch {
    // Not JSON: use the status line below.
  }
  return new ApiError(res.status, message || `${res.status} ${res.statusText}`.trim());
}

/** GETs /api{path} and returns the decoded JSON body. */
export async function apiGet<T>(path: string): Promise<T> {
  const res = await fetch(`/api${path}`, {
    credentials: 'same-origin',
    headers: { Accept: 'application/json' },
  });
  if (!res.ok) {
    throw await errorFrom(res);
  }
  return (await res.json()) as T;
}
