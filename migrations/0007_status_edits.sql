CREATE TABLE `status_edits` (
	`id` integer PRIMARY KEY NOT NULL,
	`status_id` integer NOT NULL,
	`account_id` integer NOT NULL,
	`text` text NOT NULL,
	`content_html` text NOT NULL,
	`spoiler_text` text NOT NULL,
	`sensitive` integer NOT NULL,
	`media_ids` text DEFAULT '[]' NOT NULL,
	`media_descriptions` text DEFAULT '[]' NOT NULL,
	`poll_options` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`status_id`) REFERENCES `statuses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `status_edits_status` ON `status_edits` (`status_id`,`id`);--> statement-breakpoint
ALTER TABLE `statuses` ADD `edited_at` integer;