import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTlsProxy, type TlsProxy } from "../helpers/tls-proxy.js";
import { PostgresStore } from "../../src/store/postgres/store.js";
import { DATABASE_URL } from "../store/helpers.js";
import { useDurableWorkspace } from "./durable-harness.js";

// A store reached over TLS, as a managed database is: its certificate one Node does not trust.
const durable = useDurableWorkspace("taskq_e2e_tls");
const { SECRET_URL, taskq, workflowFile } = durable;

let proxy: TlsProxy;
beforeAll(async () => {
  const database = new URL(DATABASE_URL);
  proxy = await startTlsProxy({ host: database.hostname, port: Number(database.port || 5432) });
});
afterAll(async () => {
  await proxy?.close();
});

const through = (sslmode: string): string => `${proxy.url(SECRET_URL)}?sslmode=${sslmode}`;

describe("sslmode, read as libpq (psql) reads it", () => {
  it("sslmode=require encrypts without checking the certificate: a run goes through, and no warning of the driver's is printed", async () => {
    const file = await workflowFile("tls", "tasks:\n  hello: { run: echo over tls }\n");
    const before = proxy.tlsSessions();
    const result = await taskq(["run", file, "--store", through("require"), "--log-dir", durable.ws.logs, "--output", "plain"]);
    expect(result.stderr).toBe("");
    expect(result.stdout).toMatch(/\| over tls\n/);
    expect(result.stdout).toMatch(/Summary: 1 succeeded, 0 failed, 0 cancelled/);
    expect(result.code).toBe(0);
    durable.runIds.push(/run (\S+) submitted/.exec(result.stdout)![1]!);
    expect(proxy.tlsSessions()).toBeGreaterThan(before);
    const status = await taskq(["status", /run (\S+) submitted/.exec(result.stdout)![1]!, "--store", through("require")]);
    expect(status.stderr).toBe("");
    expect(status.code).toBe(0);
  });

  it("sslmode=verify-full checks the certificate: one no one trusts is refused, with the driver's reason and the password hidden", async () => {
    const result = await taskq(["status", "r-1", "--store", through("verify-full")]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^taskq: cannot open the store postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/\w+\?sslmode=verify-full: connect failed: self[- ]signed certificate\n$/);
  });

  it("sslmode=allow connects without TLS where the server has none, as psql does (the driver alone took it for verify-full, and failed)", async () => {
    // This machine's server has no TLS: the connection is plaintext, and the store answers.
    for (const query of ["sslmode=allow", "sslmode=allow&uselibpqcompat=true"]) {
      const result = await taskq(["status", "r-1", "--store", `${SECRET_URL}?${query}`]);
      expect(result.stderr).toMatch(/^taskq: no run "r-1" in schema /);
      expect(result.code).toBe(1);
    }
  });

  it("an sslmode that is none (a typo: disabled) is an error that says so and lists them, before anything connects; the library refuses it too", async () => {
    for (const command of [["status", "r-1"], ["worker"]]) {
      const result = await taskq([...command, "--store", `${SECRET_URL}?sslmode=disabled`]);
      expect(result.stderr).toBe("taskq: --store: sslmode=disabled in the connection string is not an SSL mode: use disable, allow, prefer, require, verify-ca or verify-full\n");
      expect(result.code).toBe(2);
    }
    // Read as the driver reads it (uselibpqcompat=false), its own modes are the ones listed.
    const driver = await taskq(["status", "r-1", "--store", `${SECRET_URL}?sslmode=allow&uselibpqcompat=false`]);
    expect(driver.stderr).toBe("taskq: --store: sslmode=allow in the connection string is not an SSL mode: use disable, prefer, require, verify-ca, verify-full or no-verify\n");
    // Any value but true asks for it, as the driver reads it: its no-verify is taken (and needs a server with TLS).
    const noVerify = await taskq(["status", "r-1", "--store", `${SECRET_URL}?sslmode=no-verify&uselibpqcompat=0`]);
    expect(noVerify.stderr).toMatch(/connect failed: The server does not support SSL connections\n$/);
    expect(noVerify.code).toBe(1);
    await expect(PostgresStore.open({ connectionString: `${DATABASE_URL}?sslmode=bogus` })).rejects.toMatchObject({ code: "STORE_BAD_URL", message: expect.stringContaining("sslmode=bogus") });
  });

  it("a URL that says how it wants sslmode read (uselibpqcompat=false: pg's own, require as verify-full) is left as written", async () => {
    const result = await taskq(["status", "r-1", "--store", `${through("require")}&uselibpqcompat=false`]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/connect failed: self[- ]signed certificate\n$/);
  });
});
