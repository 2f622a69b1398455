// History's charts (docs/features.md, "Beyond the anchors"): tasks per day
// by result over the last 30 days, and the duration trend of a template's
// runs. A lazy chunk of its own (HistoryPage loads it after the list), so
// neither Victory nor these words weigh on any screen's first load.
import { useState } from 'react';
import {
  Alert,
  Button,
  Card,
  CardBody,
  CardTitle,
  Content,
  Flex,
  FormSelect,
  FormSelectOption,
  Grid,
  GridItem,
  Label,
  Spinner,
  Tooltip,
} from '@patternfly/react-core';
import HelpIcon from '@patternfly/react-icons/dist/esm/icons/help-icon';
import {
  Chart,
  ChartAxis,
  ChartBar,
  ChartGroup,
  ChartLegend,
  ChartLine,
  ChartScatter,
  ChartStack,
  ChartVoronoiContainer,
} from '@patternfly/react-charts/victory';
import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { apiGet } from '../../api/client';
import { errorMessage } from '../../api/errors';
import { queryKeys } from '../../api/queryKeys';
import { humanDuration } from '../tasks/dates';
import type { Template } from '../templates/types';
import {
  CHART_DAYS,
  dailySeries,
  dayTicks,
  durationPoints,
  durationsPath,
  median,
  newerPage,
  olderPage,
  results,
  statsPath,
  totals,
  type DurationPage,
  type Result,
  type TaskStats,
} from './chartData';

/** How often the charts read again while History is open: finished tasks move the counts. */
const REFRESH_MS = 30_000;

// PatternFly's status colours, so the bars match the status labels in
// both themes.
const colours: Record<Result, string> = {
  success: 'var(--pf-t--global--color--status--success--default)',
  failed: 'var(--pf-t--global--color--status--danger--default)',
  stopped: 'var(--pf-t--global--color--nonstatus--gray--default)',
};

// Axis words in the theme's text colour, readable in the dark theme too.
const axisStyle = { tickLabels: { fill: 'var(--pf-t--global--text--color--subtle)' } };

const padding = { top: 10, right: 20, bottom: 50, left: 60 };

export function HistoryCharts({ projectId }: { projectId: number }) {
  return (
    <Grid hasGutter className="pf-v6-u-mb-md">
      <GridItem xl={6}>
        <DailyChart projectId={projectId} />
      </GridItem>
      <GridItem xl={6}>
        <DurationTrend projectId={projectId} />
      </GridItem>
    </Grid>
  );
}

// What a chart counts, on hover or focus. (Its Tooltip also keeps
// PatternFly's shared Tooltip chunk whole: a chart chunk that reached only
// part of it would split it, adding bytes to every screen's first load.)
function Help({ text }: { text: string }) {
  return (
    <Tooltip content={text}>
      <Button variant="plain" isInline aria-label={text} icon={<HelpIcon />} />
    </Tooltip>
  );
}

function Loading() {
  const { t } = useTranslation('charts');
  return <Spinner size="lg" aria-label={t('Loading the chart')} />;
}

function DailyChart({ projectId }: { projectId: number }) {
  const { t, i18n } = useTranslation('charts');
  const stats = useQuery({
    queryKey: [...queryKeys.project(projectId), 'stats', 'tasks'],
    queryFn: () => apiGet<TaskStats>(statsPath(projectId)),
    refetchInterval: REFRESH_MS,
  });
  const names: Record<Result, string> = { success: t('Success'), failed: t('Failed'), stopped: t('Stopped') };
  let body;
  if (stats.isPending) body = <Loading />;
  else if (stats.isError) body = <Alert variant="danger" isInline isPlain title={errorMessage(stats.error)} />;
  else {
    const series = dailySeries(stats.data, i18n.language);
    const sum = totals(stats.data);
    body = (
      <>
        <Content component="p" data-testid="daily-totals">
          {t('Total: {{all}} · Success: {{success}} · Failed: {{failed}} · Stopped: {{stopped}}', sum)}
        </Content>
        <Chart
          ariaTitle={t('Tasks per day')}
          ariaDesc={t('Total: {{all}} · Success: {{success}} · Failed: {{failed}} · Stopped: {{stopped}}', sum)}
          containerComponent={
            <ChartVoronoiContainer
              labels={({ datum }: { datum: { childName?: string; y: number; date: string } }) =>
                datum.y > 0 ? `${datum.date} ${names[datum.childName as Result] ?? ''}: ${datum.y}` : ''
              }
              constrainToVisibleArea
            />
          }
          domainPadding={{ x: [10, 10] }}
          legendData={results.map((r) => ({ name: names[r], symbol: { fill: colours[r] } }))}
          legendComponent={<ChartLegend style={{ labels: { fill: 'var(--pf-t--global--text--color--subtle)' } }} />}
          legendPosition="bottom"
          height={260}
          width={640}
          padding={{ ...padding, bottom: 80 }}
        >
          <ChartAxis tickValues={dayTicks(series.success)} style={axisStyle} />
          <ChartAxis dependentAxis showGrid style={axisStyle} tickFormat={(y: number) => (Number.isInteger(y) ? y : '')} />
          <ChartStack>
            {results.map((r) => (
              <ChartBar key={r} name={r} data={series[r]} style={{ data: { fill: colours[r] } }} />
            ))}
          </ChartStack>
        </Chart>
        {sum.all === 0 && <Content component="p">{t('No task finished in the last 30 days.')}</Content>}
      </>
    );
  }
  return (
    <Card isCompact data-testid="daily-chart">
      <CardTitle component="h2">
        {t('Tasks per day, last {{days}} days', { days: CHART_DAYS })}{' '}
        <Help text={t('Finished tasks, by the day they were created in your time zone.')} />
      </CardTitle>
      <CardBody>{body}</CardBody>
    </Card>
  );
}

function DurationTrend({ projectId }: { projectId: number }) {
  const { t } = useTranslation('charts');
  // The template list's own query (same key, so one cache), not its hook:
  // importing templates/useTemplates would move it into a chunk shared
  // with the template screens, which have no bytes to spare.
  const templates = useQuery({
    queryKey: queryKeys.templates(projectId),
    queryFn: () => apiGet<Template[]>(`/project/${projectId}/templates`),
  });
  const [chosen, setChosen] = useState<number>();
  // The cursors of the pages shown so far: empty is the newest page.
  const [cursors, setCursors] = useState<number[]>([]);
  const templateId = chosen ?? templates.data?.[0]?.id;
  return (
    <Card isCompact data-testid="duration-chart">
      <CardTitle component="h2">
        {t('Duration of recent runs')} <Help text={t('From start to end of each finished run, oldest on the left.')} />
      </CardTitle>
      <CardBody>
        {templates.isPending && <Loading />}
        {templates.isError && <Alert variant="danger" isInline isPlain title={errorMessage(templates.error)} />}
        {templates.data?.length === 0 && <Content component="p">{t('The project has no templates yet.')}</Content>}
        {templates.data && templateId !== undefined && (
          <>
            <FormSelect
              id="duration-template"
              aria-label={t('Template')}
              value={String(templateId)}
              onChange={(_e, value) => {
                setChosen(Number(value));
                setCursors([]);
              }}
            >
              {templates.data.map((tpl) => (
                <FormSelectOption key={tpl.id} value={String(tpl.id)} label={tpl.name} />
              ))}
            </FormSelect>
            <RunDurations projectId={projectId} templateId={templateId} cursors={cursors} onPage={setCursors} />
          </>
        )}
      </CardBody>
    </Card>
  );
}

function RunDurations({
  projectId,
  templateId,
  cursors,
  onPage,
}: {
  projectId: number;
  templateId: number;
  cursors: number[];
  onPage(cursors: number[]): void;
}) {
  const { t, i18n } = useTranslation('charts');
  const page = useQuery({
    queryKey: [...queryKeys.template(projectId, templateId), 'durations', cursors.at(-1) ?? 0],
    queryFn: () => apiGet<DurationPage>(durationsPath(projectId, templateId, cursors)),
    refetchInterval: cursors.length === 0 ? REFRESH_MS : false, // older pages do not change
  });
  if (page.isPending) return <Loading />;
  if (page.isError) return <Alert variant="danger" isInline isPlain title={errorMessage(page.error)} />;
  const points = durationPoints(page.data.items);
  const mid = median(points);
  const seconds = (s: number) => humanDuration(Math.round(s), i18n.language);
  // Ticks between whole seconds would all read alike ("1 sec" five times): left blank.
  return (
    <>
      <Content component="p" data-testid="duration-median">
        {mid === undefined ? (
          t('This template has no finished runs here.')
        ) : (
          <Label isCompact>{t('Runs shown: {{runs}} · Median: {{duration}}', { runs: points.length, duration: seconds(mid) })}</Label>
        )}
      </Content>
      {points.length > 0 && (
        <Chart
          ariaTitle={t('Duration of recent runs')}
          ariaDesc={mid === undefined ? '' : t('Runs shown: {{runs}} · Median: {{duration}}', { runs: points.length, duration: seconds(mid) })}
          containerComponent={
            <ChartVoronoiContainer
              labels={({ datum }: { datum: { x: string; y: number; status: string } }) => `${datum.x}: ${seconds(datum.y)}`}
              constrainToVisibleArea
            />
          }
          domainPadding={{ x: [10, 10], y: [0, 10] }}
          height={240}
          width={640}
          padding={{ ...padding, left: 80 }}
        >
          <ChartAxis tickValues={dayTicks(points)} style={axisStyle} />
          <ChartAxis dependentAxis showGrid style={axisStyle} tickFormat={(s: number) => (Number.isInteger(s) ? seconds(s) : '')} />
          <ChartGroup>
            <ChartLine data={points} />
            <ChartScatter data={points} style={{ data: { fill: ({ datum }: { datum?: { status: string } }) => statusColour(datum?.status ?? '') } }} />
          </ChartGroup>
        </Chart>
      )}
      <Flex justifyContent={{ default: 'justifyContentSpaceBetween' }}>
        <Button variant="link" isInline isDisabled={page.data.next_before === 0} onClick={() => onPage(olderPage(cursors, page.data))}>
          {t('Older runs')}
        </Button>
        <Button variant="link" isInline isDisabled={cursors.length === 0} onClick={() => onPage(newerPage(cursors))}>
          {t('Newer runs')}
        </Button>
      </Flex>
    </>
  );
}

function statusColour(status: string): string {
  return status === 'success' ? colours.success : status === 'error' ? colours.failed : colours.stopped;
}
