import { describe, expect, it } from "vitest";
import { exponentialBackoff, exponentialDelay, type ExponentialBackoffOptions } from "../../src/engine/backoff.js";

describe("exponentialDelay", () => {
  it("doubles from the base and stops at the cap", () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => exponentialDelay(n, 100, 2_000))).toEqual([100, 200, 400, 800, 1_600, 2_000]);
  });

  it("treats attempt 0 or below as the first", () => {
    expect(exponentialDelay(0, 100, 2_000)).toBe(100);
    expect(exponentialDelay(-1, 100, 2_000)).toBe(100);
  });

  it.each([1.5, 0.5, -1.5, Infinity, -Infinity])("refuses attempt %s, no retry's number, with INVALID_OPTION rather than a delay between two retries'", (attempt) => {
    expect(() => exponentialDelay(attempt, 100, 2_000)).toThrow(
      expect.objectContaining({ code: "INVALID_OPTION", message: `exponentialDelay attempt must be a whole number (1 for the first retry), got ${attempt}` }),
    );
    expect(() => exponentialBackoff({ baseMs: 100, maxMs: 2_000 })(attempt)).toThrow(
      expect.objectContaining({ code: "INVALID_OPTION", message: `exponentialBackoff's backoff attempt must be a whole number (1 for the first retry), got ${attempt}` }),
    );
  });

  it("stays at the cap for huge attempts (no overflow)", () => {
    expect(exponentialDelay(5_000, 100, 2_000)).toBe(2_000);
  });

  it("stays 0 for a base of 0 at any attempt, past 2 ** 1024 too", () => {
    expect(exponentialDelay(5_000, 0, 2_000)).toBe(0);
    // `maxMs: 0` alone lowers the base to 0: every retry at once, the 1025th too (NaN failed the task there, with a warning).
    const backoff = exponentialBackoff({ maxMs: 0 });
    expect([1, 1_024, 1_025, 5_000].map((attempt) => backoff(attempt))).toEqual([0, 0, 0, 0]);
  });
});

describe("exponentialDelay's bounds, checked as exponentialBackoff checks them", () => {
  it.each([
    // No cap: the delay reached Infinity, which a backoff built on it hands the queue (the task then fails instead of retrying).
    [[2_000, 1_000, Infinity], "exponentialDelay maxMs must be a finite number of ms, got Infinity: the doubling delay would reach Infinity"],
    [[1, Infinity, Infinity], "exponentialDelay baseMs must be a finite number of ms, got Infinity: every retry would wait for ever"],
    [[1, NaN, 1_000], "exponentialDelay baseMs must be a number of ms, 0 or more, got NaN"],
    [[1, 100, -1], "exponentialDelay maxMs must be a number of ms, 0 or more, got -1"],
    [[NaN, 100, 1_000], "exponentialDelay attempt must be a whole number (1 for the first retry), got NaN"],
  ])("exponentialDelay(%s) throws INVALID_OPTION rather than returning Infinity or NaN", (args, message) => {
    const [attempt, baseMs, maxMs] = args as [number, number, number];
    expect(() => exponentialDelay(attempt, baseMs, maxMs)).toThrow(expect.objectContaining({ code: "INVALID_OPTION", message: expect.stringContaining(message) }));
  });

  it.each([
    [[1, 1_000, undefined], "exponentialDelay maxMs must be a number of ms, 0 or more, got undefined"],
    [[1, undefined, 5_000], "exponentialDelay baseMs must be a number of ms, 0 or more, got undefined"],
    [[1], "exponentialDelay baseMs must be a number of ms, 0 or more, got undefined"],
    [[undefined, 100, 1_000], "exponentialDelay attempt must be a whole number (1 for the first retry), got undefined"],
  ])("exponentialDelay(%s), a bound or the attempt left out from JavaScript, throws INVALID_OPTION rather than returning NaN", (args, message) => {
    const call = exponentialDelay as (...given: unknown[]) => number;
    expect(() => call(...args)).toThrow(expect.objectContaining({ code: "INVALID_OPTION", message: expect.stringContaining(message) }));
  });

  it("still caps at a max under the base, and returns finite delays for finite bounds", () => {
    expect(exponentialDelay(1, 500, 100)).toBe(100);
    expect(exponentialDelay(5_000, 1_000, 2_592_000_000)).toBe(2_592_000_000);
  });
});

describe("exponentialBackoff (full jitter)", () => {
  it("is exactly floor(random * (d + 1)) with an injected random source", () => {
    const values = [0, 0.5, 0.999_999, 0.25];
    let i = 0;
    const backoff = exponentialBackoff({ baseMs: 100, maxMs: 1_000, random: () => values[i++]! });
    expect(backoff(1)).toBe(0); // 0 * 101
    expect(backoff(2)).toBe(100); // floor(0.5 * 201)
    expect(backoff(3)).toBe(400); // floor(0.999999 * 401)
    expect(backoff(10)).toBe(250); // capped: floor(0.25 * 1001)
  });

  it("stays within [0, d] for the extremes of the random source", () => {
    const low = exponentialBackoff({ baseMs: 50, maxMs: 400, random: () => 0 });
    const high = exponentialBackoff({ baseMs: 50, maxMs: 400, random: () => 1 - Number.EPSILON });
    for (let n = 1; n <= 8; n++) {
      expect(low(n)).toBe(0);
      expect(high(n)).toBe(exponentialDelay(n, 50, 400));
    }
  });

  it("keeps the delay within [0, d] for a random source that returns exactly 1 (or beyond [0, 1))", () => {
    for (const value of [1, 1.5, -0.5]) {
      const backoff = exponentialBackoff({ baseMs: 100, maxMs: 1_000, random: () => value });
      for (let n = 1; n <= 6; n++) {
        expect(backoff(n)).toBeGreaterThanOrEqual(0);
        expect(backoff(n)).toBeLessThanOrEqual(exponentialDelay(n, 100, 1_000));
      }
    }
    expect(exponentialBackoff({ baseMs: 100, maxMs: 1_000, random: () => 1 })(10)).toBe(1_000);
  });

  it("throws INVALID_OPTION, rather than returning NaN, for an attempt that is not a number or a random source's NaN", () => {
    const backoff = exponentialBackoff({ baseMs: 100, maxMs: 1_000 }) as (attempt: unknown) => number;
    for (const attempt of [NaN, undefined, "3"]) {
      expect(() => backoff(attempt)).toThrow(expect.objectContaining({ code: "INVALID_OPTION", message: expect.stringContaining("attempt must be a whole number (1 for the first retry)") }));
    }
    for (const value of [NaN, "0.5", undefined]) {
      const jittered = exponentialBackoff({ baseMs: 100, maxMs: 1_000, random: () => value as number });
      expect(() => jittered(2)).toThrow(expect.objectContaining({ code: "INVALID_OPTION", message: expect.stringContaining("exponentialBackoff random must return a number in [0, 1)") }));
    }
  });

  it("defaults to a 1 s base and a 30 s cap", () => {
    const max = exponentialBackoff({ random: () => 1 - Number.EPSILON });
    expect(max(1)).toBe(1_000);
    expect(max(20)).toBe(30_000);
  });

  it.each([
    [{ base: 100, max: 2_000 }, 'unknown exponentialBackoff option "base", "max": the options are baseMs, maxMs, random'],
    [{ baseMs: "100" }, 'exponentialBackoff baseMs must be a number of ms, 0 or more, got "100" (a string)'],
    [{ maxMs: NaN }, "exponentialBackoff maxMs must be a number of ms, 0 or more, got NaN"],
    [{ baseMs: -1 }, "exponentialBackoff baseMs must be a number of ms, 0 or more, got -1"],
    [{ random: 0.5 }, "exponentialBackoff random must be a function () => [0, 1), got 0.5"],
    ["fast", 'exponentialBackoff options must be an object ({ baseMs, maxMs }), got "fast" (a string)'],
    [1_000, "exponentialBackoff options must be an object ({ baseMs, maxMs }), got 1000: for a base of 1000 ms, pass exponentialBackoff({ baseMs: 1000 })"],
    [{ random: "0.5" }, 'exponentialBackoff random must be a function () => [0, 1), got "0.5" (a string)'],
    // A max under its base, as a workflow file refuses it (`backoff.max` under its `base`): both values named, when given.
    [{ baseMs: 120_000, maxMs: 90_000 }, "exponentialBackoff maxMs must not be less than baseMs, 120000 ms (2m), got 90000 ms (1m30s)"],
    [{ baseMs: 500, maxMs: 100 }, "exponentialBackoff maxMs must not be less than baseMs, 500 ms, got 100 ms"],
    // Said to the microsecond, as formatMs says a duration: not "0.30000000000000004 ms".
    [{ baseMs: 0.1 + 0.2, maxMs: 0.1 }, "exponentialBackoff maxMs must not be less than baseMs, 0.3 ms, got 0.1 ms"],
    // An array said nothing: `[]` was taken for no options, and a value of `[]` said "got ".
    [[], "exponentialBackoff options must be an object ({ baseMs, maxMs }), got [] (an array): for a list of delays, pass a backoff of your own, (attempt) => delays[Math.min(attempt, delays.length) - 1]"],
    [{ baseMs: [] }, "exponentialBackoff baseMs must be a number of ms, 0 or more, got [] (an array)"],
    [{ maxMs: { s: 30 } }, 'exponentialBackoff maxMs must be a number of ms, 0 or more, got {"s":30} (an object)'],
    [{ baseMs: Infinity }, "exponentialBackoff baseMs must be a finite number of ms, got Infinity: every retry would wait for ever"],
    // No cap at all: the doubling reached Infinity at retry 1025, where the task failed with a warning instead of retrying.
    [
      { maxMs: Infinity },
      "exponentialBackoff maxMs must be a finite number of ms, got Infinity: the doubling delay would reach Infinity, and the task would fail there instead of retrying; for a cap out of the way, give a long one (2_592_000_000 for 30 days)",
    ],
  ])("exponentialBackoff(%j) throws INVALID_OPTION when given, instead of ignoring it at every retry", (options, message) => {
    expect(() => exponentialBackoff(options as unknown as ExponentialBackoffOptions)).toThrow(expect.objectContaining({ code: "INVALID_OPTION", message }));
  });

  it("takes a base over the default max as the max, and a max under the default base as the base, as a workflow file does", () => {
    const top = (): number => 1 - Number.EPSILON;
    // A base of a minute alone waits a minute, not the 30 s default cap.
    expect(exponentialBackoff({ baseMs: 60_000, random: top })(1)).toBe(60_000);
    expect(exponentialBackoff({ baseMs: 60_000, random: top })(5)).toBe(60_000);
    // A max of 100 ms alone caps every delay at it, the first included.
    expect(exponentialBackoff({ maxMs: 100, random: top })(1)).toBe(100);
    expect(exponentialBackoff({ maxMs: 2_000, random: top })(1)).toBe(1_000);
    expect(exponentialBackoff({ baseMs: 100, maxMs: 100, random: top })(3)).toBe(100);
  });

  it.each([null, { baseMs: null, maxMs: null, random: null }])("exponentialBackoff(%j) is the default: null is not given", (options) => {
    const random = (): number => 0.999_999;
    expect(exponentialBackoff(options as unknown as ExponentialBackoffOptions)(1)).toBeLessThanOrEqual(1_000);
    expect(exponentialBackoff({ ...(options ?? {}), random } as unknown as ExponentialBackoffOptions)(20)).toBe(30_000);
  });
});
