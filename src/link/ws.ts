// ws, loaded through require. Its ESM entry (wrapper.mjs) imports ws's CommonJS files one by one
// through the ESM loader, which lexes each for its export names first: on node 20 that took about
// 50 ms of CPU at every start, against about 20 ms for require('ws'). Same classes either way.
import { createRequire } from 'node:module';

const ws = createRequire(import.meta.url)('ws') as typeof import('ws');

export const WebSocket = ws.WebSocket;
export const WebSocketServer = ws.WebSocketServer;
export type { RawData } from 'ws';
