import { configureLog } from "../src/log.ts";

// Servers under test log nothing but warnings and errors.
configureLog({ enabled: false });
