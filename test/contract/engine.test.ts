import { describeLifecycleContract } from "./lifecycle-cases.js";
import { engineAdapter } from "./engine-adapter.js";

describeLifecycleContract(engineAdapter);
