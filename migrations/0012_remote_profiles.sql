ALTER TABLE `accounts` ADD `avatar_remote_url` text;--> statement-breakpoint
ALTER TABLE `accounts` ADD `header_remote_url` text;