CREATE TABLE `status_origins` (
	`account_id` integer NOT NULL,
	`uri` text NOT NULL,
	`status_id` integer,
	`imported_at` integer NOT NULL,
	PRIMARY KEY(`account_id`, `uri`),
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`status_id`) REFERENCES `statuses`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `status_origins_status` ON `status_origins` (`status_id`);