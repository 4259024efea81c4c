import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Polka, Request } from 'polka';

/*
 * The proxied paths (`POST /v1/messages`, `/v1/chat/completions`...) carry
 * almost every request svc serves. polka finds a route by parsing the URL and
 * matching it against each pattern of the method, and parses the query, on
 * every request; a request for exactly one of these paths needs none of it.
 */

/** A route handler that answers by itself (never calls polka's `next`). */
type Handler = (req: Request, res: ServerResponse) => void;
type PolkaHandler = Parameters<Polka['post']>[1];

/** What polka sets for a path without parameters or query (shared: never written). */
const NO_PARAMS: Request['params'] = Object.freeze({});
const NO_QUERY: Request['query'] = Object.freeze({});

/** Handlers registered with `postExact`, by app and path. */
const registered = new WeakMap<Polka, Map<string, Handler>>();

/**
 * Registers `handler` for `POST path` on `app` (a path without parameters),
 * and for the fast lane of `withExactPosts`: polka keeps serving the path
 * whatever reaches it otherwise (a query string, a HEAD...).
 */
export function postExact(app: Polka, path: string, handler: Handler): void {
  // (polka's own type wants express's request and `next`, which these handlers never use)
  app.post(path, handler as unknown as PolkaHandler);
  let routes = registered.get(app);
  if (!routes) {
    routes = new Map();
    registered.set(app, routes);
  }
  // the first registration wins, as in polka
  if (!routes.has(path)) routes.set(path, handler);
}

/**
 * Wraps the app's handler (inside `withCanonicalPaths`): a POST whose request
 * target is exactly a path registered with `postExact` goes straight to its
 * handler, with the fields polka would have set (`path`, `search`, `query`,
 * `params`, `originalUrl`); anything else goes to polka.
 *
 * @example app.handler = withProjectPrefix(withCanonicalPaths(withExactPosts(app, app.handler)));
 */
export function withExactPosts<R extends IncomingMessage>(
  app: Polka,
  handler: (req: R, res: ServerResponse) => void,
): (req: R, res: ServerResponse) => void {
  return function exactPosts(req: R, res: ServerResponse) {
    const routes = req.method === 'POST' ? registered.get(app) : undefined;
    const route = routes?.get(req.url ?? '');
    if (!route) return handler(req, res);
    const r = req as unknown as Request;
    r.originalUrl ||= r.url!;
    r.path = r.url!;
    r.params = NO_PARAMS;
    r.search = null;
    r.query = NO_QUERY;
    route(r, res);
  };
}
