#!/usr/bin/env node
/**
 * The floor for the proxy benches: a minimal forwarding proxy (node:http in,
 * undici out) that reads the request, sends the same bytes upstream and
 * streams the reply back. No parsing, no compression, no stats. Usage:
 *   node bench/lib/forward-proxy.js UPSTREAM_ORIGIN   (prints its port on stdout)
 */
import { createServer } from 'node:http';
import { Pool } from 'undici';

const upstream = new Pool(process.argv[2], { connections: 128 });
const HOP = new Set(['host', 'connection', 'keep-alive', 'transfer-encoding', 'content-length']);

const server = createServer(async (req, res) => {
  if (req.method === 'GET' && req.url === '/health') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"status":"ok"}');
    return;
  }
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const headers = {};
  for (const [k, v] of Object.entries(req.headers)) if (!HOP.has(k)) headers[k] = v;
  try {
    const up = await upstream.request({
      method: req.method,
      path: req.url,
      headers,
      body: Buffer.concat(chunks),
    });
    const out = {};
    for (const [k, v] of Object.entries(up.headers)) if (!HOP.has(k)) out[k] = v;
    res.writeHead(up.statusCode, out);
    for await (const c of up.body) res.write(c);
    res.end();
  } catch (err) {
    res.writeHead(502, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: String(err) }));
  }
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
