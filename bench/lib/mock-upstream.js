#!/usr/bin/env node
/**
 * Loopback mock upstream for the benches: answers every POST with a small
 * non-streaming reply (messages format for /v1/messages, chat-completions
 * otherwise) once the request body has been read. Prints its port on stdout.
 *
 * `GET /__watch?pid=N` makes it read process N's CPU time (`cpu.js`) when each
 * later POST arrives, and `GET /__arrival` answers the last such reading in
 * ms: a bench sending through a proxy at c=1 gets the proxy's CPU time on the
 * request path (from before it sent to when the upstream has the request).
 */
import { createServer } from 'node:http';
import { cpuMs } from './cpu.js';

const MESSAGES_REPLY = JSON.stringify({
  id: 'msg_bench',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5',
  content: [{ type: 'text', text: 'ok' }],
  stop_reason: 'end_turn',
  usage: { input_tokens: 1000, output_tokens: 1 },
});
const CHAT_REPLY = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  model: 'gpt-4o',
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1000, completion_tokens: 1, total_tokens: 1001 },
});

let watched = 0;
let arrivalCpuMs = Number.NaN;

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url?.startsWith('/__watch?pid=')) {
    watched = Number(req.url.slice('/__watch?pid='.length));
    res.end('ok');
    return;
  }
  if (req.method === 'GET' && req.url === '/__arrival') {
    res.end(String(arrivalCpuMs));
    return;
  }
  if (watched) arrivalCpuMs = cpuMs(watched);
  req.resume();
  req.on('end', () => {
    const reply = req.url?.endsWith('/messages') ? MESSAGES_REPLY : CHAT_REPLY;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(reply) });
    res.end(reply);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
