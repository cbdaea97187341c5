// `npm pack` gives a package that a fresh project installs from the tarball and imports, in ESM and TypeScript.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const PACKAGE = fileURLToPath(new URL("..", import.meta.url));
const TSC = join(PACKAGE, "node_modules", "typescript", "bin", "tsc");

test("the tarball installs and imports in a fresh project", () => {
  const dir = mkdtempSync(join(tmpdir(), "chatmend-pack-"));
  try {
    const [{ filename, files }] = JSON.parse(
      execFileSync("npm", ["pack", "--json", "--pack-destination", dir], { cwd: PACKAGE, encoding: "utf8" }),
    );
    assert.ok(files.some((f) => f.path === "dist/index.d.ts"));
    assert.ok(!files.some((f) => f.path.startsWith("src/") || f.path.startsWith("test/")));
    const project = join(dir, "project");
    execFileSync("mkdir", [project]);
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "fresh", private: true, type: "module" }));
    execFileSync("npm", ["install", "--offline", "--no-audit", "--no-fund", join(dir, filename)], { cwd: project });
    writeFileSync(
      join(project, "use.mjs"),
      `import { repairHistory } from "chatmend";
import { repairModelMessages } from "chatmend/ai-sdk";
const r = repairHistory([{ role: "assistant", content: "", tool_calls: [{ id: "a", name: "ls" }] }]);
console.log(JSON.stringify([r.interrupted.map((c) => c.id), typeof repairModelMessages]));`,
    );
    assert.equal(execFileSync("node", ["use.mjs"], { cwd: project, encoding: "utf8" }).trim(), '[["a"],"function"]');
    writeFileSync(
      join(project, "use.ts"),
      `import { type ChatMessage, repairBody, repairHistory } from "chatmend";
const history: ChatMessage[] = [{ role: "user", content: "hi" }];
const ids: string[] = repairHistory(history).interrupted.map((call) => call.id);
const n: number = repairBody("openai_chat", { messages: [] as unknown[] }).rewritten.length;
// @ts-expect-error: an unknown provider is a type error
repairBody("nope", { messages: [] });
export { ids, n };`,
    );
    writeFileSync(
      join(project, "tsconfig.json"),
      JSON.stringify({ compilerOptions: { strict: true, module: "NodeNext", moduleResolution: "NodeNext", target: "ES2022", noEmit: true, types: [] }, files: ["use.ts"] }),
    );
    execFileSync("node", [TSC, "-p", "tsconfig.json"], { cwd: project, encoding: "utf8" });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
