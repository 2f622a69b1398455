import { ApiError } from './client';

/**
 * The text to show for a failed call (docs/features.md §8): the server's `error` field;
 * else the client's message, unless that would only restate the status code
 * ("Request failed with status code 502"), in which case the status code and
 * its text ("502 Bad Gateway"). A 401 always shows its status code and text,
 * followed by what the server said, if anything.
 */
export function errorMessage(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.status === 401) {
      return error.serverMessage ? `${error.statusLine}: ${error.serverMessage}` : error.statusLine;
    }
    return error.serverMessage ?? error.statusLine;
  }
  if (error instanceof Error && error.message) {
    // A network failure ("Failed to fetch") or a bug: the client's own words.
    return error.message;
  }
  return String(error);
}
