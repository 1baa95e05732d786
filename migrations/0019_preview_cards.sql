CREATE TABLE `preview_cards` (
	`id` integer PRIMARY KEY NOT NULL,
	`url` text NOT NULL,
	`card` text,
	`fetched_at` integer NOT NULL,
	`failed_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `preview_cards_url_unique` ON `preview_cards` (`url`);--> statement-breakpoint
ALTER TABLE `statuses` ADD `card` text;