import { describe, expect, it } from "vitest";
import { OpenTimes } from "../../src/handlers/open-times.js";

describe("OpenTimes: how long log opens on the main thread take", () => {
  it("judges nothing until five opens are timed, so a run's cold first open does not send logs to the thread pool", () => {
    const times = new OpenTimes();
    times.add(0.3);
    for (let i = 0; i < 3; i++) times.add(0.04);
    expect(times.median()).toBe(0);
    times.add(0.05);
    expect(times.median()).toBe(0.04);
  });

  it("is the median of the last nine: a few slow opens among fast ones do not count, a disk that turns slow (or fast again) does", () => {
    const times = new OpenTimes();
    for (let i = 0; i < 9; i++) times.add(0.03);
    for (let i = 0; i < 4; i++) times.add(0.9);
    expect(times.median()).toBe(0.03);
    times.add(0.9);
    expect(times.median()).toBe(0.9);
    for (let i = 0; i < 4; i++) times.add(0.02);
    expect(times.median()).toBe(0.9);
    times.add(0.02);
    expect(times.median()).toBe(0.02);
  });
});
