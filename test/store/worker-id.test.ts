import { hostname } from "node:os";
import { describe, expect, it } from "vitest";
import { newWorkerId, workerHostAndPid } from "../../src/store/postgres/worker-id.js";

describe("worker ids", () => {
  it("are read from their end: a host name with `-` in it gives the whole host and the pid", () => {
    expect(workerHostAndPid("ci-7-4121-a3f9c2")).toEqual({ host: "ci-7", pid: 4121 });
    expect(workerHostAndPid("runner-12-34-567-000fff")).toEqual({ host: "runner-12-34", pid: 567 });
    expect(workerHostAndPid(newWorkerId())).toEqual({ host: hostname(), pid: process.pid });
  });

  it("say nothing of an id taskq did not make", () => {
    for (const id of ["w1", "dead-worker", "host-12-xyz123", "host-0-a3f9c2", "-12-a3f9c2"]) expect(workerHostAndPid(id)).toBeUndefined();
  });
});
