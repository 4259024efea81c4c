// Preloaded into ML test children (and, through execArgv, their worker threads):
// any attempt to open a socket or resolve a name is reported and refused.
const net = require('node:net');
const dns = require('node:dns');
const report = (what) => {
  process.stderr.write(`NETWORK ATTEMPT: ${what}\n`);
  throw new Error(`network access attempted: ${what}`);
};
net.Socket.prototype.connect = function connect() {
  report('socket connect');
};
dns.lookup = () => report('dns lookup');
globalThis.fetch = () => report('fetch');
