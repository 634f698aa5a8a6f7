// bridge=openai, CSP=ChatGPT-like (WebAssembly allowed)
import { defineSuite } from "../lib/suite.mjs";

defineSuite({ bridge: "openai", csp: "chatgpt" });
