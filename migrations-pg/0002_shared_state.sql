CREATE TABLE "id_workers" (
	"worker" bigint PRIMARY KEY NOT NULL,
	"holder" text NOT NULL,
	"leased_until" bigint NOT NULL
);
--> statement-breakpoint
-- Written by hand: UNLOGGED, which drizzle cannot describe. Counters of a few minutes are not
-- worth writing to the WAL on every request; a crash empties the table, which forgives a window.
CREATE UNLOGGED TABLE "rate_limit_counters" (
	"bucket" text NOT NULL,
	"key" text NOT NULL,
	"window" bigint NOT NULL,
	"count" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	CONSTRAINT "rate_limit_counters_bucket_key_window_pk" PRIMARY KEY("bucket","key","window")
);
--> statement-breakpoint
CREATE TABLE "timer_claims" (
	"key" text NOT NULL,
	"due_at" bigint NOT NULL,
	"claimed_by" text NOT NULL,
	"claimed_until" bigint NOT NULL,
	"done" boolean DEFAULT false NOT NULL,
	CONSTRAINT "timer_claims_key_due_at_pk" PRIMARY KEY("key","due_at")
);
