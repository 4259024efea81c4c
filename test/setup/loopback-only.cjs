// Test safety net: every socket this process (or a child started with it in
// NODE_OPTIONS, or a worker thread) opens must go to the loopback range
// (127.0.0.0/8 or ::1) or a local pipe. Anything else throws before a packet
// leaves, so a test that forgot to point svc at its mock upstream fails loudly.
const net = require('node:net');

const original = net.Socket.prototype.connect;

function isLoopback(host) {
  if (host === undefined || host === 'localhost') return true;
  if (net.isIPv4(host)) return host.startsWith('127.');
  if (net.isIPv6(host)) return host === '::1' || host.startsWith('::ffff:127.');
  return false;
}

net.Socket.prototype.connect = function connect(...args) {
  const first = args[0];
  let options;
  if (Array.isArray(first)) options = first[0];
  else if (typeof first === 'object' && first !== null) options = first;
  else
    options =
      typeof first === 'string' && !/^\d+$/.test(first) ? { path: first } : { port: first, host: args[1] };
  if (!options.path && !isLoopback(options.host)) {
    const err = new Error(`svc tests may only connect to loopback; refused ${options.host}:${options.port}`);
    err.code = 'SVC_TEST_NON_LOOPBACK';
    throw err;
  }
  return original.apply(this, args);
};
