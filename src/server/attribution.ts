import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { SvcError } from '../errors.js';
import type { RequestFinishedEvent } from '../events.js';
import { DEFAULT_FORMAT } from '../formats/index.js';
import { canonicalPath } from './canonical-path.js';
import { sendError, sendSvcError } from './respond.js';

/*
 * Attribution (issue 18, item 7): who a request is for. The project comes
 * from the `x-svc-project` header, or from a base-URL prefix `/p/NAME/` for
 * clients that cannot set headers (Claude Code's ANTHROPIC_BASE_URL); the
 * client from the user agent. The prefix is stripped before routing, so
 * routing, the guards (budget, rate limit, cache) and the upstream URL see
 * the same path as without it.
 */

/** Request header naming the project a request is attributed to. */
export const PROJECT_HEADER = 'x-svc-project';
/** Project of a request that names none. */
export const DEFAULT_PROJECT = 'default';
/** A project name: 1 to 64 of `A-Z a-z 0-9 . _ -`, starting with a letter or digit (so never `.` or `..`). */
export const PROJECT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Client families told apart by the user agent (a bounded set: used as a label). */
export const CLIENTS = ['claude-code', 'codex', 'openai-sdk', 'anthropic-sdk', 'svc', 'other'] as const;
export type ClientName = (typeof CLIENTS)[number];

/** User-agent patterns, first match wins. */
const CLIENT_PATTERNS: readonly [RegExp, ClientName][] = [
  [/^claude-cli\//i, 'claude-code'], // `claude-cli/2.1.197 (external, sdk-cli)`
  [/^codex(_[a-z_]+)?\//i, 'codex'], // `codex_cli_rs/0.46.0 (...)`, `codex_exec/...`, `codex_vscode/...`
  [/^(azure)?openai\/|^openai-(python|node)\b/i, 'openai-sdk'], // `OpenAI/JS 5.1.0`, `OpenAI/Python 1.99.1`
  [/^anthropic\/|^anthropic-(python|typescript|sdk)\b/i, 'anthropic-sdk'], // `Anthropic/JS 0.60.0`, `Anthropic/Python 0.64.0`
  [/^svc(-client|-mcp)?\//i, 'svc'], // svc's own client library and MCP server
];

/** The client family of a user agent (`other` when none matches or there is none). */
export function clientOf(userAgent: string | undefined): ClientName {
  if (!userAgent) return 'other';
  for (const [pattern, client] of CLIENT_PATTERNS) if (pattern.test(userAgent)) return client;
  return 'other';
}

/** Projects named by a `/p/NAME/` prefix, per request (the prefix itself is gone from `req.url`). */
const prefixProjects = new WeakMap<IncomingMessage, string>();

/**
 * The project of a request: the `/p/NAME/` prefix it came with, else its
 * `x-svc-project` header, else `default`. An invalid header was refused on
 * arrival (`withProjectPrefix`).
 */
export function projectOf(req: IncomingMessage): string {
  const fromPrefix = prefixProjects.get(req);
  if (fromPrefix) return fromPrefix;
  const header = headerProject(req.headers);
  return header ?? DEFAULT_PROJECT;
}

function headerProject(headers: IncomingHttpHeaders): string | undefined {
  const value = headers[PROJECT_HEADER];
  return typeof value === 'string' && PROJECT_NAME.test(value) ? value : undefined;
}

/** Sets the attribution fields of a request's event (project and client; model and key hash are set elsewhere). */
export function attributeEvent(event: RequestFinishedEvent, req: IncomingMessage): void {
  event.project = projectOf(req);
  event.client = clientOf(req.headers['user-agent']);
}

function badProject(message: string): SvcError {
  return new SvcError('SVC_BAD_REQUEST', message, { details: { field: 'project' } });
}

type Handler<R extends IncomingMessage> = (req: R, res: ServerResponse) => void;

/**
 * Wraps the app's handler (outside `withCanonicalPaths`): a request for
 * `/p/NAME/v1/...` is attributed to project NAME and continues as
 * `/v1/...`. NAME must match `PROJECT_NAME` (400 otherwise); what follows the
 * prefix is made canonical on its own (dot segments cannot climb over the
 * prefix) and must be under `/v1` (404 otherwise), so the prefix reaches the
 * proxied API only, through the same routes and guards. An `x-svc-project`
 * header that is not a valid name is refused (400).
 *
 * @example app.handler = withProjectPrefix(withCanonicalPaths(app.handler));
 */
export function withProjectPrefix<R extends IncomingMessage>(handler: Handler<R>): Handler<R> {
  return function projectPrefix(req: R, res: ServerResponse) {
    const url = req.url ?? '/';
    try {
      if (url.startsWith('/p/')) {
        const end = url.slice(3).search(/[/?#]/);
        const name = end < 0 ? url.slice(3) : url.slice(3, 3 + end);
        if (!PROJECT_NAME.test(name))
          throw badProject(
            'the project in /p/NAME/ must be 1-64 of A-Z a-z 0-9 . _ - starting with a letter or digit',
          );
        const rest = end < 0 ? '' : url.slice(3 + end);
        const q = rest.indexOf('?');
        const rawPath = q < 0 ? rest : rest.slice(0, q);
        if (rawPath.includes('#')) throw badProject('fragments are not allowed in the request target');
        const path = rawPath.startsWith('/') ? canonicalPath(rawPath) : '/';
        if (path !== '/v1' && !path.startsWith('/v1/')) {
          req.resume();
          sendError(
            res,
            DEFAULT_FORMAT,
            404,
            'not_found',
            'the /p/NAME/ prefix serves only the proxied /v1 API',
          );
          return;
        }
        prefixProjects.set(req, name);
        req.url = q < 0 ? path : path + rest.slice(q);
      } else {
        const header = req.headers[PROJECT_HEADER];
        if (header !== undefined && (typeof header !== 'string' || !PROJECT_NAME.test(header)))
          throw badProject(
            `${PROJECT_HEADER} must be 1-64 of A-Z a-z 0-9 . _ - starting with a letter or digit`,
          );
      }
    } catch (err) {
      req.resume();
      sendSvcError(res, DEFAULT_FORMAT, err as SvcError);
      return;
    }
    handler(req, res);
  };
}
