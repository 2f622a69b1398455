import { describe, expect, it } from 'vitest';
import { stubApi } from '../../test/api';
import { ApiError, apiGet, apiPost } from '../client';
import { errorMessage } from '../errors';

describe('errorMessage (spec §8)', () => {
  it("shows the server's error field", () => {
    expect(errorMessage(new ApiError(400, 'Bad Request', 'Project name is required'))).toBe('Project name is required');
  });

  it('shows the status code and text when the server said nothing but a status', () => {
    expect(errorMessage(new ApiError(502, 'Bad Gateway'))).toBe('502 Bad Gateway');
    expect(errorMessage(new ApiError(503, ''))).toBe('503 Service Unavailable');
  });

  it('shows a 401 as its status code and text, then what the server said', () => {
    expect(errorMessage(new ApiError(401, 'Unauthorized'))).toBe('401 Unauthorized');
    expect(errorMessage(new ApiError(401, 'Unauthorized', 'session expired'))).toBe('401 Unauthorized: session expired');
  });

  it("shows the client's own message when there was no answer", () => {
    expect(errorMessage(new TypeError('Failed to fetch'))).toBe('Failed to fetch');
  });
});

describe('the API client', () => {
  it('fetches under /api with the session cookie and returns the JSON body', async () => {
    const api = stubApi({ 'GET /info': [200, { version: '1.0.0' }] });
    await expect(apiGet('/info')).resolves.toEqual({ version: '1.0.0' });
    expect(api.calls).toEqual([{ method: 'GET', path: '/info', body: undefined }]);
    expect(fetch).toHaveBeenCalledWith('/api/info', expect.objectContaining({ credentials: 'same-origin' }));
  });

  it('sends JSON bodies and reads empty answers', async () => {
    const api = stubApi({ 'POST /auth/logout': [204] });
    await expect(apiPost('/auth/logout')).resolves.toBeUndefined();
    expect(api.calls[0].body).toEqual({});
  });

  it("throws the server's error message with the status", async () => {
    stubApi({ 'GET /project/9': [404, { error: 'Project not found' }] });
    const error = await apiGet('/project/9').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 404, message: 'Project not found', serverMessage: 'Project not found' });
  });

  it('falls back to the status line when the body is not an error object', async () => {
    stubApi({ 'GET /info': [502, '<html>bad gateway</html>'] });
    const error = await apiGet('/info').catch((e: unknown) => e);
    expect(errorMessage(error)).toBe('502 Bad Gateway');
  });
});
