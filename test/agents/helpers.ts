import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { BIN } from '../cli/helpers.js';

/** A clean environment for a child svc: its state under `home`, nothing from the real ~/.svc. */
export function childEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: home,
    SERVICE_HOME: join(home, '.svc'),
    SERVICE_TELEMETRY: 'off',
    NODE_ENV: 'test',
    ...extra,
  };
}

export interface ServeProcess {
  url: string;
  child: ChildProcess;
  logs: () => string;
  stop(): Promise<void>;
}

/** Starts the real `svc serve` (the built CLI) on 127.0.0.1, a free port; resolves once it listens. */
export function startServe(
  home: string,
  args: string[] = [],
  env: Record<string, string> = {},
): Promise<ServeProcess> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--host', '127.0.0.1', ...args], {
    env: childEnv(home, env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let logs = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`svc serve did not start:\n${logs}`)), 20_000);
    const onData = (d: Buffer) => {
      logs += d.toString();
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(logs);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve({
          url: m[1],
          child,
          logs: () => logs,
          stop: () =>
            new Promise<void>((done) => {
              if (child.exitCode !== null) return done();
              child.once('exit', () => done());
              child.kill('SIGTERM');
            }),
        });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`svc serve exited (${code}):\n${logs}`));
    });
  });
}

export interface Mock {
  url: string;
  requests: Array<{ method: string; path: string; headers: IncomingMessage['headers']; body: string }>;
  close(): Promise<void>;
}

/**
 * A loopback upstream: answers the messages format (JSON or SSE), chat
 * completions and HEAD, and records every request.
 */
export async function mockUpstream(): Promise<Mock> {
  const requests: Mock['requests'] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => {
      body += d.toString();
    });
    req.on('end', () => {
      const path = req.url ?? '/';
      requests.push({ method: req.method ?? '', path, headers: req.headers, body });
      if (req.method === 'HEAD' || req.method === 'GET') {
        res.writeHead(404, { 'content-type': 'application/json' }).end();
        return;
      }
      let parsed: Record<string, unknown> = {};
      try {
        parsed = JSON.parse(body) as Record<string, unknown>;
      } catch {}
      const model = typeof parsed.model === 'string' ? parsed.model : 'claude-sonnet-4-5';
      if (path.includes('/messages/count_tokens')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ input_tokens: 100 }));
        return;
      }
      if (path.includes('/responses')) {
        answerResponses(res, model, parsed.stream === true);
        return;
      }
      if (path.includes('/messages')) {
        const message = {
          id: 'msg_mock',
          type: 'message',
          role: 'assistant',
          model,
          content: [{ type: 'text', text: 'Hello from the mock upstream.' }],
          stop_reason: 'end_turn',
          stop_sequence: null,
          usage: { input_tokens: 120, output_tokens: 8 },
        };
        if (parsed.stream) {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          const ev = (type: string, data: unknown) =>
            res.write(`event: ${type}\ndata: ${JSON.stringify(data)}\n\n`);
          ev('message_start', {
            type: 'message_start',
            message: {
              ...message,
              content: [],
              stop_reason: null,
              usage: { input_tokens: 120, output_tokens: 0 },
            },
          });
          ev('content_block_start', {
            type: 'content_block_start',
            index: 0,
            content_block: { type: 'text', text: '' },
          });
          ev('content_block_delta', {
            type: 'content_block_delta',
            index: 0,
            delta: { type: 'text_delta', text: 'Hello from the mock upstream.' },
          });
          ev('content_block_stop', { type: 'content_block_stop', index: 0 });
          ev('message_delta', {
            type: 'message_delta',
            delta: { stop_reason: 'end_turn', stop_sequence: null },
            usage: { output_tokens: 8 },
          });
          ev('message_stop', { type: 'message_stop' });
          res.end();
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(message));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: 'chatcmpl-mock',
          object: 'chat.completion',
          created: 1,
          model,
          choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 100, completion_tokens: 2, total_tokens: 102 },
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A large JSON tool output the engine compresses into a marker. */
export function bigToolOutput(n = 300): string {
  return JSON.stringify(
    Array.from({ length: n }, (_, i) => ({
      id: i,
      path: `src/module${i % 17}/file${i}.ts`,
      status: i === 137 ? 'failed' : 'passed',
      duration_ms: 100 + ((i * 37) % 900),
      message: i === 137 ? 'expected 3 to equal 4' : 'ok',
    })),
  );
}

/**
 * The Responses API answer (`/v1/responses`) as the OpenAI API gives it,
 * streamed the way Codex reads it: `response.created`, the message item
 * added, its text deltas, the item done, and `response.completed` with usage.
 */
function answerResponses(res: import('node:http').ServerResponse, model: string, stream: boolean): void {
  const text = 'Hello from the mock upstream.';
  const usage = {
    input_tokens: 120,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 8,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 128,
  };
  const item = {
    id: 'msg_mock',
    type: 'message',
    status: 'completed',
    role: 'assistant',
    content: [{ type: 'output_text', text, annotations: [] }],
  };
  const response = {
    id: 'resp_mock',
    object: 'response',
    created_at: 1,
    status: 'completed',
    model,
    output: [item],
    usage,
  };
  if (!stream) {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(response));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  let seq = 0;
  const ev = (type: string, data: Record<string, unknown>) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`);
  const opening = { ...response, status: 'in_progress', output: [], usage: null };
  ev('response.created', { response: opening });
  ev('response.in_progress', { response: opening });
  ev('response.output_item.added', {
    output_index: 0,
    item: { ...item, status: 'in_progress', content: [] },
  });
  ev('response.content_part.added', {
    item_id: item.id,
    output_index: 0,
    content_index: 0,
    part: { type: 'output_text', text: '', annotations: [] },
  });
  ev('response.output_text.delta', { item_id: item.id, output_index: 0, content_index: 0, delta: text });
  ev('response.output_text.done', { item_id: item.id, output_index: 0, content_index: 0, text });
  ev('response.content_part.done', {
    item_id: item.id,
    output_index: 0,
    content_index: 0,
    part: { type: 'output_text', text, annotations: [] },
  });
  ev('response.output_item.done', { output_index: 0, item });
  ev('response.completed', { response });
  res.end();
}
