import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { languages } from '../../../i18n';
import { authMethods, bodyDataTypes, matchMethods, sources } from '../labels';
import {
  authFields,
  integrationPayload,
  validateExtractValue,
  validateIntegration,
  validateMatcher,
  validationMessages,
} from '../validation';

const localesDir = join(import.meta.dirname, '..', '..', '..', 'locales');
const catalog = (lang: string, ns: string) =>
  JSON.parse(readFileSync(join(localesDir, lang, `${ns}.json`), 'utf8')) as Record<string, string>;

describe('integration validation (spec §5)', () => {
  const blank = { name: '', templateId: '', authMethod: '' as const, authSecretId: '', authHeader: '' };

  it('requires only the name', () => {
    expect(validateIntegration(blank)).toEqual({ name: 'Name is required' });
    expect(validateIntegration({ ...blank, name: '   ' })).toEqual({ name: 'Name is required' });
    expect(validateIntegration({ ...blank, name: 'Deploy on push' })).toEqual({ name: undefined });
  });

  it('leaves template, auth method, auth header and secret optional and clearable', () => {
    expect(integrationPayload({ ...blank, name: ' Deploy ' })).toEqual({
      name: 'Deploy', template_id: null, auth_method: '', auth_secret_id: null, auth_header: '',
    });
    expect(
      integrationPayload({ name: 'Deploy', templateId: '7', authMethod: 'hmac', authSecretId: '3', authHeader: ' X-Signature ' }),
    ).toEqual({ name: 'Deploy', template_id: 7, auth_method: 'hmac', auth_secret_id: 3, auth_header: 'X-Signature' });
  });

  it('drops the secret and the header that the chosen auth method does not use', () => {
    const leftover = { name: 'Deploy', templateId: '', authSecretId: '3', authHeader: 'X-Token' };
    expect(integrationPayload({ ...leftover, authMethod: '' })).toMatchObject({ auth_secret_id: null, auth_header: '' });
    expect(integrationPayload({ ...leftover, authMethod: 'github' })).toMatchObject({ auth_secret_id: 3, auth_header: '' });
    expect(integrationPayload({ ...leftover, authMethod: 'token' })).toMatchObject({ auth_secret_id: 3, auth_header: 'X-Token' });
  });
});

describe('auth field visibility (spec §4)', () => {
  it('shows the secret once an auth method is set, and the header only for token and hmac', () => {
    expect(authFields('')).toEqual({ secret: false, header: false });
    expect(authFields('github')).toEqual({ secret: true, header: false });
    expect(authFields('token')).toEqual({ secret: true, header: true });
    expect(authFields('hmac')).toEqual({ secret: true, header: true });
  });
});

describe('extracted value validation (spec §5)', () => {
  const valid = { name: 'Ref', valueSource: 'body', bodyDataType: 'json', key: 'ref', variable: 'REF' };

  it('requires name, value source, key and variable, each with its message', () => {
    expect(validateExtractValue({ name: '', valueSource: '', bodyDataType: '', key: '', variable: '' })).toEqual({
      name: 'Name is required',
      valueSource: 'Value source is required',
      bodyDataType: undefined,
      key: 'Key is required',
      variable: 'Variable is required',
    });
  });

  it('requires the body data type only when the source is the body', () => {
    expect(validateExtractValue({ ...valid, bodyDataType: '' }).bodyDataType).toBe('Body data type is required');
    expect(validateExtractValue({ ...valid, valueSource: 'header', bodyDataType: '' }).bodyDataType).toBeUndefined();
    expect(Object.values(validateExtractValue(valid)).filter(Boolean)).toEqual([]);
  });
});

describe('matcher validation (spec §5)', () => {
  const valid = { name: 'Main', matchType: 'body', bodyDataType: 'json', key: 'ref', method: 'equals', value: 'refs/heads/main' };

  it('requires name, match type, key, method and value, each with its message', () => {
    expect(validateMatcher({ name: ' ', matchType: '', bodyDataType: '', key: '', method: '', value: '' })).toEqual({
      name: 'Name is required',
      matchType: 'Match type is required',
      bodyDataType: undefined,
      key: 'Key is required',
      method: 'Method is required',
      value: 'Value is required',
    });
  });

  it('requires the body data type only when matching on the body', () => {
    expect(validateMatcher({ ...valid, bodyDataType: '' }).bodyDataType).toBe('Body data type is required');
    expect(validateMatcher({ ...valid, matchType: 'header', bodyDataType: '' }).bodyDataType).toBeUndefined();
    expect(Object.values(validateMatcher(valid)).filter(Boolean)).toEqual([]);
  });
});

// Messages and labels reach t() as variables, which the catalog test
// cannot see: this one checks them in every language.
describe('integration catalogs', () => {
  const shownWords = [
    ...validationMessages,
    ...[authMethods, sources, bodyDataTypes, matchMethods].flat().map((o) => o.label),
  ];
  it.each([...languages])('%s translates every validation message and option label', (lang) => {
    const known = { ...catalog(lang, 'common'), ...catalog(lang, 'integrations') };
    expect(shownWords.filter((word) => !known[word]?.trim())).toEqual([]);
  });
});
