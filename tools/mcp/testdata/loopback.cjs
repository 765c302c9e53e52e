// Preloaded into the Node.js servers the tests start (node --require):
// every TCP server of the process listens on 127.0.0.1 only, whatever
// host it asks for, and says on standard error where it listens
// ("loopback: listening on 127.0.0.1:PORT"), so a test can ask for
// port 0 and learn the port. Paths (Unix sockets) and handles are left
// alone.
'use strict';
const net = require('net');
const listen = net.Server.prototype.listen;
const loopback = '127.0.0.1';

net.Server.prototype.listen = function (...args) {
  const first = args[0];
  const isPort = typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first));
  if (isPort) {
    if (typeof args[1] === 'string') {
      args[1] = loopback;
    } else {
      args.splice(1, 0, loopback);
    }
  } else if (first && typeof first === 'object' && !(first instanceof net.Server) && first.path === undefined && first.handle === undefined && first.fd === undefined) {
    args[0] = { ...first, host: loopback, ipv6Only: false };
  } else if (first === undefined || typeof first === 'function') {
    args.unshift(0, loopback);
  }
  this.once('listening', () => {
    const a = this.address();
    if (a && typeof a === 'object') {
      process.stderr.write(`loopback: listening on ${a.address}:${a.port}\n`);
    }
  });
  return listen.apply(this, args);
};
