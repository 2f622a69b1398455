import { useSyncExternalStore } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { apiFetch, apiGet } from '../../api/client';
import type { LogLine } from '../../api/live';
import { taskKeys } from './keys';
import { TaskOutput } from './taskOutput';

const noSubscribe = () => () => {};

/** Reads GET /api{path} as text, a chunk at a time, handing over its complete lines. */
async function streamRaw(path: string, onLines: (lines: string[]) => void): Promise<void> {
  const res = await apiFetch('GET', path);
  if (!res.body) {
    const text = await res.text();
    if (text) onLines(text.replace(/\n$/, '').split('\n'));
    return;
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let rest = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    const lines = (rest + value).split('\n');
    rest = lines.pop() ?? '';
    if (lines.length) onLines(lines);
  }
  // Every line ends with a newline: anything left was cut short, and the
  // paged read that follows brings it whole.
}

/**
 * A task's output: streamed as text first (GET …/raw), then read page by
 * page (GET …/output?offset=&limit=) from where the stream ended, kept in
 * the cache for the socket to append to, and re-read from where it stops
 * when asked again (a reopened log catches up; it never starts over).
 */
export function useTaskOutput(projectId: number, taskId: number) {
  const client = useQueryClient();
  const key = taskKeys.output(projectId, taskId);
  const query = useQuery({
    queryKey: key,
    queryFn: () => {
      const held = client.getQueryData<TaskOutput>(key);
      if (held) {
        held.resync();
        return held;
      }
      const base = `/project/${projectId}/tasks/${taskId}`;
      const output = new TaskOutput(
        (offset, limit) => apiGet<LogLine[]>(`${base}/output?offset=${offset}&limit=${limit}`),
        undefined,
        (onLines) => streamRaw(`${base}/raw`, onLines),
        () => apiGet<number[]>(`${base}/stderr`),
      );
      void output.sync();
      return output;
    },
    // Appended to in place: never stale, never replaced.
    staleTime: Infinity,
    gcTime: 60_000,
    structuralSharing: false,
  });
  const output = query.data;
  const version = useSyncExternalStore(output?.subscribe ?? noSubscribe, output?.getVersion ?? (() => -1));
  return { output, version };
}
