CREATE TABLE `tombstones` (
	`uri` text PRIMARY KEY NOT NULL,
	`account_id` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `tombstones_account` ON `tombstones` (`account_id`);--> statement-breakpoint
DROP INDEX `quotes_approval_uri`;--> statement-breakpoint
CREATE INDEX `quotes_approval_uri` ON `quotes` (`approval_uri`);