// The baseline every benchmark compares with: a bare Elysia route on the same machine, same run.
import { Elysia } from "elysia";

const port = Number(process.env.PORT ?? 3901);
new Elysia().get("/", () => ({ hello: "world" })).listen({ port, hostname: "127.0.0.1" });
