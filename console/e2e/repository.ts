// Git repositories for the tests, made on the spot: a "local" repository's
// path is its git URL. They live under the scratch directory that global
// setup makes and its teardown removes, so that no run leaves them behind.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A new directory for a repository, readable by all: under bastion dev as
 * root each run is a user of its own. */
export function repositoryDir(): string {
  const dir = mkdtempSync(join(process.env.BASTION_E2E_SCRATCH ?? tmpdir(), 'repo-'));
  chmodSync(dir, 0o755);
  return dir;
}

/** A git repository (branch main) holding files, committed, in dir (a new
 * one by default); returns its path. Scripts (*.sh) are executable. */
export function gitRepository(files: Record<string, string>, dir = repositoryDir()): string {
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=Bastion Tests', '-c', 'user.email=tests@example.com', ...args], {
      cwd: dir,
      stdio: 'pipe',
    });
  git('init', '--quiet', '--initial-branch=main');
  for (const [name, text] of Object.entries(files)) {
    writeFileSync(join(dir, name), text);
    if (name.endsWith('.sh')) chmodSync(join(dir, name), 0o755);
  }
  git('add', '.');
  git('commit', '--quiet', '-m', 'Scripts for the console tests');
  return dir;
}
