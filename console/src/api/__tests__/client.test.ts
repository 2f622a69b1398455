import { describe, expect, it, vi } from 'vitest';
import { ApiError, apiGet } from '../client';

function stubFetch(body: string, init: ResponseInit) {
  const fetchMock = vi.fn(() => Promise.resolve(new Response(body, init)));
  vi.stubGlobal('fetch', fetchMock);
  return fetchMock;
}

describe('apiGet', () => {
  it('fetches under /api with the session cookie and returns the JSON body', async () => {
    const fetchMock = stubFetch('{"version":"1.0.0"}', { status: 200 });

    await expect(apiGet('/info')).resolves.toEqual({ version: '1.0.0' });
    expect(fetchMock).toHaveBeenCalledWith(
      '/api/info',
      expect.objectContaining({ credentials: 'same-origin' }),
    );
  });

  it("throws the server's error message", async () => {
    stubFetch('{"error":"Project not found"}', { status: 404, statusText: 'Not Found' });

    const error = await apiGet('/project/9').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 404, message: 'Project not found' });
  });

  it('falls back to the status line when the body has no error message', async () => {
    stubFetch('<html>bad gateway</html>', { status: 502, statusText: 'Bad Gateway' });

    await expect(apiGet('/info')).rejects.toThrow('502 Bad Gateway');
  });
});
