// The task pod settings of a project or a template (docs/features.md, "Where
// a task runs"). Loaded only when the settings page or the template editor
// shows them (lazy.ts), with their words in the "taskpods" catalog.
import { useState, type FormEvent } from 'react';
import { ActionGroup, Button, Card, CardBody, CardTitle, ExpandableSection, Form, Grid, GridItem } from '@patternfly/react-core';
import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { apiGet } from '../../api/client';
import { errorMessage } from '../../api/errors';
import { queryKeys } from '../../api/queryKeys';
import { useNotify } from '../../app/Notifications';
import { useProjectAccess } from '../../app/permissions';
import { FormDisabledContext, SaveError, TextField } from '../../components/FormFields';
import { SelectField } from '../../components/SelectField';
import { TextAreaField } from '../../components/TextAreaField';
import { useUpdateProject } from '../projects/useProjects';
import {
  emptyTaskPods,
  formatNodeSelector,
  formatTolerations,
  hasSettings,
  parseNodeSelector,
  parseTolerations,
  type TaskPodOptions,
  type TaskPods,
} from './types';

export interface TaskPodsFieldsProps {
  /** A project's settings are defaults; a template's override them. */
  scope: 'project' | 'template';
  value: TaskPods | undefined;
  onChange(value: TaskPods): void;
}

const resourceFields = [
  ['requests', 'cpu', 'CPU request'],
  ['requests', 'memory', 'Memory request'],
  ['limits', 'cpu', 'CPU limit'],
  ['limits', 'memory', 'Memory limit'],
] as const;

export function useTaskPodOptions() {
  return useQuery({ queryKey: queryKeys.taskPodOptions, queryFn: () => apiGet<TaskPodOptions>('/task_pods/options'), staleTime: Infinity });
}

/** The fields; in the template editor they fold away until opened, or while a template has none. */
export default function TaskPodsFields({ scope, value, onChange }: TaskPodsFieldsProps) {
  const { t } = useTranslation('taskpods');
  const [expanded, setExpanded] = useState(scope === 'project' || hasSettings(value));
  const fields = <Fields scope={scope} value={value} onChange={onChange} />;
  if (scope === 'project') return fields;
  return (
    <ExpandableSection toggleText={t('Where tasks run')} isExpanded={expanded} onToggle={(_e, open) => setExpanded(open)}>
      {fields}
    </ExpandableSection>
  );
}

function Fields({ scope, value, onChange }: TaskPodsFieldsProps) {
  const { t } = useTranslation('taskpods');
  const pods = value ?? emptyTaskPods();
  const options = useTaskPodOptions();
  // The text the user types; the settings follow it, parsed.
  const [selector, setSelector] = useState(() => formatNodeSelector(pods.node_selector));
  const [tolerations, setTolerations] = useState(() => formatTolerations(pods.tolerations));
  const change = (next: Partial<TaskPods>) => onChange({ ...pods, ...next });
  const images = options.data?.runner_images ?? [];
  const accounts = options.data?.service_accounts ?? [];
  const id = (name: string) => `${scope}-task-pods-${name}`;

  return (
    <>
      <p className="pf-v6-u-mb-md">
        {scope === 'project'
          ? t('Defaults for the pods of this project’s tasks. A template may override each of them.')
          : t('Each setting made here replaces the project’s; each request or limit replaces the project’s for that resource. Empty fields keep the project’s.')}
      </p>
      <Grid hasGutter md={6}>
        <GridItem>
          <SelectField
            id={id('image')}
            label={t('Runner image')}
            value={pods.runner_image}
            placeholder={scope === 'project' ? t('The image of the template’s app') : t('The project’s choice')}
            emptyIsValue
            options={images.map((i) => ({ value: i.name, label: `${i.name} (${i.image})` }))}
            isLoading={options.isPending}
            onChange={(runner_image) => change({ runner_image })}
          />
        </GridItem>
        <GridItem>
          <SelectField
            id={id('service-account')}
            label={t('Service account')}
            value={pods.service_account}
            placeholder={t('None: no Kubernetes credentials')}
            emptyIsValue
            options={accounts.map((name) => ({ value: name, label: name }))}
            isLoading={options.isPending}
            isDisabled={accounts.length === 0 && !pods.service_account}
            helper={accounts.length === 0 ? t('The cluster admin allows none.') : undefined}
            onChange={(service_account) => change({ service_account })}
          />
        </GridItem>
        <GridItem>
          <TextAreaField
            id={id('node-selector')}
            label={t('Node selector')}
            value={selector}
            rows={3}
            isCode
            placeholder="pool=automation"
            helper={t('One label per line: key=value.')}
            onChange={(text) => {
              setSelector(text);
              change({ node_selector: parseNodeSelector(text) });
            }}
          />
        </GridItem>
        <GridItem>
          <TextAreaField
            id={id('tolerations')}
            label={t('Tolerations')}
            value={tolerations}
            rows={3}
            isCode
            placeholder="dedicated=automation:NoSchedule"
            helper={t('One per line, as a taint: key=value:Effect, or key:Effect for any value.')}
            onChange={(text) => {
              setTolerations(text);
              change({ tolerations: parseTolerations(text) });
            }}
          />
        </GridItem>
        {resourceFields.map(([list, resource, label]) => (
          <GridItem key={`${list}-${resource}`} md={3}>
            <TextField
              id={id(`${resource}-${list}`)}
              label={t(label)}
              value={pods.resources[list][resource] ?? ''}
              placeholder={resource === 'cpu' ? '500m' : '1Gi'}
              onChange={(text) => change({ resources: { ...pods.resources, [list]: { ...pods.resources[list], [resource]: text.trim() } } })}
            />
          </GridItem>
        ))}
      </Grid>
    </>
  );
}

/** The project settings page's card: saved on its own, with the project's other fields as stored. */
export function ProjectTaskPodsCard() {
  const { t } = useTranslation('taskpods');
  const { project } = useProjectAccess();
  const notify = useNotify();
  const update = useUpdateProject(project.id);
  const [pods, setPods] = useState(() => project.task_pods ?? emptyTaskPods());
  // A project a GitOps tool keeps is read-only here: the API refuses its PUT.
  const managed = Boolean(project.managed_by);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (update.isPending) return;
    update.mutate(
      { name: project.name, alert: project.alert, alert_chat: project.alert_chat, max_parallel_tasks: project.max_parallel_tasks, task_pods: pods },
      { onSuccess: () => notify.success(t('Task pod settings saved')) },
    );
  };
  return (
    <Card>
      <CardTitle component="h2">{t('Where tasks run')}</CardTitle>
      <CardBody>
        <Form onSubmit={submit} noValidate aria-label={t('Where tasks run')}>
          <FormDisabledContext.Provider value={update.isPending || managed}>
            <TaskPodsFields scope="project" value={pods} onChange={setPods} />
          </FormDisabledContext.Provider>
          <SaveError message={update.error ? errorMessage(update.error) : undefined} />
          <ActionGroup>
            <Button type="submit" variant="primary" isLoading={update.isPending} isDisabled={update.isPending || managed}>
              {t('Save task pod settings')}
            </Button>
          </ActionGroup>
        </Form>
      </CardBody>
    </Card>
  );
}
