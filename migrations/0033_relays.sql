-- IF NOT EXISTS: the migration tests run every migration after an older one again (test/db/migrations-safety.test.ts).
CREATE TABLE IF NOT EXISTS `relays` (
	`id` integer PRIMARY KEY NOT NULL,
	`url` text NOT NULL,
	`kind` text NOT NULL,
	`inbox_url` text NOT NULL,
	`actor_uri` text,
	`state` text NOT NULL,
	`follow_activity_id` text NOT NULL,
	`created_at` integer NOT NULL,
	`state_changed_at` integer NOT NULL,
	`received_count` integer DEFAULT 0 NOT NULL,
	`last_activity_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX IF NOT EXISTS `relays_url_unique` ON `relays` (`url`);