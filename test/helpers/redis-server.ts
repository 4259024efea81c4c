import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A redis-server the test started on a free loopback port. */
export interface TestRedis {
  port: number;
  url: string;
  /** Kills it (SIGKILL): connections drop at once. */
  stop(): Promise<void>;
  /** Starts it again on the same port (after `stop`); with `persist`, with its data. */
  start(): Promise<void>;
  /** Freezes it (SIGSTOP): connections stay open, nothing answers. */
  pause(): void;
  /** Unfreezes it (SIGCONT). */
  resume(): void;
  /** Stops it and removes its data folder. */
  destroy(): Promise<void>;
}

export interface TestRedisOptions {
  /** Keep data across `stop`/`start` (append-only file, fsync on every write). */
  persist?: boolean;
  /** Require this password (`url` then carries it). */
  password?: string;
  /** Serve TLS only (`rediss://`), with the test certificates of `test/redis/fixtures/tls`. */
  tls?: boolean;
}

/** The test CA that signed the TLS server certificate (for NODE_EXTRA_CA_CERTS). */
export const TEST_CA = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  'redis',
  'fixtures',
  'tls',
  'ca.pem',
);

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

/** Starts `redis-server` (Debian package) on 127.0.0.1, by default with no persistence. */
export async function startTestRedis(options: TestRedisOptions = {}): Promise<TestRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'svc-redis-data-'));
  const persistence = options.persist
    ? ['--appendonly', 'yes', '--appendfsync', 'always']
    : ['--appendonly', 'no'];
  const tlsDir = dirname(TEST_CA);
  const listen = options.tls
    ? ['--port', '0', '--tls-port', String(port), '--tls-auth-clients', 'no']
        .concat([
          '--tls-cert-file',
          join(tlsDir, 'server.pem'),
          '--tls-key-file',
          join(tlsDir, 'server-key.pem'),
        ])
        .concat(['--tls-ca-cert-file', TEST_CA])
    : ['--port', String(port)];
  const auth = options.password ? ['--requirepass', options.password] : [];
  let child: ChildProcess | undefined;
  const start = () =>
    new Promise<void>((resolve, reject) => {
      const proc = spawn(
        'redis-server',
        [...listen, '--bind', '127.0.0.1', '--save', '', '--dir', dir, ...persistence, ...auth],
        {
          stdio: ['ignore', 'pipe', 'ignore'],
        },
      );
      child = proc;
      let out = '';
      const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${out}`)), 10_000);
      proc.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
      proc.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
  await start();
  const stop = () =>
    new Promise<void>((resolve) => {
      if (!child || child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGCONT');
      child.kill('SIGKILL');
    });
  return {
    port,
    url: `${options.tls ? 'rediss' : 'redis'}://${options.password ? `:${options.password}@` : ''}127.0.0.1:${port}/0`,
    start,
    stop,
    pause: () => void child?.kill('SIGSTOP'),
    resume: () => void child?.kill('SIGCONT'),
    async destroy() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
