CREATE TABLE `id_workers` (
	`worker` integer PRIMARY KEY NOT NULL,
	`holder` text NOT NULL,
	`leased_until` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `rate_limit_counters` (
	`bucket` text NOT NULL,
	`key` text NOT NULL,
	`window` integer NOT NULL,
	`count` integer NOT NULL,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`bucket`, `key`, `window`)
);
--> statement-breakpoint
CREATE TABLE `timer_claims` (
	`key` text NOT NULL,
	`due_at` integer NOT NULL,
	`claimed_by` text NOT NULL,
	`claimed_until` integer NOT NULL,
	`done` integer DEFAULT false NOT NULL,
	PRIMARY KEY(`key`, `due_at`)
);
