// Live updates over /api/ws (docs/features.md §4, api-contract.md "Websocket"): one
// socket for the whole console, whose messages update the react-query
// cache, so every screen showing a task (History, the template list, the
// template's tasks, the task log) stays live without a second store.
//
//  - "update" merges its fields into every cached copy of the task, and
//    reads again what was being read when it came (the read may predate it);
//  - "log" appends a line to the task's output, when the output is cached
//    (its log is open): see LiveLog;
//  - an unexpected close reconnects after 2 s; once back, every open log
//    re-reads the lines it missed and the task lists reload;
//  - the socket stops when the last screen that needs it goes away, when
//    the session is gone (sign out), or when a call fails with 401.
import type { Query, QueryClient, QueryKey } from '@tanstack/react-query';
import { useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { hasSessionCookie } from '../app/session';
import { ApiError } from './client';

/** docs/features.md §9: the websocket reconnects 2000 ms after an unexpected close. */
export const LIVE_RECONNECT_MS = 2000;

export interface LogLine {
  time: string;
  output: string;
  /** "stderr" on a line the task's program wrote to its stderr; absent on every other. */
  stream?: 'stderr';
}

/**
 * A task's output as the cache holds it, under the task's key plus
 * "output": the socket appends to it, and asks it to re-read what it may
 * have missed while disconnected.
 */
export interface LiveLog {
  append(line: LogLine): void;
  resync(): void;
}

export interface UpdateMessage {
  type: 'update';
  task_id: number;
  project_id: number;
  template_id?: number;
  status?: string;
  start?: string | null;
  end?: string | null;
  version?: string | null;
}

export interface LogMessage extends LogLine {
  type: 'log';
  task_id: number;
  project_id: number;
}

type Message = UpdateMessage | LogMessage;

/** The cache key of a task's output (resources/tasks/keys.ts builds the same). */
export function outputKey(projectId: number, taskId: number): QueryKey {
  return ['project', projectId, 'tasks', taskId, 'output'];
}

function isLiveLog(data: unknown): data is LiveLog {
  return !!data && typeof (data as LiveLog).append === 'function' && typeof (data as LiveLog).resync === 'function';
}

type Row = Record<string, unknown>;
const isRow = (value: unknown): value is Row => !!value && typeof value === 'object' && !Array.isArray(value);
// Templates carry survey_vars; tasks carry template_id and status.
const isTemplate = (row: Row) => 'survey_vars' in row || 'last_task' in row;
const isTask = (row: Row) => 'status' in row && 'template_id' in row && !isTemplate(row);

/** The fields of an update that belong to the task. */
function changes(message: UpdateMessage): Row {
  const { type: _type, task_id: _task, project_id: _project, ...fields } = message;
  return fields;
}

const isOutput = (key: QueryKey) => key.includes('output');

/**
 * The template a cached list belongs to: ['project', p, 'templates', tid, …]
 * lists that template's tasks; ['project', p, 'tasks', …] lists all.
 */
function listTemplate(key: QueryKey): number | undefined {
  return key[2] === 'templates' && typeof key[3] === 'number' ? key[3] : undefined;
}

/**
 * Applies an update to the cache: merges it into every cached copy of the
 * task, and returns the lists that should hold the task but do not (a new
 * task) or whose template's last task it now is, to be reloaded.
 */
export function applyUpdate(client: QueryClient, message: UpdateMessage): Query[] {
  const fields = changes(message);
  const stale: Query[] = [];
  for (const query of client.getQueryCache().findAll({ queryKey: ['project', message.project_id] })) {
    const { queryKey } = query;
    if (isOutput(queryKey)) continue;
    // A read under way may have been answered before this update: its
    // answer would overwrite the update, or (a task not loaded yet) the
    // update has nothing to merge into. It is read again once more, so a
    // task's end is never lost to a read that overtook it.
    if (query.state.fetchStatus === 'fetching' && showsTasks(queryKey)) stale.push(query);
    const data: unknown = query.state.data;
    if (data === undefined) continue;
    if (Array.isArray(data)) {
      let found = false;
      let changed = false;
      const next = data.map((row: unknown) => {
        if (!isRow(row)) return row;
        if (isTask(row) && row.id === message.task_id) {
          found = true;
          changed = true;
          return { ...row, ...fields };
        }
        if (isTemplate(row) && row.id === message.template_id) {
          const last = isRow(row.last_task) ? row.last_task : undefined;
          if (last?.id === message.task_id) {
            changed = true;
            return { ...row, last_task: { ...last, ...fields } };
          }
          if (!last || (typeof last.id === 'number' && last.id < message.task_id)) stale.push(query);
        }
        return row;
      });
      if (changed) client.setQueryData(queryKey, next);
      const tasks = data.length === 0 || data.some((row) => isRow(row) && isTask(row));
      const template = listTemplate(queryKey);
      const holds = queryKey[2] === 'tasks' || (template !== undefined && template === message.template_id);
      if (!found && tasks && holds && !isTemplateList(queryKey)) stale.push(query);
    } else if (isRow(data) && isTask(data) && data.id === message.task_id) {
      client.setQueryData(queryKey, { ...data, ...fields });
      // An update carries the fields of Semaphore's frame only; a new
      // status often comes with others (a rejection's message, an end's
      // commit): the task's own view reads the whole task again.
      if (message.status !== undefined && message.status !== data.status) stale.push(query);
    }
  }
  return stale;
}

/** The queries a task's fields appear in: tasks, task lists and template lists. */
function showsTasks(key: QueryKey): boolean {
  return key[2] === 'tasks' || key[2] === 'templates' || key[2] === 'views';
}

// ['project', p, 'templates'] (and views' template lists) list templates,
// not tasks, even when empty.
function isTemplateList(key: QueryKey): boolean {
  return (key[2] === 'templates' && key.length === 3) || (key[2] === 'views' && key.includes('templates'));
}

/** Sends a log line to its task's output, if that output is cached (its log is open). */
export function applyLog(client: QueryClient, message: LogMessage): void {
  const output: unknown = client.getQueryData(outputKey(message.project_id, message.task_id));
  if (isLiveLog(output)) output.append({ time: message.time, output: message.output, stream: message.stream });
}

/** After a reconnect: open logs re-read what they missed; task lists and tasks reload. */
function catchUp(client: QueryClient): void {
  for (const query of client.getQueryCache().findAll({ queryKey: ['project'] })) {
    const data: unknown = query.state.data;
    if (isLiveLog(data)) data.resync();
  }
  void client.invalidateQueries({
    predicate: ({ queryKey }) => queryKey[0] === 'project' && !isOutput(queryKey) && (queryKey[2] === 'tasks' || queryKey[2] === 'templates'),
  });
}

type Open = (url: string) => WebSocket;

function socketURL(): string {
  const { protocol, host } = window.location;
  return `${protocol === 'https:' ? 'wss:' : 'ws:'}//${host}/api/ws`;
}

/** The one socket: started by the screens that need it, shared by all. */
export class LiveUpdates {
  private socket?: WebSocket;
  private timer?: ReturnType<typeof setTimeout>;
  private users = 0;
  private stopped = true;
  private reconnecting = false;
  private reloadTimer?: ReturnType<typeof setTimeout>;
  private toReload = new Set<Query>();
  private unsubscribeCache?: () => void;

  constructor(
    private readonly client: QueryClient,
    private readonly open: Open = (url) => new WebSocket(url),
    private readonly reconnectMs = LIVE_RECONNECT_MS,
  ) {}

  /** A screen needs live updates until it calls the returned release. */
  acquire(): () => void {
    this.users++;
    if (this.users === 1) this.start();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.users--;
      if (this.users === 0) this.stop();
    };
  }

  get isOpen(): boolean {
    return this.socket?.readyState === WebSocket.OPEN;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    // A call answered 401 means the session is gone: stop, as on sign out.
    this.unsubscribeCache = this.client.getQueryCache().subscribe((event) => {
      const error = event.query.state.error;
      if (event.type === 'updated' && error instanceof ApiError && error.status === 401) this.stop();
    });
    this.connect();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    clearTimeout(this.reloadTimer);
    this.reloadTimer = undefined;
    this.toReload.clear();
    this.unsubscribeCache?.();
    this.unsubscribeCache = undefined;
    const socket = this.socket;
    this.socket = undefined;
    socket?.close(1000, 'done');
  }

  private connect(): void {
    const socket = this.open(socketURL());
    this.socket = socket;
    socket.onopen = () => {
      if (this.reconnecting) catchUp(this.client);
      this.reconnecting = false;
    };
    socket.onmessage = (event: MessageEvent) => {
      if (typeof event.data === 'string') this.receive(event.data);
    };
    socket.onclose = () => {
      if (this.socket !== socket || this.stopped) return; // closed by stop()
      this.socket = undefined;
      // Signed out (in this tab or another): nobody to reconnect for.
      if (!hasSessionCookie()) {
        this.stop();
        return;
      }
      this.reconnecting = true;
      this.timer = setTimeout(() => {
        if (!this.stopped) this.connect();
      }, this.reconnectMs);
    };
  }

  /** Handles one frame; exported through the class for tests. */
  receive(frame: string): void {
    let message: Message;
    try {
      message = JSON.parse(frame) as Message;
    } catch {
      return; // not our protocol
    }
    if (message.type === 'log') applyLog(this.client, message);
    else if (message.type === 'update') this.reloadSoon(applyUpdate(this.client, message));
  }

  // New tasks reach lists by reloading them; a burst of updates (a build
  // and its autorun deploys) reloads each list once.
  private reloadSoon(queries: Query[]): void {
    if (queries.length === 0) return;
    for (const query of queries) this.toReload.add(query);
    if (this.reloadTimer) return;
    this.reloadTimer = setTimeout(() => {
      this.reloadTimer = undefined;
      const reload = [...this.toReload];
      this.toReload.clear();
      for (const query of reload) void this.client.invalidateQueries({ queryKey: query.queryKey, exact: true });
    }, 250);
  }
}

const shared = new WeakMap<QueryClient, LiveUpdates>();

/** The console's one LiveUpdates for a query client. */
export function liveUpdatesFor(client: QueryClient): LiveUpdates {
  let live = shared.get(client);
  if (!live) {
    live = new LiveUpdates(client);
    shared.set(client, live);
  }
  return live;
}

/** Keeps the shared socket open while the calling screen is mounted. */
export function useLiveUpdates(): void {
  const client = useQueryClient();
  useEffect(() => liveUpdatesFor(client).acquire(), [client]);
}
