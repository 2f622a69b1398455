import type { ExtractValue, Integration, Matcher } from '../types';

export const deployOnPush: Integration = {
  id: 5, name: 'Deploy on push', project_id: 1, template_id: 7, auth_method: 'hmac',
  auth_secret_id: 3, auth_header: 'X-Signature', searchable: false, task_params: {},
};

export const templates = [{ id: 7, name: 'Deploy app' }, { id: 8, name: 'Build app' }];

export const keys = [
  { id: 2, name: 'Deploy SSH', type: 'ssh' },
  { id: 3, name: 'Webhook secret', type: 'login_password' },
  { id: 4, name: 'None key', type: 'none' },
];

export const refValue: ExtractValue = {
  id: 11, integration_id: 5, name: 'Ref', value_source: 'body', body_data_type: 'json', key: 'ref', variable: 'GIT_REF',
};
export const eventValue: ExtractValue = {
  id: 12, integration_id: 5, name: 'Event', value_source: 'header', body_data_type: '', key: 'X-Event', variable: 'EVENT',
};
export const mainMatcher: Matcher = {
  id: 21, integration_id: 5, name: 'Main branch', match_type: 'body', method: 'equals', body_data_type: 'json',
  key: 'ref', value: 'refs/heads/main',
};
export const pushMatcher: Matcher = {
  id: 22, integration_id: 5, name: 'Push event', match_type: 'header', method: 'contains', body_data_type: '',
  key: 'X-Event', value: 'push',
};
