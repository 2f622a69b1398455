import { lazy, Suspense, useCallback, useState } from 'react';
import { Alert } from '@patternfly/react-core';
import { useTranslation } from 'react-i18next';
import { errorMessage } from '../../api/errors';
import { readSetting, settingKeys, writeSetting } from '../../settings/settings';
import { LogView, type LogMarks } from './LogView';
import { useTaskOutput } from './useTaskOutput';

// Find, copy, wrap and the first failure: their code and words load after the log, in a chunk of their own.
const LogToolbar = lazy(async () => {
  const toolbar = await import('./LogToolbar');
  await toolbar.loadWords();
  return { default: toolbar.LogToolbar };
});

const NO_LINES: readonly string[] = [];

/** The toolbar's height while it loads, so the log does not jump when it arrives. */
const TOOLBAR_HEIGHT = 40;

const NO_STDERR: ReadonlySet<number> = new Set();

export interface TaskOutputViewProps {
  projectId: number;
  taskId: number;
  /** The template's app (tpl_app): "ansible" or empty for ansible, else the program. */
  app?: string;
  /** The task succeeded: there is no failure to go to. */
  succeeded: boolean;
}

/** The task's output, live: the log view over the cached TaskOutput, with its toolbar. */
export function TaskOutputView({ projectId, taskId, app, succeeded }: TaskOutputViewProps) {
  const { t } = useTranslation('tasks');
  const { output, version } = useTaskOutput(projectId, taskId);
  const [wrap, setWrap] = useState(() => readSetting(settingKeys.logWrap) === '1');
  const [marks, setMarks] = useState<LogMarks>();
  const [target, setTarget] = useState<{ line: number }>();
  const onWrap = useCallback((on: boolean) => {
    setWrap(on);
    writeSetting(settingKeys.logWrap, on ? '1' : null);
  }, []);
  const onGo = useCallback((line: number) => setTarget({ line }), []);
  const [stderrLabel, setStderrLabel] = useState<string>();
  if (output?.state === 'error') {
    return <Alert variant="danger" isInline title={t('The output could not be loaded')}>{errorMessage(output.error)}</Alert>;
  }
  const lines = output?.lines ?? NO_LINES;
  const stderr = output?.stderr ?? NO_STDERR;
  return (
    <LogView
      lines={lines}
      version={version}
      label={t('Output of task {{id}}', { id: taskId })}
      empty={!output || output.state === 'loading' ? t('Loading output…') : t('No output yet')}
      wrap={wrap}
      marks={marks}
      target={target}
      stderr={stderr}
      stderrLabel={stderrLabel}
      toolbar={
        <Suspense fallback={<div style={{ height: TOOLBAR_HEIGHT }} />}>
          <LogToolbar
            lines={lines}
            version={version}
            wrap={wrap}
            onWrap={onWrap}
            onMarks={setMarks}
            onGo={onGo}
            stderr={stderr}
            ansible={!app || app === 'ansible'}
            failed={!succeeded}
            onStderrLabel={setStderrLabel}
          />
        </Suspense>
      }
    />
  );
}
