// bridge=mcp-apps, CSP=MCP Apps default (no 'wasm-unsafe-eval': server-rendered fallback)
import { defineSuite } from "../lib/suite.mjs";

defineSuite({ bridge: "mcp-apps", csp: "mcp-apps" });
