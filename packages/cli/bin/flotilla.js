#!/usr/bin/env node
// The `flotilla` command (npm bin). A plain file kept in git with its executable bit, so that
// `npx flotilla` works after `npm ci && npm run build`; the program is the build in dist/.
import { main } from "../dist/index.js";

process.exitCode = await main(process.argv.slice(2));
