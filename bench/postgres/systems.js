// The queues under test, behind one small interface:
//   start(workerCount, concurrency, onStart) -> { submitBatch(keys), submitOne(key), stop() }
// onStart(key) is called when a no-op task begins. Every worker of every system gets a pool of
// `poolSize` connections (its LISTEN connection included) and the same concurrency.
import { Logger, makeWorkerUtils, run, runMigrations } from "graphile-worker";
import pg from "pg";

const silent = new Logger(() => () => undefined);

async function dropSchema(connectionString, schema) {
  const pool = new pg.Pool({ connectionString, max: 1 });
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool.end();
}

function noopTask(id) {
  return { id, type: "noop", run: "", priority: "normal", retries: 0, backoff: { baseMs: 100, maxMs: 1000 }, env: {}, cwd: ".", dependsOn: [] };
}

/** taskq from this checkout's build, or from another build's `dist` (a baseline to compare with). */
export function taskqSystem(connectionString, schema, poolSize, { dist = new URL("../../dist", import.meta.url).pathname, name = "taskq (PostgresStore)" } = {}) {
  const load = import(`${dist}/store/postgres/index.js`);
  return {
    name,
    drop: () => dropSchema(connectionString, schema),
    async reset() {
      const { PostgresStore } = await load;
      await dropSchema(connectionString, schema);
      const store = await PostgresStore.open({ connectionString, schema, poolSize: 2 });
      await store.close();
    },
    async start(workerCount, concurrency, onStart) {
      const { PostgresStore, PostgresWorker } = await load;
      // One store (pool + LISTEN connection) per worker, as separate processes would have.
      const stores = [];
      const workers = [];
      for (let i = 0; i < workerCount; i++) {
        const store = new PostgresStore({ connectionString, schema, poolSize });
        const worker = new PostgresWorker({ store, concurrency, leaseMs: 30_000, handler: async (task) => onStart(task.key) });
        await worker.start();
        stores.push(store);
        workers.push(worker);
      }
      const submitter = new PostgresStore({ connectionString, schema, poolSize: 2 });
      return {
        submitBatch: (keys) => submitter.submitRun({ file: "bench.yaml", tasks: keys.map(noopTask), notes: [] }),
        submitOne: (key) => submitter.submitRun({ file: "bench.yaml", tasks: [noopTask(key)], notes: [] }),
        async stop() {
          await Promise.all(workers.map((worker) => worker.stop({ deadlineMs: 1_000 })));
          await Promise.all([...stores, submitter].map((store) => store.close()));
        },
      };
    },
  };
}

/**
 * graphile-worker with its defaults, or with `batched` its opt-in batching: a local queue that
 * fetches `concurrency` jobs per query, and completions gathered over one tick.
 */
export function graphileSystem(connectionString, schema, poolSize, { batched = false } = {}) {
  const options = { connectionString, schema, logger: silent, maxPoolSize: poolSize };
  return {
    name: batched ? "graphile-worker 0.17, batched" : "graphile-worker 0.17",
    drop: () => dropSchema(connectionString, schema),
    async reset() {
      await dropSchema(connectionString, schema);
      await runMigrations(options);
    },
    async start(workerCount, concurrency, onStart) {
      const taskList = { noop: async (payload) => onStart(payload.key) };
      const runners = [];
      for (let i = 0; i < workerCount; i++) {
        const preset = batched ? { worker: { localQueue: { size: concurrency }, completeJobBatchDelay: 0 } } : undefined;
        runners.push(await run({ ...options, concurrency, noHandleSignals: true, pollInterval: 2_000, taskList, preset }));
      }
      const utils = await makeWorkerUtils(options);
      return {
        submitBatch: (keys) => utils.addJobs(keys.map((key) => ({ identifier: "noop", payload: { key }, maxAttempts: 1 }))),
        submitOne: (key) => utils.addJob("noop", { key }, { maxAttempts: 1 }),
        async stop() {
          await Promise.all(runners.map((runner) => runner.stop()));
          await utils.release();
        },
      };
    },
  };
}
