import type { IncomingMessage, ServerResponse } from 'node:http';
import { SvcError } from '../errors.js';
import { DEFAULT_FORMAT } from '../formats/index.js';
import { sendSvcError } from './respond.js';

/*
 * One canonical path per request (issue 15, item 2). Routing, the guards and
 * the upstream URL all read the request path; the upstream's URL parser
 * resolves dot segments and `%2e`, so `/v1/./chat/completions` used to be an
 * unknown pass-through path to svc (no budget, rate limit or cache) but
 * `/v1/chat/completions` to the upstream, and `/v1/../../admin` reached
 * `/admin` there. The path is therefore made canonical before routing, and
 * what is forwarded is the path that was routed.
 */

/** The characters RFC 3986 calls unreserved: their percent-encoding means the character itself. */
const UNRESERVED = /[A-Za-z0-9\-._~]/;

/** A path of plain segments (no `%`, `\\`, `//`, and no segment made only of dots): its own canonical form. */
const PLAIN_PATH = /^(?:\/(?!\.{1,2}(?:\/|$))[A-Za-z0-9\-._~!$&'()*+,;=:@]+)+$/;

/**
 * The canonical form of a request path (no query): percent-encoded
 * unreserved characters decoded, other escapes upper-cased, repeated slashes
 * collapsed, `.` and `..` segments resolved (RFC 3986, 5.2.4). Throws
 * SVC_BAD_REQUEST for a path that is not origin-form, contains a backslash,
 * an encoded `/` or `\`, a bad escape, or a `..` above the root, and for a
 * path under `/v1` whose dot segments lead out of it.
 *
 * @example canonicalPath('/v1/chat/./completions') // '/v1/chat/completions'
 */
export function canonicalPath(raw: string): string {
  // Most paths are canonical already (no escape, dot segment, repeated or trailing slash): as they are.
  if (PLAIN_PATH.test(raw)) return raw;
  if (!raw.startsWith('/')) throw refused('the request target must be a path starting with /');
  if (raw.includes('\\')) throw refused('backslashes are not allowed in the path');
  const decoded = raw.replace(/%([0-9A-Fa-f]{2})?/g, (match, hex: string | undefined) => {
    if (hex === undefined) throw refused('malformed percent-encoding in the path');
    const ch = String.fromCharCode(Number.parseInt(hex, 16));
    if (ch === '/' || ch === '\\') throw refused('encoded slashes are not allowed in the path');
    return UNRESERVED.test(ch) ? ch : match.toUpperCase();
  });
  const out: string[] = [];
  for (const segment of decoded.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (out.length === 0) throw refused('the path leads above the root');
      out.pop();
    } else out.push(segment);
  }
  // a trailing slash stays (the dashboard redirects `/dashboard/`), as RFC 3986 keeps it after `.`/`..`
  const trailing = out.length > 0 && /\/(?:\.\.?)?$/.test(decoded) ? '/' : '';
  const path = `/${out.join('/')}${trailing}`;
  const firstSegment = decoded.split('/').find((s) => s !== '' && s !== '.');
  if (firstSegment === 'v1' && path !== '/v1' && !path.startsWith('/v1/'))
    throw refused('the path leads out of /v1');
  return path;
}

function refused(message: string): SvcError {
  return new SvcError('SVC_BAD_REQUEST', message, { details: { field: 'path' } });
}

/** A polka-style request handler (its request type extends `IncomingMessage`). */
type Handler<R extends IncomingMessage> = (req: R, res: ServerResponse) => void;

/**
 * Wraps the app's request handler: rewrites `req.url` to its canonical path
 * (query unchanged) before routing, or answers 400 SVC_BAD_REQUEST.
 *
 * @example app.handler = withCanonicalPaths(app.handler);
 */
export function withCanonicalPaths<R extends IncomingMessage>(handler: Handler<R>): Handler<R> {
  return function canonicalPaths(req: R, res: ServerResponse) {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const rawPath = q < 0 ? url : url.slice(0, q);
    let path: string;
    try {
      if (rawPath.includes('#')) throw refused('fragments are not allowed in the request target');
      path = canonicalPath(rawPath);
    } catch (err) {
      req.resume();
      sendSvcError(res, DEFAULT_FORMAT, err as SvcError);
      return;
    }
    if (path !== rawPath) req.url = q < 0 ? path : path + url.slice(q);
    handler(req, res);
  };
}
