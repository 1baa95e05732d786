import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { S3Client } from "bun";
import { startFauxqs } from "fauxqs";

/**
 * A real S3-protocol server on loopback, in this test process: fauxqs (npm), over files in a
 * temporary folder. It speaks the API Bun's client uses (put, multipart, get with ranges, head,
 * list, delete, presigned URLs) and serves objects to anonymous GETs, as a public bucket does.
 * It does not check signatures: a wrong secret is accepted, so no test here can prove SigV4.
 */
export interface TestS3 {
  endpoint: string;
  bucket: string;
  /** The settings for a Rookery keeping its media there; `alias` false leaves out S3_ALIAS_HOST (a private bucket). */
  env(options?: { alias?: boolean }): Record<string, string>;
  /** The bucket's public base URL (path style): what S3_ALIAS_HOST is set to. */
  publicBase: string;
  client: S3Client;
  keys(prefix?: string): Promise<string[]>;
  bytes(key: string): Promise<Uint8Array<ArrayBuffer>>;
  stop(): Promise<void>;
}

export async function startS3(bucket = "rookery-media"): Promise<TestS3> {
  const dir = mkdtempSync(join(tmpdir(), "rookery-s3-"));
  const server = await startFauxqs({ port: 0, host: "127.0.0.1", logger: false, s3StorageDir: dir } as Parameters<typeof startFauxqs>[0]);
  server.createBucket(bucket);
  const endpoint = `http://127.0.0.1:${server.port}`;
  const credentials = { accessKeyId: "rookery-test", secretAccessKey: "rookery-test-secret" };
  const client = new S3Client({ endpoint, bucket, region: "us-east-1", ...credentials });
  const publicBase = `${endpoint}/${bucket}`;
  return {
    endpoint,
    bucket,
    publicBase,
    client,
    env: (options = {}) => ({
      MEDIA_STORAGE: "s3",
      S3_ENDPOINT: endpoint,
      S3_BUCKET: bucket,
      S3_REGION: "us-east-1",
      AWS_ACCESS_KEY_ID: credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
      ...(options.alias === false ? {} : { S3_ALIAS_HOST: publicBase }),
    }),
    async keys(prefix = "") {
      const keys: string[] = [];
      let startAfter: string | undefined;
      for (;;) {
        const page = await client.list({ prefix, startAfter, maxKeys: 1000 });
        const got = (page.contents ?? []).map((c) => c.key);
        keys.push(...got);
        if (!page.isTruncated || got.length === 0) return keys.sort();
        startAfter = got[got.length - 1];
      }
    },
    async bytes(key) {
      return new Uint8Array(await client.file(key).arrayBuffer());
    },
    async stop() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
