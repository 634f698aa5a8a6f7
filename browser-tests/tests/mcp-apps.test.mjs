// bridge=mcp-apps, CSP=ChatGPT-like (WebAssembly allowed)
import { defineSuite } from "../lib/suite.mjs";

defineSuite({ bridge: "mcp-apps", csp: "chatgpt" });
