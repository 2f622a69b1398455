// Repository URLs (docs/features.md §3, §4): the URL type is derived from the text, and
// the type chips rewrite the text's prefix. Pure functions, so the rules are
// tested directly; they follow the server's (apiserver/repository_routes.go),
// so the form refuses what the server would.

/** The URL types a repository may have; "local" is a path on the runner. */
export const urlTypes = ['ssh', 'https', 'file', 'git', 'local'] as const;
export type UrlType = (typeof urlTypes)[number];

const schemePrefix = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//;

/** git's scp-like ssh syntax, [user@]host:path: a colon before any slash. */
function scpLike(url: string): boolean {
  const colon = url.indexOf(':');
  if (colon <= 0 || colon === url.length - 1 || url.slice(0, colon).includes('/')) return false;
  const host = url.slice(url.lastIndexOf('@', colon) + 1, colon);
  return host !== '' && !host.startsWith('-') && !url.startsWith('-');
}

/**
 * The type of a URL: local for a leading slash, ssh without a scheme, else
 * the scheme (any case), which must be ssh, https, file or git. Undefined
 * when the URL is empty; null when its type is not recognised.
 */
export function urlType(raw: string): UrlType | null | undefined {
  const url = raw.trim();
  if (url === '') return undefined;
  if (url.startsWith('/')) return 'local';
  const scheme = schemePrefix.exec(url)?.[1].toLowerCase();
  if (scheme === undefined) return 'ssh';
  return (urlTypes as readonly string[]).includes(scheme) && scheme !== 'local' ? (scheme as UrlType) : null;
}

/**
 * Whether the server will take the URL: a recognised type, and without a
 * scheme git's scp-like form (anything else git reads as a relative path).
 */
export function isValidGitUrl(raw: string): boolean {
  const url = raw.trim();
  const type = urlType(url);
  if (!type || /\s/.test(url)) return false;
  if (type === 'local') return true;
  if (!schemePrefix.test(url)) return scpLike(url) && !/^[A-Za-z][A-Za-z0-9+.-]*::/.test(url);
  return url.replace(schemePrefix, '') !== '';
}

/**
 * The URL rewritten for the chosen type (docs/features.md §4): ssh, https, file and
 * git put their scheme in front of what follows the old one; local strips
 * the scheme and forces a leading slash. An scp-like address
 * (git@host:org/repo) becomes host/path first, the form a scheme needs.
 */
export function withUrlType(raw: string, type: UrlType): string {
  const url = raw.trim();
  let rest = url.replace(schemePrefix, '');
  if (rest === url && !url.startsWith('/') && scpLike(url)) {
    const colon = url.indexOf(':');
    rest = `${url.slice(0, colon)}/${url.slice(colon + 1).replace(/^\/+/, '')}`;
  }
  switch (type) {
    case 'local':
      return rest.startsWith('/') ? rest : `/${rest}`;
    case 'file':
      // file:// takes a path: /srv/repo becomes file:///srv/repo.
      return `file://${rest}`;
    default:
      return `${type}://${rest.replace(/^\/+/, '')}`;
  }
}
