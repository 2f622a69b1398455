import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { emptyTemplateValues, templateRequest } from '../formValues';
import { argumentsError, normalizeSurveyVar, templateMessages, validateSurveyVar, validateTemplate } from '../validation';

const filled = {
  ...emptyTemplateValues(),
  name: 'Deploy web',
  playbook: 'site.yml',
  repositoryId: '3',
  environmentId: '4',
};

describe('template validation (spec §5)', () => {
  it('requires name, playbook filename, repository and environment, with the spec’s messages', () => {
    expect(validateTemplate(emptyTemplateValues())).toEqual({
      name: 'Name is required',
      playbook: 'Playbook filename is required',
      repositoryId: 'Repository is required',
      environmentId: 'Environment is required',
      startVersion: undefined,
      buildTemplateId: undefined,
      arguments: undefined,
    });
  });

  it('passes a filled task template; the inventory is optional', () => {
    expect(Object.values(validateTemplate({ ...filled, inventoryId: '' })).filter(Boolean)).toEqual([]);
  });

  it('treats a name of blanks as missing', () => {
    expect(validateTemplate({ ...filled, name: '   ' }).name).toBe('Name is required');
  });

  it('requires a start version for a build only', () => {
    expect(validateTemplate({ ...filled, type: 'build' }).startVersion).toBe('Start version is required');
    expect(validateTemplate({ ...filled, type: 'build', startVersion: '0.0.0' }).startVersion).toBeUndefined();
    expect(validateTemplate({ ...filled, type: 'deploy' }).startVersion).toBeUndefined();
  });

  it('requires a build template for a deploy only', () => {
    expect(validateTemplate({ ...filled, type: 'deploy' }).buildTemplateId).toBe('Build template is required');
    expect(validateTemplate({ ...filled, type: 'deploy', buildTemplateId: '7' }).buildTemplateId).toBeUndefined();
    expect(validateTemplate({ ...filled, type: 'build', startVersion: '1' }).buildTemplateId).toBeUndefined();
  });

  it('takes arguments as a JSON array of strings, or nothing', () => {
    expect(argumentsError('')).toBeUndefined();
    expect(argumentsError('[]')).toBeUndefined();
    expect(argumentsError('["-v", "--check"]')).toBeUndefined();
    expect(argumentsError('-v')).toBe('Arguments must be a JSON array of strings');
    expect(argumentsError('{"a": 1}')).toBe('Arguments must be a JSON array of strings');
    expect(argumentsError('[1, 2]')).toBe('Arguments must be a JSON array of strings');
  });

  it('sends only the fields of the chosen type', () => {
    const build = templateRequest({ ...filled, type: 'build', startVersion: ' 1.0.0 ', buildTemplateId: '9', autorun: true });
    expect(build).toMatchObject({ type: 'build', start_version: '1.0.0', build_template_id: null, autorun: false });
    const deploy = templateRequest({ ...filled, type: 'deploy', startVersion: '1.0.0', buildTemplateId: '9', autorun: true });
    expect(deploy).toMatchObject({ type: 'deploy', start_version: null, build_template_id: 9, autorun: true });
    expect(templateRequest({ ...filled, inventoryId: '', vaultKeyId: '5' })).toMatchObject({
      inventory_id: null,
      vaults: [{ vault_key_id: 5, name: '' }],
      repository_id: 3,
      environment_id: 4,
      arguments: '[]',
    });
  });
});

describe('survey variable validation (spec §5)', () => {
  const blank = { name: '', title: '', description: '', type: '' as const, required: false };

  it('requires a name and a title', () => {
    expect(validateSurveyVar(blank)).toEqual({ name: 'Name is required', title: 'Title is required' });
    expect(validateSurveyVar({ ...blank, name: ' ', title: ' ' })).toEqual({ name: 'Name is required', title: 'Title is required' });
    expect(validateSurveyVar({ ...blank, name: 'version', title: 'Version' })).toEqual({ name: undefined, title: undefined });
  });

  it('trims the name', () => {
    expect(normalizeSurveyVar({ ...blank, name: '  app_version ', title: 'Version', type: 'int', required: true })).toEqual({
      name: 'app_version',
      title: 'Version',
      description: '',
      type: 'int',
      required: true,
    });
  });
});

describe('the messages', () => {
  it('are all in the templates catalog, so every language translates them', () => {
    const catalog = JSON.parse(readFileSync(join(import.meta.dirname, '../../../locales/en/templates.json'), 'utf8'));
    expect(templateMessages.filter((m) => !(m in catalog))).toEqual([]);
  });
});
