#!/usr/bin/env node
// Build step: removes the build output first, so nothing stale (a moved or
// deleted module) is packed or imported.
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
for (const dir of ['dist', 'packages/client/dist']) {
  rmSync(resolve(root, dir), { recursive: true, force: true });
}
