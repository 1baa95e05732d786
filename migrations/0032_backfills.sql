-- IF NOT EXISTS: the migration tests run every migration after an older one again (test/db/migrations-safety.test.ts).
CREATE TABLE IF NOT EXISTS `backfilled_statuses` (
	`status_id` integer PRIMARY KEY NOT NULL,
	FOREIGN KEY (`status_id`) REFERENCES `statuses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS `history_fetches` (
	`account_id` integer PRIMARY KEY NOT NULL,
	`fetched_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS `reply_fetches` (
	`status_id` integer PRIMARY KEY NOT NULL,
	`fetched_at` integer NOT NULL,
	FOREIGN KEY (`status_id`) REFERENCES `statuses`(`id`) ON UPDATE no action ON DELETE cascade
);
