import fc from "fast-check";
import { afterAll } from "vitest";
import { removeWorkspaces } from "./cli.js";

// Property tests run from one fixed seed, so that a test run is the same every time and a CI
// run cannot fail on a case no earlier run drew. `FC_SEED=random` draws a new seed for each
// property (fast-check prints it with any counterexample) and `FC_SEED=N` replays one: a soak
// for new cases, with the files' own run counts raised (e.g. SIMPLE_YAML_RUNS).
const seed = process.env.FC_SEED ?? "20261206";
if (seed !== "random") {
  if (!/^-?\d+$/.test(seed)) throw new Error(`FC_SEED must be a whole number or "random", got ${JSON.stringify(seed)}`);
  fc.configureGlobal({ seed: Number(seed) });
}

// Registered before any test file's own hooks, so it runs after them (vitest runs
// after-hooks in reverse order): a file's afterAll still sees its workspaces.
afterAll(async () => {
  await removeWorkspaces();
});
