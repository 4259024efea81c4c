import { spawnSync } from 'node:child_process';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';

describe('the tests themselves stay on loopback', () => {
  it('refuses a connection to a non-loopback address in the test process', () => {
    expect(() => connect(443, '192.0.2.1')).toThrow(/only connect to loopback/);
  });

  it('refuses it in child processes too', () => {
    const child = spawnSync(process.execPath, ['-e', "require('node:net').connect(443, '192.0.2.1')"], {
      encoding: 'utf8',
    });
    expect(child.status).not.toBe(0);
    expect(child.stderr).toContain('only connect to loopback');
  });

  it('lets loopback through', async () => {
    const socket = connect(9, '127.0.0.1');
    await new Promise((resolve) => socket.once('error', resolve).once('connect', resolve));
    socket.destroy();
  });
});
