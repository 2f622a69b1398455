import { fireEvent, screen, waitFor } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { stubApi } from '../../../test/api';
import { alice, project } from '../../../test/fixtures';
import { inProject } from '../../../test/project';
import { renderWithProviders } from '../../../test/render';
import TaskPodsFields, { ProjectTaskPodsCard } from '../TaskPodsFields';
import { formatTolerations, parseNodeSelector, parseTolerations, type TaskPods } from '../types';

const options = {
  runner_images: [{ name: 'ansible-gpu', image: 'registry.example.com/runner-ansible-gpu:1.2' }],
  service_accounts: ['deployer'],
};

describe('task pod text fields', () => {
  it('reads tolerations written as taints, and writes them back the same', () => {
    const text = 'dedicated=automation:NoSchedule\ngpu:NoExecute:60\nspot';
    const tolerations = parseTolerations(text);
    expect(tolerations).toEqual([
      { key: 'dedicated', operator: 'Equal', value: 'automation', effect: 'NoSchedule', toleration_seconds: null },
      { key: 'gpu', operator: 'Exists', value: '', effect: 'NoExecute', toleration_seconds: 60 },
      { key: 'spot', operator: 'Exists', value: '', effect: '', toleration_seconds: null },
    ]);
    expect(formatTolerations(tolerations)).toBe(text);
  });

  it('reads a node selector per line and skips blank lines', () => {
    expect(parseNodeSelector(' pool = automation \n\nzone=a')).toEqual({ pool: 'automation', zone: 'a' });
  });
});

describe('the project’s task pod settings', () => {
  it('offers only the admin’s images and service accounts, and saves the settings with the project as stored', async () => {
    const api = stubApi({ 'GET /task_pods/options': [200, options], 'PUT /project/1': [204] });
    renderWithProviders(inProject(<ProjectTaskPodsCard />, project(1, 'Infra'), alice, 'owner', 15), { path: '/project/1/settings' });

    const image = await screen.findByLabelText('Runner image');
    await waitFor(() => expect(image).toBeEnabled());
    expect([...(image as HTMLSelectElement).options].map((o) => o.value)).toEqual(['', 'ansible-gpu']);
    const account = screen.getByLabelText('Service account') as HTMLSelectElement;
    expect([...account.options].map((o) => o.value)).toEqual(['', 'deployer']);

    fireEvent.change(image, { target: { value: 'ansible-gpu' } });
    fireEvent.change(account, { target: { value: 'deployer' } });
    fireEvent.change(screen.getByLabelText('Node selector'), { target: { value: 'pool=automation' } });
    fireEvent.change(screen.getByLabelText('Tolerations'), { target: { value: 'dedicated=automation:NoSchedule' } });
    fireEvent.change(screen.getByLabelText('Memory limit'), { target: { value: ' 4Gi ' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save task pod settings' }));

    await screen.findByText('Task pod settings saved');
    const put = api.writes()[0];
    expect(put.path).toBe('/project/1');
    expect(put.body).toMatchObject({
      name: 'Infra',
      task_pods: {
        runner_image: 'ansible-gpu',
        service_account: 'deployer',
        node_selector: { pool: 'automation' },
        tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'automation', effect: 'NoSchedule', toleration_seconds: null }],
        resources: { requests: {}, limits: { memory: '4Gi' } },
      },
    });
  });

  it('says when the admin allows no service account, and shows the server’s refusal', async () => {
    stubApi({
      'GET /task_pods/options': [200, { runner_images: [], service_accounts: [] }],
      'PUT /project/1': [400, { error: 'the memory limit 1Gi is below its request 2Gi' }],
    });
    renderWithProviders(inProject(<ProjectTaskPodsCard />, project(1, 'Infra'), alice, 'owner', 15), { path: '/project/1/settings' });
    expect(await screen.findByText('The cluster admin allows none.')).toBeInTheDocument();
    expect(screen.getByLabelText('Service account')).toBeDisabled();
    fireEvent.click(screen.getByRole('button', { name: 'Save task pod settings' }));
    expect(await screen.findByText('the memory limit 1Gi is below its request 2Gi')).toBeInTheDocument();
  });
});

describe('a template’s task pod settings', () => {
  it('fold away while the template has none, and open when it has some', async () => {
    stubApi({ 'GET /task_pods/options': [200, options] });
    const pods: TaskPods = {
      node_selector: { accelerator: 'nvidia' },
      tolerations: [],
      resources: { requests: {}, limits: {} },
      runner_image: '',
      service_account: '',
    };
    const { unmount } = renderWithProviders(
      inProject(<TaskPodsFields scope="template" value={undefined} onChange={() => {}} />, project(1, 'Infra'), alice, 'owner', 15),
    );
    expect(await screen.findByRole('button', { name: 'Where tasks run' })).toHaveAttribute('aria-expanded', 'false');
    unmount();
    renderWithProviders(inProject(<TaskPodsFields scope="template" value={pods} onChange={() => {}} />, project(1, 'Infra'), alice, 'owner', 15));
    expect(await screen.findByRole('button', { name: 'Where tasks run' })).toHaveAttribute('aria-expanded', 'true');
    expect(screen.getByLabelText('Node selector')).toHaveValue('accelerator=nvidia');
    expect(screen.getByLabelText('Runner image')).toHaveDisplayValue('The project’s choice');
  });
});
