import { isIP } from 'node:net';
import type { Config } from '../config/options.js';

/** True for a host that only this machine can reach (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === '::1') return true;
  return isIP(h) === 4 && h.startsWith('127.');
}

/**
 * The start-up warning when svc listens beyond loopback with no API keys
 * (issue 15): anyone who reaches it can then use `/v1/compress` and read
 * stored originals and what TOIN learned.
 */
export function exposureWarning(config: Config): { level: 'warn'; text: string } | undefined {
  if (config.apiKeys.length > 0 || isLoopbackHost(config.host)) return undefined;
  return {
    level: 'warn',
    text: `svc listens on ${config.host}, beyond loopback, with no API keys: anyone who can reach it can call /v1/compress and read stored originals (/v1/retrieve) and /v1/toin. Set --api-key (SERVICE_API_KEYS) or bind to 127.0.0.1.`,
  };
}
