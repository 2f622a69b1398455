import { useMemo, useState, type FormEvent } from 'react';
import {
  Button,
  Checkbox,
  Content,
  Form,
  FormSection,
  List,
  ListItem,
  Modal,
  ModalBody,
  ModalFooter,
  ModalHeader,
} from '@patternfly/react-core';
import CheckCircleIcon from '@patternfly/react-icons/dist/esm/icons/check-circle-icon';
import ExclamationCircleIcon from '@patternfly/react-icons/dist/esm/icons/exclamation-circle-icon';
import MinusCircleIcon from '@patternfly/react-icons/dist/esm/icons/minus-circle-icon';
import { useTranslation } from 'react-i18next';
import { TaskAnswerFields, type TaskAnswers } from '../tasks/TaskAnswerFields';
import { useStartTask } from '../tasks/useTasks';
import { TaskLink } from '../templates/TaskCells';
import type { Template } from '../templates/types';
import { splitByQuestions, startAll, validateRunAll, type RunResult } from './runAll';

export interface RunAllDialogProps {
  projectId: number;
  viewTitle: string;
  /** The view's templates, in the order the list shows them. */
  templates: Template[];
  onClose(): void;
}

const noAnswers: TaskAnswers = { buildTaskId: '', survey: {} };

/**
 * Run all (issue #23 item 3): the view's templates that ask (a deploy's
 * build, required survey answers) come first with their questions, each of
 * which may be left out; the others are listed as starting as they are.
 * Run all starts every one in the view's order, then the dialog says per
 * template which task started or why it did not.
 */
export function RunAllDialog({ projectId, viewTitle, templates, onClose }: RunAllDialogProps) {
  const { t } = useTranslation('runall');
  const { t: tasksT } = useTranslation('tasks');
  // The templates as the dialog opened: a list refreshed meanwhile does not change what runs.
  const [shown] = useState(templates);
  const { asking, direct } = useMemo(() => splitByQuestions(shown), [shown]);
  const [answers, setAnswers] = useState<Record<number, TaskAnswers>>({});
  const [skipped, setSkipped] = useState<ReadonlySet<number>>(new Set());
  const [checked, setChecked] = useState(false);
  const [results, setResults] = useState<RunResult[] | null>(null);
  const [running, setRunning] = useState(false);
  const start = useStartTask(projectId);

  const say = (key: string, vars?: Record<string, string>) => tasksT(key, vars);
  const validate = () => validateRunAll(asking.filter((tpl) => !skipped.has(tpl.id)), answers, say);
  const errors = checked ? validate() : {};
  const answer = (id: number, patch: Partial<TaskAnswers>) =>
    setAnswers((all) => ({ ...all, [id]: { ...noAnswers, ...all[id], ...patch } }));
  const toggleSkip = (id: number, include: boolean) =>
    setSkipped((all) => {
      const next = new Set(all);
      if (include) next.delete(id);
      else next.add(id);
      return next;
    });

  const run = async (event?: FormEvent) => {
    event?.preventDefault();
    setChecked(true);
    if (Object.keys(validate()).length) return;
    setRunning(true);
    setResults([]);
    await startAll(shown, answers, skipped, (task) => start.mutateAsync(task), (result) =>
      setResults((done) => [...(done ?? []), result]),
    );
    setRunning(false);
  };

  return (
    <Modal variant="medium" isOpen onClose={running ? undefined : onClose} aria-labelledby="run-all-title">
      <ModalHeader
        title={t('Run all in {{view}}', { view: viewTitle })}
        labelId="run-all-title"
        description={t('Each template starts as its own task, in the order of the view.')}
      />
      <ModalBody>
        {results ? (
          <RunResults results={results} total={shown.length} onOpenTask={onClose} />
        ) : (
          <Form id="run-all-form" onSubmit={(event) => void run(event)} noValidate>
            {asking.map((template) => {
              const include = !skipped.has(template.id);
              return (
                <FormSection key={template.id} title={template.name} titleElement="h3">
                  <Checkbox
                    id={`run-all-${template.id}-include`}
                    label={t('Start {{template}}', { template: template.name })}
                    isChecked={include}
                    onChange={(_event, on) => toggleSkip(template.id, on)}
                  />
                  {include && (
                    <TaskAnswerFields
                      template={template}
                      values={answers[template.id] ?? noAnswers}
                      onChange={(patch) => answer(template.id, patch)}
                      errors={errors[template.id] ?? {}}
                      idPrefix={`run-all-${template.id}`}
                    />
                  )}
                </FormSection>
              );
            })}
            {direct.length > 0 && (
              <FormSection title={t('Starting as they are')} titleElement="h3">
                <List aria-label={t('Starting as they are')}>
                  {direct.map((template) => (
                    <ListItem key={template.id}>{template.name}</ListItem>
                  ))}
                </List>
              </FormSection>
            )}
            <button type="submit" hidden aria-hidden />
          </Form>
        )}
      </ModalBody>
      <ModalFooter>
        {results ? (
          <Button variant="primary" onClick={onClose} isLoading={running} isDisabled={running}>
            {running ? t('Starting…') : t('Close')}
          </Button>
        ) : (
          <>
            <Button type="submit" form="run-all-form" variant="primary">
              {t('Run all')}
            </Button>
            <Button variant="link" onClick={onClose}>
              {t('Cancel')}
            </Button>
          </>
        )}
      </ModalFooter>
    </Modal>
  );
}

const resultIcons = {
  task: <CheckCircleIcon color="var(--pf-t--global--icon--color--status--success--default)" />,
  error: <ExclamationCircleIcon color="var(--pf-t--global--icon--color--status--danger--default)" />,
  skipped: <MinusCircleIcon color="var(--pf-t--global--icon--color--subtle)" />,
};

/** Per template, in the view's order: its new task (a link to its log), the server's refusal, or left out. */
function RunResults({ results, total, onOpenTask }: { results: RunResult[]; total: number; onOpenTask(): void }) {
  const { t } = useTranslation('runall');
  const started = results.filter((r) => 'task' in r).length;
  return (
    <>
      <Content component="p">{t('{{started}} of {{total}} started', { started: String(started), total: String(total) })}</Content>
      <List isPlain aria-label={t('Results')}>
        {results.map((result) => {
          const kind = 'task' in result ? 'task' : 'error' in result ? 'error' : 'skipped';
          return (
            <ListItem key={result.template.id} icon={resultIcons[kind]} data-result={kind}>
              <strong>{result.template.name}</strong>
              {': '}
              {'task' in result && (
                <span onClick={onOpenTask}>
                  <TaskLink taskId={result.task.id}>{t('Task #{{id}}', { id: String(result.task.id) })}</TaskLink>
                </span>
              )}
              {'error' in result && (
                <span style={{ color: 'var(--pf-t--global--text--color--status--danger--default)' }}>{result.error}</span>
              )}
              {'skipped' in result && t('Left out')}
            </ListItem>
          );
        })}
      </List>
    </>
  );
}
