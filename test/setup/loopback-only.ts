import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

// Installs the loopback-only guard in the test process and, through
// NODE_OPTIONS, in every child process the tests start (svc CLI runs, servers).
const preload = fileURLToPath(new URL('./loopback-only.cjs', import.meta.url));
createRequire(import.meta.url)(preload);
if (!process.env.NODE_OPTIONS?.includes(preload)) {
  process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} --require ${preload}`.trim();
}
