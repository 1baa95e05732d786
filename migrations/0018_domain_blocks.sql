CREATE TABLE `account_domain_blocks` (
	`id` integer PRIMARY KEY NOT NULL,
	`account_id` integer NOT NULL,
	`domain` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `account_domain_blocks_pair` ON `account_domain_blocks` (`account_id`,`domain`);--> statement-breakpoint
CREATE INDEX `account_domain_blocks_domain` ON `account_domain_blocks` (`domain`);--> statement-breakpoint
CREATE TABLE `domain_allows` (
	`id` integer PRIMARY KEY NOT NULL,
	`domain` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `domain_allows_domain_unique` ON `domain_allows` (`domain`);--> statement-breakpoint
CREATE TABLE `domain_blocks` (
	`id` integer PRIMARY KEY NOT NULL,
	`domain` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `domain_blocks_domain_unique` ON `domain_blocks` (`domain`);