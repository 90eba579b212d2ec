// The exposure guard: what to say (or refuse) before listening, given where each port binds and
// which tokens are set. Pure, so every combination is testable without starting anything.
import type { Config } from './config.js';
import { isLoopbackHost } from './surfaces/http.js';

export interface Exposure {
  /** Refuse to start with this explanation (exit 2), or null. */
  fatal: string | null;
  /** Loud lines to print on start. */
  warnings: string[];
}

export interface Listening {
  /** Whether the MCP HTTP listener opens (--stdio without MCP_PORT opens none; the link port always opens). */
  http: boolean;
}

export function checkExposure(config: Config, listening: Listening = { http: true }): Exposure {
  const warnings: string[] = [];
  let fatal: string | null = null;
  // MCP_HOST matters only when something listens there
  if (listening.http && !isLoopbackHost(config.mcpHost) && config.mcpAuthTokens.length === 0) {
    const risk = `MCP_HOST=${config.mcpHost} is not a loopback address and MCP_AUTH_TOKEN is not set: anyone who can reach ${config.mcpHost}:${config.mcpPort} can run code on every linked computer`;
    if (config.allowUnauthenticated) warnings.push(`WARNING: ${risk} (allowed by MCP_ALLOW_UNAUTHENTICATED=on)`);
    else fatal = `refusing to start: ${risk}. Set MCP_AUTH_TOKEN (or MCP_AUTH_TOKEN_FILE), bind MCP_HOST=127.0.0.1, or set MCP_ALLOW_UNAUTHENTICATED=1 to accept the risk.`;
  }
  if (config.linkTokens.length === 0) {
    // CC_LINK_PIN narrows "any computer id" to the ids no computer has linked with its key yet
    const which = config.linkPinStrict
      ? 'a computer id the operator let in (cc-mcp pin-reset) before its computer does (CC_LINK_PIN=strict)'
      : config.linkPin
        ? 'any computer id not yet pinned by its computer\'s key (CC_LINK_PIN)'
        : 'any computer id';
    if (!isLoopbackHost(config.linkHost)) {
      warnings.push(
        `WARNING: CC_LINK_HOST=${config.linkHost} is not a loopback address and CC_LINK_TOKEN is not set: anyone who can reach the link port can link as ${which}, replace the real one and be handed the code meant for it; so can any web page opened in a browser that can reach it, through DNS rebinding (the page's Origin then names the address it dialled, which a link port off loopback must accept for Java clients). Set CC_LINK_TOKEN (and mcp.token on each computer), or CC_LINK_HOST=127.0.0.1 when Minecraft runs on this machine.`,
      );
    } else {
      warnings.push(`note: CC_LINK_TOKEN is not set: any local process can link as ${which} and replace it.`);
    }
  }
  return { fatal, warnings };
}
