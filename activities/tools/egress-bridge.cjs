// Runs inside the sandbox under "network": "full" (egress-proxy.ts): forwards 127.0.0.1:<port> of the sandbox's
// own network namespace to the egress proxy's Unix socket, the one way out. Says "ready" once it listens.
'use strict';
const net = require('node:net');

const [socketPath, port] = process.argv.slice(2);
const server = net.createServer((client) => {
  const upstream = net.connect(socketPath);
  client.on('error', () => upstream.destroy());
  upstream.on('error', () => client.destroy());
  client.pipe(upstream).pipe(client);
});
server.listen(Number(port), '127.0.0.1', () => {
  process.stdout.on('error', () => {});
  process.stdout.write('ready\n');
});
