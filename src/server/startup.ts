import type { Config } from '../config/options.js';
import { mlEnabledLine, mlPreflight, mlRuntimeInstalled } from '../ml/detect.js';
import { exposureWarning } from './exposure.js';

export { mlRuntimeInstalled as isMlRuntimeInstalled };

/** A line `svc serve` prints when it is ready. */
export interface StartupLine {
  level: 'info' | 'warn';
  text: string;
}

/**
 * Start-up lines: address, mode, upstreams, and the ML lines of spec 1.9
 * (enabled with the device the model loaded on and the rate; installed but
 * off: a hint; on but not installed or no model: a warning with the install
 * command and the model path). `mlProvider` is set when the model loaded.
 */
export function startupLines(
  config: Config,
  url: string,
  mlInstalled: boolean,
  mlProvider?: string,
): StartupLine[] {
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
  // ML lines of spec 1.9, from the one place that decides them (src/ml/detect.ts).
  if (mlProvider) lines.push(mlEnabledLine(mlProvider, config.mlcompressRate));
  else {
    const ml = mlPreflight({
      enabled: config.mlcompress,
      device: config.mlcompressDevice,
      rate: config.mlcompressRate,
      modelDir: config.mlcompressModel,
      installed: mlInstalled,
    });
    if (ml) lines.push(ml);
  }
  if (config.apiKeys.length > 0)
    lines.push({ level: 'info', text: `/v1/compress: ${config.apiKeys.length} API key(s) required` });
  const exposed = exposureWarning(config);
  if (exposed) lines.push(exposed);
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
