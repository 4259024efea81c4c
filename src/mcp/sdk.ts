/**
 * The parts of the official MCP SDK that `svc mcp` uses. The build bundles
 * this module, the SDK's server package and zod into one file in place
 * (`scripts/bundle-vendor.js`), so the installed package does not carry the
 * SDK's dependency tree (about 17 MB) for one command; in the tests it is the
 * packages themselves.
 */
export { McpServer } from '@modelcontextprotocol/server';
export { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
export { z } from 'zod';
