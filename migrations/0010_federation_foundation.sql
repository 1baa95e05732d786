CREATE TABLE `account_keys` (
	`account_id` integer NOT NULL,
	`algorithm` text NOT NULL,
	`public_key` text NOT NULL,
	`private_key` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`account_id`, `algorithm`),
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `fedify_kv` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL,
	`expires_at` integer
);
--> statement-breakpoint
CREATE INDEX `fedify_kv_expires` ON `fedify_kv` (`expires_at`);--> statement-breakpoint
CREATE TABLE `fedify_messages` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`message` text NOT NULL,
	`run_at` integer NOT NULL,
	`ordering_key` text,
	`locked_until` integer,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `fedify_messages_run_at` ON `fedify_messages` (`run_at`,`id`);--> statement-breakpoint
DROP INDEX `accounts_username_lower`;--> statement-breakpoint
ALTER TABLE `accounts` ADD `uri` text;--> statement-breakpoint
ALTER TABLE `accounts` ADD `domain` text;--> statement-breakpoint
ALTER TABLE `accounts` ADD `url` text;--> statement-breakpoint
ALTER TABLE `accounts` ADD `inbox_url` text;--> statement-breakpoint
ALTER TABLE `accounts` ADD `shared_inbox_url` text;--> statement-breakpoint
ALTER TABLE `accounts` ADD `followers_url` text;--> statement-breakpoint
ALTER TABLE `accounts` ADD `fetched_at` integer;--> statement-breakpoint
CREATE UNIQUE INDEX `accounts_username_domain_lower` ON `accounts` (lower("username"),lower(coalesce("domain", '')));--> statement-breakpoint
CREATE UNIQUE INDEX `accounts_uri` ON `accounts` (`uri`);