import { createRequire } from 'node:module';
import type { Config } from '../config/options.js';

/** A line `svc serve` prints when it is ready. */
export interface StartupLine {
  level: 'info' | 'warn';
  text: string;
}

/** True when the optional ML runtime (`onnxruntime-node`) can be loaded. */
export function isMlRuntimeInstalled(): boolean {
  try {
    createRequire(import.meta.url).resolve('onnxruntime-node');
    return true;
  } catch {
    return false;
  }
}

/** The install command printed when `--mlcompress` is set without the runtime. */
export const ML_INSTALL_HINT = 'npm install onnxruntime-node';

/**
 * Start-up lines: address, mode, upstreams, and the ML lines of spec 1.9
 * (enabled with device and rate; installed but off: a hint; on but not
 * installed: a warning with the install command).
 */
export function startupLines(config: Config, url: string, mlInstalled: boolean): StartupLine[] {
  const lines: StartupLine[] = [
    { level: 'info', text: `svc listening on ${url}` },
    {
      level: 'info',
      text: config.optimize
        ? 'mode: optimize (requests are compressed)'
        : 'mode: passthrough (--no-optimize: requests are forwarded byte for byte)',
    },
    {
      level: 'info',
      text: `upstreams: messages -> ${config.messagesApiUrl}, chat completions -> ${config.compatApiUrl}`,
    },
  ];
  if (config.mlcompress && mlInstalled) {
    lines.push({
      level: 'info',
      text: `ML compression: enabled (device ${config.mlcompressDevice}, rate ${config.mlcompressRate})`,
    });
  } else if (config.mlcompress) {
    lines.push({
      level: 'warn',
      text: `ML compression: --mlcompress is set but onnxruntime-node is not installed; install it with \`${ML_INSTALL_HINT}\` (continuing without ML compression)`,
    });
  } else if (mlInstalled) {
    lines.push({
      level: 'info',
      text: 'ML compression: available but not enabled; start with --mlcompress to use it',
    });
  }
  if (config.apiKeys.length > 0)
    lines.push({ level: 'info', text: `/v1/compress: ${config.apiKeys.length} API key(s) required` });
  lines.push({
    level: 'info',
    text: !config.telemetry
      ? 'telemetry: off'
      : config.telemetryUrl
        ? `telemetry: anonymous aggregates to ${new URL(config.telemetryUrl).origin}`
        : 'telemetry: on, but no SERVICE_TELEMETRY_URL is set, so nothing is sent',
  });
  return lines;
}
