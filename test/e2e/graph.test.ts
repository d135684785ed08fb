import { describe, expect, it } from "vitest";
import { runCli, workspace } from "../helpers/cli.js";

/** A workflow of one root task and `dependents` tasks that depend on it: that many edges. */
function fan(dependents: number, idLength = 4): string {
  const lines = ["tasks:", "  root: { run: make }"];
  for (let i = 0; i < dependents; i++) lines.push(`  ${`t${i}`.padEnd(idLength, "x")}: { run: make, dependsOn: root }`);
  return `${lines.join("\n")}\n`;
}

describe("taskq graph", () => {
  // Mermaid's defaults (maxEdges 500, maxTextSize 50,000), which a diagram cannot raise itself: past them, where Mermaid
  // draws it with those (mermaid-cli, a page showing a Markdown file's diagrams), an error shows instead of the graph.
  it("says on stderr that a Mermaid graph past Mermaid's default limits, 500 edges or 50,000 characters, shows an error instead, and names --format dot; the graph is printed all the same", async () => {
    const atLimit = await workspace(fan(500));
    const fits = await runCli(["graph", atLimit.file]);
    expect(fits).toMatchObject({ code: 0, stderr: "" });
    expect(fits.stdout.split("\n").filter((line) => line.includes(" --> "))).toHaveLength(500);

    const past = await workspace(fan(501));
    const mermaid = await runCli(["graph", past.file]);
    expect(mermaid.code).toBe(0);
    expect(mermaid.stdout.split("\n").filter((line) => line.includes(" --> "))).toHaveLength(501);
    expect(mermaid.stderr).toBe(
      "note: this graph has 501 edges, and Mermaid draws at most 500 edges (maxEdges) with its default settings, which a diagram cannot change itself: drawn so, it shows an error instead; --format dot gives Graphviz, which has no such limit\n",
    );
    // Graphviz has no such limit: no note.
    expect(await runCli(["graph", past.file, "--format", "dot"])).toMatchObject({ code: 0, stderr: "" });

    // Long ids: few edges, but more text than Mermaid reads.
    const long = await workspace(fan(400, 128));
    const text = await runCli(["graph", long.file]);
    expect(text.code).toBe(0);
    expect(text.stdout.length).toBeGreaterThan(50_000);
    expect(text.stderr).toBe(
      `note: this graph has ${text.stdout.length.toLocaleString("en-US")} characters, and Mermaid reads at most 50,000 characters (maxTextSize) with its default settings, which a diagram cannot change itself: drawn so, it shows an error instead; --format dot gives Graphviz, which has no such limit\n`,
    );
  });
});
