// A 2026-07-28 subscriptions/listen client over real HTTP, shared by the listen tests.
import http from 'node:http';
import { until } from '../helpers.js';

export const MODERN = '2026-07-28';
export const META = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };
export const SUB = 'io.modelcontextprotocol/subscriptionId';
export const ACCEPT = 'application/json, text/event-stream';

/**
 * POSTs subscriptions/listen and reads the answer as it comes: SSE events parsed into `events`,
 * comment lines counted; a JSON (error) answer is in `json`. `close()` drops the connection.
 */
export function listen(url, id, notifications, { accept = ACCEPT, params, headers = {}, localAddress } = {}) {
  const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'subscriptions/listen', params: params ?? { _meta: META, notifications } });
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept, 'mcp-protocol-version': MODERN, 'mcp-method': 'subscriptions/listen', ...headers },
      // a client from another loopback address (127.0.0.2 ...), for the per-address limits
      ...(localAddress ? { localAddress } : {}),
    });
    req.on('error', reject);
    req.on('response', (res) => {
      const stream = { res, status: res.statusCode, headers: res.headers, events: [], comments: 0, text: '', ended: false, json: null };
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        stream.text += chunk;
        if (!/^text\/event-stream/.test(res.headers['content-type'])) return;
        buffer += chunk;
        let cut;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) stream.comments++;
            else if (line.startsWith('data: ')) stream.events.push(JSON.parse(line.slice(6)));
          }
        }
      });
      res.on('end', () => {
        stream.ended = true;
        if (/^application\/json/.test(res.headers['content-type'])) stream.json = JSON.parse(stream.text);
      });
      res.on('error', () => {});
      stream.close = () => req.destroy();
      stream.next = (predicate) => until(() => stream.events.find(predicate));
      resolve(stream);
    });
    req.end(body);
  });
}
