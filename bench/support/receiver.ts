/**
 * A fast local HTTP receiver for the delivery benchmarks (loopback, keep-alive): answers every
 * request `200 ok` at once, counts them and hands each body to `onRequest`, which the bench sets.
 * The `ok` answer is also what a Slack incoming webhook answers.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Receiver {
  url: string;
  count: number;
  onRequest: (body: Buffer) => void;
  close(): Promise<void>;
}

export async function startReceiver(pathname = '/hook'): Promise<Receiver> {
  const server = http.createServer({ keepAliveTimeout: 30_000 });
  const receiver: Receiver = {
    url: '',
    count: 0,
    onRequest: () => {},
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  server.on('request', (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      receiver.count += 1;
      receiver.onRequest(Buffer.concat(chunks));
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${pathname}`;
  return receiver;
}
