import { get, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Opens the event stream and resolves with the first `event` of that name, parsed. */
export function firstEvent(
  server: Server,
  path: string,
  name: string,
): Promise<{ data: any; response: IncomingMessage; close: () => void }> {
  return new Promise((resolve, reject) => {
    const { port } = server.address() as AddressInfo;
    const req = get({ host: '127.0.0.1', port, path }, (response) => {
      let buffer = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        buffer += chunk;
        for (const block of buffer.split('\n\n')) {
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event === name && data !== undefined) {
            response.removeAllListeners('data');
            resolve({ data: JSON.parse(data), response, close: () => req.destroy() });
            return;
          }
        }
      });
    });
    req.on('error', reject);
  });
}
