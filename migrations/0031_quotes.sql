CREATE TABLE `quotes` (
	`id` integer PRIMARY KEY NOT NULL,
	`status_id` integer NOT NULL,
	`account_id` integer NOT NULL,
	`quoted_status_id` integer,
	`quoted_account_id` integer,
	`quoted_uri` text,
	`state` text DEFAULT 'pending' NOT NULL,
	`activity_uri` text,
	`approval_uri` text,
	`legacy` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`status_id`) REFERENCES `statuses`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`quoted_status_id`) REFERENCES `statuses`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`quoted_account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `quotes_status` ON `quotes` (`status_id`);--> statement-breakpoint
CREATE INDEX `quotes_quoted_status` ON `quotes` (`quoted_status_id`,`id`);--> statement-breakpoint
CREATE INDEX `quotes_quoted_account` ON `quotes` (`quoted_account_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `quotes_activity_uri` ON `quotes` (`activity_uri`);--> statement-breakpoint
CREATE UNIQUE INDEX `quotes_approval_uri` ON `quotes` (`approval_uri`);--> statement-breakpoint
CREATE INDEX `quotes_quoted_uri` ON `quotes` (`quoted_uri`);--> statement-breakpoint
ALTER TABLE `users` ADD `default_quote_policy` text DEFAULT 'public' NOT NULL;--> statement-breakpoint
ALTER TABLE `statuses` ADD `quotes_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `statuses` ADD `quote_approval` text;