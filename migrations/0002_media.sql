CREATE TABLE `media_attachments` (
	`id` integer PRIMARY KEY NOT NULL,
	`account_id` integer NOT NULL,
	`status_id` integer,
	`position` integer DEFAULT 0 NOT NULL,
	`type` text NOT NULL,
	`processing` text NOT NULL,
	`upload_file` text,
	`file` text,
	`preview` text,
	`thumbnail` text,
	`meta` text DEFAULT '{}' NOT NULL,
	`description` text,
	`blurhash` text,
	`created_at` integer NOT NULL,
	`detached_at` integer,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`status_id`) REFERENCES `statuses`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `media_attachments_status` ON `media_attachments` (`status_id`,`position`);--> statement-breakpoint
CREATE INDEX `media_attachments_account` ON `media_attachments` (`account_id`,`id`);--> statement-breakpoint
CREATE INDEX `media_attachments_unattached` ON `media_attachments` (`created_at`) WHERE status_id IS NULL;