import { useQuery } from '@tanstack/react-query';
import { apiGet } from '../../api/client';
import { queryKeys } from '../../api/queryKeys';
import type { Template } from '../templates/types';

/** A template (GET /project/{id}/templates/{tid}): what a re-run of its task needs. */
export function useTaskTemplate(projectId: number, templateId: number | undefined) {
  return useQuery({
    queryKey: queryKeys.template(projectId, templateId ?? 0),
    queryFn: () => apiGet<Template>(`/project/${projectId}/templates/${templateId}`),
    enabled: !!templateId,
  });
}
