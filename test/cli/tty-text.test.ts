import { stripVTControlCharacters } from "node:util";
import { Chalk } from "chalk";
import { afterEach, describe, expect, it } from "vitest";
import { createColors } from "../../src/cli/render/colors.js";
import { clockWithDate, formatDelay } from "../../src/cli/render/describe.js";
import { fitWidth, terminalSafe } from "../../src/cli/render/tty.js";

const chalk = new Chalk({ level: 1 });

describe("the live board's lines", () => {
  it("are cut to the terminal's width, colour codes taking no column, so none wraps", () => {
    const line = `  ${chalk.yellow("- deploy-frontend-to-region-07: dependency \"build-and-package-the-web-frontend\" failed")}`;
    const fitted = fitWidth(line, 40);
    expect(stripVTControlCharacters(fitted)).toBe(`  - deploy-frontend-to-region-07: depen…`);
    expect([...stripVTControlCharacters(fitted)]).toHaveLength(40);
    expect(fitted.endsWith("…\x1b[0m")).toBe(true); // the colour does not run on
    expect(fitWidth("no colour here, and too long", 10)).toBe("no colour…");
    // What fits is left as it is.
    expect(fitWidth(chalk.green("✓ build"), 7)).toBe(chalk.green("✓ build"));
  });

  it("say when a time is not today, and count long waits in days and hours, not minutes", () => {
    const inAYear = Date.now() + 366 * 24 * 3_600_000;
    expect(clockWithDate(inAYear)).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$/);
    expect(clockWithDate(Date.now())).toMatch(/^\d\d:\d\d:\d\d\.\d{3}$/);
    expect(formatDelay(1_621_760 * 60_000 + 57_200)).toBe("1126d5h");
    expect(formatDelay(2 * 3_600_000 + 5 * 60_000 + 7_000)).toBe("2h5m");
    expect(formatDelay(3_600_000)).toBe("1h");
    expect(formatDelay(42_500)).toBe("42.5s");
  });
});

describe("task output above the board", () => {
  it("keeps a progress line's last state, drops cursor moves and screen clears, and ends colours with the line", () => {
    expect(terminalSafe("progress 33%\rprogress 66%\rprogress 99%")).toBe("progress 99%");
    expect(terminalSafe("\x1b[2J\x1b[Hcleared")).toBe("cleared");
    expect(terminalSafe("\x1b]0;a title\x07text")).toBe("text");
    expect(terminalSafe("\x1b[41;37mred, never reset")).toBe("\x1b[41;37mred, never reset\x1b[0m");
    expect(terminalSafe("plain")).toBe("plain");
  });
});

describe("colours", () => {
  const saved = { NO_COLOR: process.env.NO_COLOR, FORCE_COLOR: process.env.FORCE_COLOR };
  afterEach(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it("are off on a terminal under FORCE_COLOR=0, as Node reads it", async () => {
    delete process.env.NO_COLOR;
    process.env.FORCE_COLOR = "0";
    expect((await createColors({ color: true, isTTY: true })).level).toBe(0);
    delete process.env.FORCE_COLOR;
    expect((await createColors({ color: true, isTTY: true })).level).toBeGreaterThan(0);
  });
});
