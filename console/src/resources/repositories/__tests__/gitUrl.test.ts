import { describe, expect, it } from 'vitest';
import { isValidGitUrl, urlType, withUrlType, type UrlType } from '../gitUrl';

describe('the URL type of a repository (spec §3)', () => {
  it.each([
    ['/srv/repos/site', 'local'],
    ['git@github.com:org/site.git', 'ssh'],
    ['ssh://git@github.com/org/site.git', 'ssh'],
    ['https://github.com/org/site.git', 'https'],
    ['HTTPS://github.com/org/site.git', 'https'],
    ['git://example.com/site.git', 'git'],
    ['file:///srv/repos/site', 'file'],
  ])('%s is %s', (url, type) => {
    expect(urlType(url)).toBe(type);
  });

  it('is not recognised for any other scheme', () => {
    expect(urlType('http://github.com/org/site.git')).toBeNull();
    expect(urlType('ftp://example.com/site.git')).toBeNull();
  });

  it('is none for an empty URL', () => {
    expect(urlType('')).toBeUndefined();
    expect(urlType('   ')).toBeUndefined();
  });

  it('accepts what the server accepts and refuses the rest', () => {
    for (const good of ['/srv/repo', 'git@github.com:org/site.git', 'github.com:org/site', 'https://github.com/o/r.git', 'file:///srv/repo', 'git://h/r']) {
      expect(isValidGitUrl(good), good).toBe(true);
    }
    for (const bad of ['http://github.com/o/r', 'site', 'ext::sh -c touch% /tmp/x', 'https://', '-oProxyCommand=x:y', 'https://github.com/o r']) {
      expect(isValidGitUrl(bad), bad).toBe(false);
    }
  });
});

// Each chip from each starting form (docs/features.md §4): ssh, https, file and git put
// their scheme in front; local strips the scheme and forces a leading slash.
const rewrites: Record<string, Record<UrlType, string>> = {
  'ssh://git@github.com/org/site.git': {
    ssh: 'ssh://git@github.com/org/site.git',
    https: 'https://git@github.com/org/site.git',
    file: 'file://git@github.com/org/site.git',
    git: 'git://git@github.com/org/site.git',
    local: '/git@github.com/org/site.git',
  },
  'git@github.com:org/site.git': {
    ssh: 'ssh://git@github.com/org/site.git',
    https: 'https://git@github.com/org/site.git',
    file: 'file://git@github.com/org/site.git',
    git: 'git://git@github.com/org/site.git',
    local: '/git@github.com/org/site.git',
  },
  'https://github.com/org/site.git': {
    ssh: 'ssh://github.com/org/site.git',
    https: 'https://github.com/org/site.git',
    file: 'file://github.com/org/site.git',
    git: 'git://github.com/org/site.git',
    local: '/github.com/org/site.git',
  },
  'git://example.com/site.git': {
    ssh: 'ssh://example.com/site.git',
    https: 'https://example.com/site.git',
    file: 'file://example.com/site.git',
    git: 'git://example.com/site.git',
    local: '/example.com/site.git',
  },
  'file:///srv/repos/site': {
    ssh: 'ssh://srv/repos/site',
    https: 'https://srv/repos/site',
    file: 'file:///srv/repos/site',
    git: 'git://srv/repos/site',
    local: '/srv/repos/site',
  },
  '/srv/repos/site': {
    ssh: 'ssh://srv/repos/site',
    https: 'https://srv/repos/site',
    file: 'file:///srv/repos/site',
    git: 'git://srv/repos/site',
    local: '/srv/repos/site',
  },
  '': {
    ssh: 'ssh://',
    https: 'https://',
    file: 'file://',
    git: 'git://',
    local: '/',
  },
};

describe('the URL type chips (spec §4)', () => {
  describe.each(Object.entries(rewrites))('from %j', (start, expected) => {
    it.each(Object.entries(expected))('%s gives %s', (chip, url) => {
      const rewritten = withUrlType(start, chip as UrlType);
      expect(rewritten).toBe(url);
      // The chip pressed is the type of what it wrote.
      if (start !== '') expect(urlType(rewritten)).toBe(chip);
    });
  });

  it('replaces an unrecognised scheme too', () => {
    expect(withUrlType('http://github.com/org/site.git', 'https')).toBe('https://github.com/org/site.git');
    expect(withUrlType('http://github.com/org/site.git', 'local')).toBe('/github.com/org/site.git');
  });
});
