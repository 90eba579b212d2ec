// Loopback names and the host part of a Host header: shared by the MCP listener's Host check
// (surfaces/http.ts) and the link port's Origin rule (link/origin.ts). Pure.

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

export function isLoopbackHost(host: string): boolean {
  return LOOPBACK_HOSTS.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host) || host === '::ffff:127.0.0.1';
}

/** `Host` header value without its port: `[::1]:3000` -> `[::1]`, `localhost:3000` -> `localhost`. */
export function hostName(header: string): string {
  const value = header.trim().toLowerCase();
  if (value.startsWith('[')) return value.slice(0, value.indexOf(']') + 1);
  const colon = value.lastIndexOf(':');
  return colon === -1 ? value : value.slice(0, colon);
}
