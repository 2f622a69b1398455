import { QueryClient, QueryObserver } from '@tanstack/react-query';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setSessionCookie } from '../../test/api';
import { ApiError } from '../client';
import { LIVE_RECONNECT_MS, LiveUpdates, outputKey, type LiveLog, type LogLine } from '../live';

/** A WebSocket stand-in the test drives: open, message, close. */
class FakeSocket {
  static OPEN = 1;
  readyState = 0;
  onopen: (() => void) | null = null;
  onmessage: ((event: { data: string }) => void) | null = null;
  onclose: (() => void) | null = null;
  closed = false;
  constructor(readonly url: string) {}
  open() {
    this.readyState = 1;
    this.onopen?.();
  }
  send(message: object) {
    this.onmessage?.({ data: JSON.stringify(message) });
  }
  drop() {
    this.readyState = 3;
    this.onclose?.();
  }
  close() {
    this.closed = true;
    this.readyState = 3;
    this.onclose?.();
  }
}

const task = (id: number, extra = {}) => ({ id, template_id: 7, project_id: 1, status: 'running', start: null, end: null, ...extra });

function setup() {
  const client = new QueryClient();
  const sockets: FakeSocket[] = [];
  const live = new LiveUpdates(client, (url) => {
    const socket = new FakeSocket(url);
    sockets.push(socket);
    return socket as unknown as WebSocket;
  });
  return { client, sockets, live };
}

class RecordingLog implements LiveLog {
  lines: LogLine[] = [];
  resyncs = 0;
  append(line: LogLine) {
    this.lines.push(line);
  }
  resync() {
    this.resyncs++;
  }
}

beforeEach(() => {
  vi.useFakeTimers();
  setSessionCookie();
});
afterEach(() => vi.useRealTimers());

describe('live updates over /api/ws (spec §4)', () => {
  it('merges an update into every cached copy of the task', () => {
    const { client, sockets, live } = setup();
    client.setQueryData(['project', 1, 'tasks', 'last'], [task(5), task(4, { status: 'success' })]);
    client.setQueryData(['project', 1, 'tasks', 5], task(5));
    client.setQueryData(['project', 1, 'templates'], [{ id: 7, name: 'Site', survey_vars: [], last_task: task(5) }]);
    live.acquire();
    expect(sockets[0].url).toMatch(/^ws:\/\/.*\/api\/ws$/);
    sockets[0].open();
    sockets[0].send({ type: 'update', task_id: 5, project_id: 1, template_id: 7, status: 'success', start: 'a', end: 'b', version: null });
    expect(client.getQueryData<{ status: string }[]>(['project', 1, 'tasks', 'last'])!.map((t) => t.status)).toEqual(['success', 'success']);
    expect(client.getQueryData(['project', 1, 'tasks', 5])).toMatchObject({ status: 'success', start: 'a', end: 'b' });
    expect(client.getQueryData<{ last_task: object }[]>(['project', 1, 'templates'])![0].last_task).toMatchObject({ status: 'success' });
  });

  // Issue #20: the log showed the last line, the dialog Running for good.
  // The task's read was answered while it ran, and its end overtook that
  // answer on the socket; the answer must not have the last word.
  it('reads a task again when its update overtakes a read under way', async () => {
    const { client, sockets, live } = setup();
    let server = task(5);
    const fetchTask = vi.fn(() => {
      const answer = server;
      return new Promise((resolve) => setTimeout(() => resolve(answer), 100));
    });
    const observer = new QueryObserver(client, { queryKey: ['project', 1, 'tasks', 5], queryFn: fetchTask });
    const unsubscribe = observer.subscribe(() => {});
    live.acquire();
    sockets[0].open();
    server = task(5, { status: 'success', end: 'b' });
    sockets[0].send({ type: 'update', task_id: 5, project_id: 1, template_id: 7, status: 'success', end: 'b' });
    await vi.advanceTimersByTimeAsync(100);
    expect(client.getQueryData(['project', 1, 'tasks', 5])).toMatchObject({ status: 'running' }); // the stale answer landed
    await vi.advanceTimersByTimeAsync(500);
    expect(fetchTask).toHaveBeenCalledTimes(2);
    expect(client.getQueryData(['project', 1, 'tasks', 5])).toMatchObject({ status: 'success', end: 'b' });
    unsubscribe();
  });

  // A rejected task showed Stopped with "Waiting for approval" still
  // under it: the frame has no message, and nothing read the task again.
  it('reads a task again when its status changes, for the fields the frame does not carry', async () => {
    const { client, sockets, live } = setup();
    let server = task(5, { status: 'waiting_confirmation', message: 'Waiting for approval' });
    const fetchTask = vi.fn(async () => server);
    const observer = new QueryObserver(client, { queryKey: ['project', 1, 'tasks', 5], queryFn: fetchTask });
    const unsubscribe = observer.subscribe(() => {});
    await vi.advanceTimersByTimeAsync(0);
    live.acquire();
    sockets[0].open();
    server = task(5, { status: 'stopped', message: 'Rejected by Otto Owner: change freeze' });
    sockets[0].send({ type: 'update', task_id: 5, project_id: 1, template_id: 7, status: 'stopped' });
    expect(client.getQueryData(['project', 1, 'tasks', 5])).toMatchObject({ status: 'stopped', message: 'Waiting for approval' });
    await vi.advanceTimersByTimeAsync(500);
    expect(client.getQueryData(['project', 1, 'tasks', 5])).toMatchObject({ status: 'stopped', message: 'Rejected by Otto Owner: change freeze' });
    // The same status again (a start or end time only) reads nothing more.
    fetchTask.mockClear();
    sockets[0].send({ type: 'update', task_id: 5, project_id: 1, template_id: 7, status: 'stopped', end: 'b' });
    await vi.advanceTimersByTimeAsync(500);
    expect(fetchTask).not.toHaveBeenCalled();
    unsubscribe();
  });

  it('reloads a list that lacks a new task', async () => {
    const { client, sockets, live } = setup();
    const fetchList = vi.fn(async () => [task(6), task(5)]);
    await client.prefetchQuery({ queryKey: ['project', 1, 'tasks', 'last'], queryFn: fetchList });
    client.getQueryCache().find({ queryKey: ['project', 1, 'tasks', 'last'] })!.setData([task(5)]);
    live.acquire();
    sockets[0].open();
    sockets[0].send({ type: 'update', task_id: 6, project_id: 1, template_id: 7, status: 'waiting' });
    fetchList.mockClear();
    await vi.advanceTimersByTimeAsync(300);
    // Not observed, so only marked stale; an observed list refetches at once.
    expect(client.getQueryState(['project', 1, 'tasks', 'last'])!.isInvalidated).toBe(true);
  });

  it('appends a log line to the open output of its task only', () => {
    const { client, sockets, live } = setup();
    const log = new RecordingLog();
    client.setQueryData(outputKey(1, 5), log);
    live.acquire();
    sockets[0].open();
    sockets[0].send({ type: 'log', task_id: 5, project_id: 1, time: 't1', output: 'PLAY [all]' });
    sockets[0].send({ type: 'log', task_id: 6, project_id: 1, time: 't2', output: 'other task' });
    sockets[0].send({ type: 'log', task_id: 5, project_id: 1, time: 't3', output: 'boom', stream: 'stderr' });
    expect(log.lines).toEqual([
      { time: 't1', output: 'PLAY [all]' },
      { time: 't3', output: 'boom', stream: 'stderr' },
    ]);
  });

  it('reconnects 2000 ms after an unexpected close and re-reads the missed lines', async () => {
    const { client, sockets, live } = setup();
    const log = new RecordingLog();
    client.setQueryData(outputKey(1, 5), log);
    live.acquire();
    sockets[0].open();
    sockets[0].drop();
    await vi.advanceTimersByTimeAsync(LIVE_RECONNECT_MS - 1);
    expect(sockets).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(sockets).toHaveLength(2);
    expect(log.resyncs).toBe(0);
    sockets[1].open();
    expect(log.resyncs).toBe(1);
  });

  it('stops for good when the last screen lets go', async () => {
    const { sockets, live } = setup();
    const release = live.acquire();
    sockets[0].open();
    release();
    expect(sockets[0].closed).toBe(true);
    await vi.advanceTimersByTimeAsync(LIVE_RECONNECT_MS * 2);
    expect(sockets).toHaveLength(1);
  });

  it('does not reconnect once signed out', async () => {
    const { sockets, live } = setup();
    live.acquire();
    sockets[0].open();
    document.cookie = 'semaphore=; Max-Age=0; Path=/';
    sockets[0].drop();
    await vi.advanceTimersByTimeAsync(LIVE_RECONNECT_MS * 2);
    expect(sockets).toHaveLength(1);
  });

  it('stops when a call fails with 401', async () => {
    const { client, sockets, live } = setup();
    live.acquire();
    sockets[0].open();
    await client
      .fetchQuery({ queryKey: ['project', 1, 'tasks', 'last'], queryFn: () => Promise.reject(new ApiError(401, 'Unauthorized')), retry: false })
      .catch(() => {});
    expect(sockets[0].closed).toBe(true);
    await vi.advanceTimersByTimeAsync(LIVE_RECONNECT_MS * 2);
    expect(sockets).toHaveLength(1);
  });
});
