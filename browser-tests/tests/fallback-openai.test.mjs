// bridge=openai, CSP=MCP Apps default (no 'wasm-unsafe-eval': server-rendered fallback)
import { defineSuite } from "../lib/suite.mjs";

defineSuite({ bridge: "openai", csp: "mcp-apps" });
