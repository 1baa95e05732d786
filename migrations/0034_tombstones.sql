-- IF NOT EXISTS: the migration tests run every migration after an older one again (test/db/migrations-safety.test.ts).
CREATE TABLE IF NOT EXISTS `tombstones` (
	`uri` text PRIMARY KEY NOT NULL,
	`account_id` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS `tombstones_account` ON `tombstones` (`account_id`);
