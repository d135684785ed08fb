import { afterAll, beforeAll } from "vitest";
import type { PostgresStore } from "../../src/store/postgres/store.js";
import { openTestStore } from "../store/helpers.js";
import { describeLifecycleContract } from "./lifecycle-cases.js";
import { postgresAdapter } from "./postgres-adapter.js";

// One schema for this file; each case is a run of its own, worked by its own PostgresWorker.
let store: PostgresStore | undefined;
let close = (): Promise<void> => Promise.resolve();
beforeAll(async () => ({ store, close } = await openTestStore()));
afterAll(() => close());

describeLifecycleContract(
  postgresAdapter(() => {
    if (store === undefined) throw new Error("the store opens in beforeAll");
    return store;
  }),
);
