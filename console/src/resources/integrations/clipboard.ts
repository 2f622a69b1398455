// Copying an alias URL (docs/features.md §8): the snackbar says it worked, or why not.

/** reason is "" when the page has no clipboard at all (the caller words that). */
export type CopyResult = { ok: true } | { ok: false; reason: string };

/**
 * Writes text to the clipboard. The browser offers no clipboard outside a
 * secure context (plain http to a remote host), and may refuse it; either
 * way the reason comes back to be shown.
 */
export async function copyText(text: string, clipboard: Clipboard | undefined = navigator.clipboard): Promise<CopyResult> {
  if (!clipboard) return { ok: false, reason: '' };
  try {
    await clipboard.writeText(text);
    return { ok: true };
  } catch (error) {
    return { ok: false, reason: reasonOf(error) };
  }
}

// A refusal is a DOMException, which is not an Error in every engine.
function reasonOf(error: unknown): string {
  if (error && typeof error === 'object' && 'message' in error && typeof error.message === 'string' && error.message) {
    return error.message;
  }
  return String(error);
}
