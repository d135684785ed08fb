import { afterAll } from "vitest";
import { removeWorkspaces } from "./cli.js";

// Registered before any test file's own hooks, so it runs after them (vitest runs
// after-hooks in reverse order): a file's afterAll still sees its workspaces.
afterAll(async () => {
  await removeWorkspaces();
});
