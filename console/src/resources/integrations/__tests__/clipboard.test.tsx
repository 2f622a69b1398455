import { fireEvent, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { stubApi } from '../../../test/api';
import { admin, project } from '../../../test/fixtures';
import { inProject } from '../../../test/project';
import { renderWithProviders } from '../../../test/render';
import { AliasList } from '../AliasList';
import { copyText } from '../clipboard';

const url = 'http://bastion.example/api/integrations/ABCDEFGHIJKLMNOPQRSTUVWXYZ';

function stubClipboard(writeText: ((text: string) => Promise<void>) | undefined) {
  Object.defineProperty(navigator, 'clipboard', { value: writeText && { writeText }, configurable: true });
}

afterEach(() => stubClipboard(undefined));

describe('copyText', () => {
  it('writes the text and says it worked', async () => {
    const writeText = vi.fn(async () => {});
    expect(await copyText(url, { writeText } as unknown as Clipboard)).toEqual({ ok: true });
    expect(writeText).toHaveBeenCalledWith(url);
  });

  it('gives the browser’s reason when it refuses', async () => {
    const writeText = vi.fn(async () => {
      throw new DOMException('Write permission denied.', 'NotAllowedError');
    });
    expect(await copyText(url, { writeText } as unknown as Clipboard)).toEqual({ ok: false, reason: 'Write permission denied.' });
  });

  it('gives an empty reason where the page has no clipboard', async () => {
    expect(await copyText(url, undefined)).toEqual({ ok: false, reason: '' });
  });
});

describe('copying an alias URL (spec §8)', () => {
  function renderAliases() {
    stubApi({ 'GET /project/1/integrations/aliases': [200, [{ id: 4, url }]] });
    renderWithProviders(inProject(<AliasList />, project(1, 'Infra'), admin, '', 0));
  }

  it('says "The alias URL has been copied to the clipboard." on success', async () => {
    const writeText = vi.fn(async () => {});
    stubClipboard(writeText);
    renderAliases();
    fireEvent.click(await screen.findByRole('button', { name: `Copy the URL ${url}` }));
    expect(await screen.findByText('The alias URL has been copied to the clipboard.')).toBeInTheDocument();
    expect(writeText).toHaveBeenCalledWith(url);
  });

  it('says "Can\'t copy to clipboard" followed by the reason on failure', async () => {
    stubClipboard(async () => {
      throw new Error('Document is not focused.');
    });
    renderAliases();
    fireEvent.click(await screen.findByRole('button', { name: `Copy the URL ${url}` }));
    expect(await screen.findByText("Can't copy to clipboard: Document is not focused.")).toBeInTheDocument();
  });

  it('names the missing clipboard as the reason on a page without one', async () => {
    stubClipboard(undefined);
    renderAliases();
    fireEvent.click(await screen.findByRole('button', { name: `Copy the URL ${url}` }));
    expect(await screen.findByText("Can't copy to clipboard: the browser offers no clipboard on this page")).toBeInTheDocument();
  });
});
