// The package runs in browsers too: its built modules import only each other and use no Node API.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { test } from "node:test";

test("dist imports only its own modules and touches no Node global", () => {
  const dist = new URL("../dist/", import.meta.url);
  const modules = readdirSync(dist).filter((name) => name.endsWith(".js"));
  assert.ok(modules.length >= 6);
  for (const name of modules) {
    const code = readFileSync(new URL(name, dist), "utf8");
    for (const [, specifier] of code.matchAll(/\bfrom\s+"([^"]+)"/g)) {
      assert.match(specifier, /^\.\/[\w-]+\.js$/, `${name} imports ${specifier}`);
    }
    assert.doesNotMatch(code, /\b(require\(|process\.|Buffer\b|__dirname|import\()/, name);
  }
});
