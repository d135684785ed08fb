import { describe, expect, it } from "vitest";
import { startTurn } from "../../src/handlers/start-turn.js";

describe("startTurn", () => {
  // A shell's exit is told while libuv reads its queue of signals: an attempt started in that
  // call kept taskq's own Ctrl-C waiting behind the exits of the tasks it started.
  it("gives each attempt a turn of the event loop of its own: a signal that comes as one starts is taken before the next starts", async () => {
    const order: string[] = [];
    const onSignal = (): number => order.push("signal");
    process.on("SIGWINCH", onSignal);
    try {
      await Promise.all([
        startTurn().then(() => {
          order.push("a");
          process.kill(process.pid, "SIGWINCH");
        }),
        startTurn().then(() => order.push("b")),
        startTurn().then(() => order.push("c")),
      ]);
    } finally {
      process.off("SIGWINCH", onSignal);
    }
    expect(order).toEqual(["a", "signal", "b", "c"]);
  });

  it("is not called in the caller's own turn, and gives turns again after a pause", async () => {
    let resolved = false;
    const first = startTurn().then(() => (resolved = true));
    await Promise.resolve();
    expect(resolved).toBe(false);
    await first;
    await new Promise((resolve) => setTimeout(resolve, 5));
    await expect(Promise.race([startTurn().then(() => "turn"), new Promise((resolve) => setTimeout(() => resolve("stuck"), 1000))])).resolves.toBe("turn");
  });
});
