CREATE TABLE `notification_permissions` (
	`account_id` integer NOT NULL,
	`from_account_id` integer NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`account_id`, `from_account_id`),
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`from_account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `notification_policies` (
	`account_id` integer PRIMARY KEY NOT NULL,
	`for_not_following` text DEFAULT 'accept' NOT NULL,
	`for_not_followers` text DEFAULT 'accept' NOT NULL,
	`for_new_accounts` text DEFAULT 'accept' NOT NULL,
	`for_private_mentions` text DEFAULT 'filter' NOT NULL,
	`for_limited_accounts` text DEFAULT 'filter' NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `notification_requests` (
	`id` integer PRIMARY KEY NOT NULL,
	`account_id` integer NOT NULL,
	`from_account_id` integer NOT NULL,
	`last_status_id` integer,
	`notifications_count` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`from_account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`last_status_id`) REFERENCES `statuses`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `notification_requests_pair` ON `notification_requests` (`account_id`,`from_account_id`);--> statement-breakpoint
ALTER TABLE `notifications` ADD `group_key` text;--> statement-breakpoint
ALTER TABLE `notifications` ADD `filtered` integer DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX `notifications_group` ON `notifications` (`account_id`,`group_key`);