import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a mock server received. */
export interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  json: unknown;
}

export type MockHandler = (req: Received, res: ServerResponse, index: number) => unknown;

/** A node:http server on 127.0.0.1 port 0 that records every request. */
export interface MockServer {
  url: string;
  received: Received[];
  close(): Promise<void>;
}

/** Starts a loopback mock server. */
export async function startMock(handler: MockHandler): Promise<MockServer> {
  const received: Received[] = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    let json: unknown;
    try {
      json = body ? JSON.parse(body) : undefined;
    } catch {
      json = undefined;
    }
    const entry: Received = {
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      body,
      json,
    };
    received.push(entry);
    try {
      await handler(entry, res, received.length - 1);
    } catch (err) {
      if (!res.headersSent) sendJson(res, 500, { error: { message: String(err) } });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Sends a JSON body. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(text);
}

/** A loopback URL nothing listens on (a port bound, then released). */
export async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** A compression result on the wire (spec section 2) for given messages. */
export function wireResult(messages: unknown[], extra: Record<string, unknown> = {}) {
  return {
    messages,
    tokens_before: 100,
    tokens_after: 40,
    tokens_saved: 60,
    compression_ratio: 0.4,
    transforms_applied: ['router:json:0.40'],
    ccr_hashes: ['3fa9c2e1b4d5a6f7c8d9e0a1'],
    ...extra,
  };
}

interface WireMessage {
  role: string;
  content: unknown;
  [extra: string]: unknown;
}

/** What the mock svc does to a tool output: recognisable and shorter. */
export function squeeze(text: string): string {
  return `squeezed(${text.length})`;
}

/**
 * The mock svc's compression: every tool message's texts are squeezed,
 * everything else is returned as it came.
 */
export function squeezeToolMessages(messages: WireMessage[]): WireMessage[] {
  return messages.map((m) => {
    if (m.role !== 'tool') return m;
    if (typeof m.content === 'string') return { ...m, content: squeeze(m.content) };
    if (!Array.isArray(m.content)) return m;
    return {
      ...m,
      content: m.content.map((p: { type: string; text?: string }) =>
        p.type === 'text' && typeof p.text === 'string' ? { ...p, text: squeeze(p.text) } : p,
      ),
    };
  });
}

/** A mock svc whose `/v1/compress` squeezes tool outputs. */
export function startSqueezingSvc(): Promise<MockServer> {
  return startMock((req, res) => {
    if (req.method === 'POST' && req.url === '/v1/compress') {
      const { messages } = req.json as { messages: WireMessage[] };
      return sendJson(res, 200, wireResult(squeezeToolMessages(messages)));
    }
    sendJson(res, 404, { error: { message: 'no route' } });
  });
}
