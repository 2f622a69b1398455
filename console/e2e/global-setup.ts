// Starts a throwaway `bastion dev` server for the end-to-end tests, unless
// BASTION_URL already names a running one. The tests get the URL through
// `use.baseURL` and the seeded admin's password as BASTION_ADMIN_PASSWORD,
// and its cluster-admin kubeconfig as BASTION_KUBECONFIG (for tests that
// apply objects with kubectl, as GitOps tools do): workers inherit them
// from this process.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, copyFileSync, createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const consoleDir = fileURLToPath(new URL('..', import.meta.url));
const startTimeoutMs = 120_000;
const stopTimeoutMs = 30_000;

// Asks the kernel for a free port; the server binds it a moment later.
async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  if (!address || typeof address === 'string') throw new Error('no TCP port');
  return address.port;
}

function hasExited(child: ChildProcess): boolean {
  // A child that failed to spawn has no pid and will never emit 'exit'.
  return child.pid === undefined || child.exitCode !== null || child.signalCode !== null;
}

// `bastion dev` seeds an admin with a random password and prints it in its
// banner; the tests sign in with it.
async function adminPassword(logFile: string, child: ChildProcess): Promise<string> {
  const deadline = Date.now() + startTimeoutMs;
  while (Date.now() < deadline) {
    const banner = /^\s*password:\s+(\S+)\s*$/m.exec(readFileSync(logFile, 'utf8'));
    if (banner) return banner[1];
    if (hasExited(child)) throw new Error('bastion exited before printing the admin password');
    await new Promise((wait) => setTimeout(wait, 250));
  }
  throw new Error('bastion printed no admin password');
}

async function waitUntilReady(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + startTimeoutMs;
  while (Date.now() < deadline) {
    if (hasExited(child)) throw new Error(`bastion exited early (${child.exitCode ?? child.signalCode})`);
    try {
      if ((await fetch(`${url}/api/info`)).status === 200) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((wait) => setTimeout(wait, 250));
  }
  throw new Error(`bastion did not answer ${url}/api/info within ${startTimeoutMs / 1000} s`);
}

// SIGINT lets the server shut down cleanly; if it hangs, SIGKILL its whole
// process group so nothing it started (such as a test API server) outlives it.
async function stop(child: ChildProcess): Promise<void> {
  if (hasExited(child)) return;
  const exited = once(child, 'exit');
  child.kill('SIGINT');
  const kill = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), stopTimeoutMs);
  await exited;
  clearTimeout(kill);
}

// The tests' git repositories (e2e/repository.ts) go under one directory,
// readable by all like each of them, which the teardown removes.
function makeScratch(): () => void {
  const scratch = mkdtempSync(join(tmpdir(), 'bastion-e2e-scratch-'));
  chmodSync(scratch, 0o755);
  process.env.BASTION_E2E_SCRATCH = scratch;
  return () => rmSync(scratch, { recursive: true, force: true });
}

export default async function globalSetup(): Promise<() => Promise<void>> {
  const removeScratch = makeScratch();
  if (process.env.BASTION_URL) {
    if (!process.env.BASTION_ADMIN_PASSWORD) throw new Error('with BASTION_URL, set BASTION_ADMIN_PASSWORD too');
    // BASTION_KUBECONFIG too, for e2e/gitops.spec.ts (its banner names it).
    return async () => removeScratch();
  }

  const bin = resolve(consoleDir, process.env.BASTION_BIN ?? '../bin/bastion');
  if (!existsSync(bin)) {
    throw new Error(`${bin} not found: build the server first, or set BASTION_BIN or BASTION_URL`);
  }

  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'bastion-e2e-'));
  // The terminal's output (start-up, the banner, warnings and errors).
  // Not bastion.log: `bastion dev` writes the manager's whole log there,
  // and both are kept.
  const logFile = join(dataDir, 'terminal.log');
  const managerLog = join(dataDir, 'bastion.log');
  const log = createWriteStream(logFile);

  // What a cluster admin would allow task pods (e2e/task-pods.spec.ts).
  const taskPods = ['--runner-images', 'ansible-gpu=registry.example.com/runner-ansible-gpu:1.2', '--task-service-accounts', 'deployer'];
  const child = spawn(bin, ['dev', '--listen', `127.0.0.1:${port}`, '--data-dir', dataDir, ...taskPods], {
    cwd: consoleDir,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group, for the SIGKILL above
  });
  // Both streams share the log, so neither may end it on its own.
  child.stdout?.pipe(log, { end: false });
  child.stderr?.pipe(log, { end: false });
  const spawnFailed = new Promise<never>((_, fail) => child.once('error', fail));

  // Stops the server, keeps its log as a test artifact, and removes its data.
  const tearDown = async (): Promise<string> => {
    await stop(child);
    child.stdout?.unpipe(log);
    child.stderr?.unpipe(log);
    log.end();
    await once(log, 'finish');
    const output = readFileSync(logFile, 'utf8');
    mkdirSync(join(consoleDir, 'test-results'), { recursive: true });
    copyFileSync(logFile, join(consoleDir, 'test-results', 'bastion-terminal.log'));
    if (existsSync(managerLog)) {
      copyFileSync(managerLog, join(consoleDir, 'test-results', 'bastion.log'));
    }
    rmSync(dataDir, { recursive: true, force: true });
    return output;
  };

  let password: string;
  try {
    await Promise.race([waitUntilReady(url, child), spawnFailed]);
    password = await adminPassword(logFile, child);
  } catch (error) {
    console.error(`--- bastion output ---\n${await tearDown()}`);
    removeScratch();
    throw error;
  }

  process.env.BASTION_URL = url;
  process.env.BASTION_ADMIN_PASSWORD = password;
  // `bastion dev` writes it into its data dir and names it in its banner.
  process.env.BASTION_KUBECONFIG = join(dataDir, 'kubeconfig');
  return async () => {
    await tearDown();
    removeScratch();
  };
}
