import { useMutation, useQueryClient } from '@tanstack/react-query';
import { ApiError, apiDelete, apiPost, apiPut } from '../../api/client';
import { queryKeys } from '../../api/queryKeys';
import { templateRequest } from './formValues';
import type { Schedule, Template } from './types';
import type { TemplateFormValues } from './validation';

/** The server refused the cron expression: shown at the cron field, not as a form error. */
export class CronError extends Error {}

interface SaveInput {
  values: TemplateFormValues;
  existing?: Template;
  /** The template's schedule the editor shows, if it has one. */
  schedule?: Schedule;
}

/**
 * Saves the editor (docs/features.md §5): the cron expression, if any, is validated by
 * the server first (POST schedules/validate), so a bad one saves nothing;
 * then the template; then its schedule is created, updated or deleted to
 * match the cron field and the "only on a new commit" switch, unless a
 * GitOps tool manages it (docs/gitops.md: the editor shows it read-only).
 * Answers the template's id.
 */
export function useSaveTemplate(projectId: number) {
  const queryClient = useQueryClient();
  const base = `/project/${projectId}`;
  return useMutation({
    mutationFn: async ({ values, existing, schedule }: SaveInput): Promise<number> => {
      const cron = values.cron.trim();
      if (cron) {
        try {
          await apiPost(`${base}/schedules/validate`, { cron_format: cron });
        } catch (error) {
          if (error instanceof ApiError && error.status === 400) throw new CronError(error.message);
          throw error;
        }
      }
      const body = templateRequest(values, existing);
      let id: number;
      if (existing) {
        await apiPut(`${base}/templates/${existing.id}`, body);
        id = existing.id;
      } else {
        id = (await apiPost<Template>(`${base}/templates`, body)).id;
      }
      if (schedule?.managed_by) return id;
      const scheduleBody = {
        template_id: id,
        cron_format: cron,
        name: '',
        repository_id: values.cronOnlyOnNewCommit ? Number(values.repositoryId) : null,
      };
      if (cron && schedule) await apiPut(`${base}/schedules/${schedule.id}`, { id: schedule.id, ...scheduleBody });
      else if (cron) await apiPost(`${base}/schedules`, scheduleBody);
      else if (schedule) await apiDelete(`${base}/schedules/${schedule.id}`);
      return id;
    },
    onSettled: () => {
      void queryClient.invalidateQueries({ queryKey: queryKeys.templates(projectId) });
      void queryClient.invalidateQueries({ queryKey: queryKeys.schedules(projectId) });
    },
  });
}
