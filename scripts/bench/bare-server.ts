// The baseline every benchmark compares with: a bare Elysia route on the same machine, same run.
import { Elysia } from "elysia";

const port = Number(process.env.PORT ?? 3901);
new Elysia()
  .get("/", () => ({ hello: "world" }))
  // The upload baseline: receive and parse the same multipart body, do nothing with it.
  .post("/upload", async ({ request }) => {
    const form = await request.formData();
    return { bytes: (form.get("file") as File).size };
  })
  // The inbox baseline: receive and parse an activity, answer 202 as an inbox does, do nothing with it.
  .post("/inbox", async ({ request, set }) => {
    await request.json();
    set.status = 202;
    return "";
  })
  .listen({ port, hostname: "127.0.0.1" });
