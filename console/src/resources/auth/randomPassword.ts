const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * An example password for the sign-in help (docs/features.md §1): 10 random alphanumeric
 * characters from the browser's CSPRNG, without modulo bias, since someone
 * may well use it as it is.
 */
export function randomPassword(length = 10): string {
  const limit = 256 - (256 % alphabet.length);
  let out = '';
  while (out.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (byte < limit && out.length < length) out += alphabet[byte % alphabet.length];
    }
  }
  return out;
}
