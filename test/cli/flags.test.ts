import { describe, expect, it } from "vitest";
import { concurrencyFlag, typedFlagName } from "../../src/cli/flags.js";

describe("concurrencyFlag (-j)", () => {
  it("takes a whole number from 1 to 10000 written in digits", () => {
    expect(["1", "8", "08", "10000"].map((value) => concurrencyFlag(value, undefined))).toEqual([1, 8, 8, 10_000]);
    expect(concurrencyFlag(undefined, 3)).toBe(3);
  });

  it("refuses other ways JavaScript reads a number (1e3, 0x10, 0b11, 4.0, +3), as the message says", () => {
    for (const value of ["1e3", "0x10", "0b11", "0o7", "4.0", "+3", " 4 ", "", " ", "0", "-1", "10001", "Infinity", "3abc"]) {
      expect(() => concurrencyFlag(value, undefined), value).toThrow(`--concurrency: ${JSON.stringify(value)} is not a whole number from 1 to 10000`);
    }
  });

  it("names the number meant by a value off by a space or a sign, but for one out of range", () => {
    expect(() => concurrencyFlag(" 4 ", undefined)).toThrow('--concurrency: " 4 " is not a whole number from 1 to 10000 (digits alone, without a space or a sign: 4)');
    expect(() => concurrencyFlag("+3", undefined)).toThrow('--concurrency: "+3" is not a whole number from 1 to 10000 (digits alone, without a space or a sign: 3)');
    expect(() => concurrencyFlag(" 0", undefined)).toThrow(/^--concurrency: " 0" is not a whole number from 1 to 10000$/);
  });

  it("names the number meant by one written as JavaScript reads numbers (4.0, 1e1, 0x10, with a sign too: +4.0), but for one out of range or not whole", () => {
    for (const [value, meant] of [["4.0", 4], ["4.", 4], ["1e1", 10], ["0x10", 16], ["0b11", 3], ["0o7", 7], ["2.50e1", 25], ["+4.0", 4], ["+0x10", 16]] as const) {
      expect(() => concurrencyFlag(value, undefined), value).toThrow(`--concurrency: ${JSON.stringify(value)} is not a whole number from 1 to 10000 (digits alone: ${meant})`);
    }
    for (const value of ["2.5", "1e5", "0x0", "1e-1", "Infinity", "3abc", "-1", "0.0"]) {
      expect(() => concurrencyFlag(value, undefined), value).toThrow(new RegExp(`^--concurrency: ${JSON.stringify(value).replace(/[.+]/g, "\\$&")} is not a whole number from 1 to 10000$`));
    }
  });

  it("says how to write -j=4, which hands the flag \"=4\": a short flag takes its value after it or a space", () => {
    expect(() => concurrencyFlag("=4", undefined)).toThrow('--concurrency: "=4" is not a whole number from 1 to 10000 (write -j 4 or --concurrency=4: a short flag takes no =)');
    expect(() => concurrencyFlag("=x", undefined)).toThrow(/^--concurrency: "=x" is not a whole number from 1 to 10000$/);
  });
});

describe("typedFlagName", () => {
  it("is the short or long name the flag was last given by, the long one when it was not given", () => {
    expect(typedFlagName("-j", "--concurrency", ["run", "ci.yaml", "-j", "0"])).toBe("-j");
    expect(typedFlagName("-j", "--concurrency", ["run", "ci.yaml", "-j4"])).toBe("-j");
    expect(typedFlagName("-j", "--concurrency", ["run", "ci.yaml", "--concurrency=x"])).toBe("--concurrency");
    expect(typedFlagName("-j", "--concurrency", ["run", "-j", "2", "--concurrency", "x"])).toBe("--concurrency");
    expect(typedFlagName("-j", "--concurrency", ["run", "ci.yaml"])).toBe("--concurrency");
    // A value is not a flag, and nothing after "--" is one.
    expect(typedFlagName("-j", "--concurrency", ["run", "--concurrency", "-j"])).toBe("--concurrency");
    expect(typedFlagName("-j", "--concurrency", ["run", "--concurrency", "3", "--", "-j"])).toBe("--concurrency");
  });
});
