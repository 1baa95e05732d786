ALTER TABLE `accounts` ADD `emojis` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `statuses` ADD `emojis` text DEFAULT '[]' NOT NULL;