import { Command, Flags } from '@oclif/core';
import { configFlags, resolveConfig } from '../src/config/index.js';
import type { Check } from '../src/doctor/checks.js';
import { isSvcError } from '../src/errors.js';
import { defaultStatsUrl } from '../src/stats/snapshot.js';

/** `svc doctor`: is svc set up and working? */
export default class Doctor extends Command {
  static override summary = 'Check that svc is set up and working, with a fix for each problem';
  static override description =
    `Checks, each ok, warn or fail with a fix: the server answers; the upstreams are reachable (a HEAD request, no model call); Claude Code and Codex point at svc; the savings file, CCR store and TOIN file are writable; the ML runtime and model (with --mlcompress); Redis (with --store); the server's requests were compressed (from /stats).

Give it the flags and environment svc serve runs with (upstream URLs, --store, --mlcompress). Exit codes: 0 no check failed (warnings allowed), 1 a check failed, 2 bad flags.`;
  static override examples = [
    '<%= config.bin %> doctor',
    '<%= config.bin %> doctor --url http://127.0.0.1:9000 --store redis://127.0.0.1:6379/0',
    '<%= config.bin %> doctor --json',
  ];
  static override enableJsonFlag = true;
  static override flags = {
    url: Flags.string({
      summary:
        '[default: http://SERVICE_HOST:SERVICE_PORT, i.e. http://127.0.0.1:8787] the svc server to check',
    }),
    ...configFlags('doctor'),
  };

  async run(): Promise<{ ok: boolean; checks: Check[] }> {
    const { flags } = await this.parse(Doctor);
    let config: ReturnType<typeof resolveConfig>;
    try {
      config = resolveConfig({ flags, env: process.env });
    } catch (err) {
      if (isSvcError(err)) this.error(err.message, { exit: 2 });
      throw err;
    }
    const url = (flags.url ?? defaultStatsUrl(config)).replace(/\/+$/, '');
    if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
      this.error(`--url: "${url}" is not an http(s) URL`, { exit: 2 });
    }
    const { formatChecks, runChecks } = await import('../src/doctor/checks.js');
    const { colorAllowed, outputWidth } = await import('../src/ui/term.js');
    const checks = await runChecks({ config, url });
    const ok = !checks.some((c) => c.status === 'fail');
    if (!this.jsonEnabled()) process.stdout.write(formatChecks(checks, colorAllowed(), outputWidth()));
    // Not this.exit(1): it throws, and with --json oclif would print an error object after the report.
    if (!ok) process.exitCode = 1;
    return { ok, checks };
  }
}
