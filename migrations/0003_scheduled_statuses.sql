CREATE TABLE `scheduled_statuses` (
	`id` integer PRIMARY KEY NOT NULL,
	`account_id` integer NOT NULL,
	`scheduled_at` integer NOT NULL,
	`params` text NOT NULL,
	`input` text NOT NULL,
	`application_id` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `scheduled_statuses_account` ON `scheduled_statuses` (`account_id`,`id`);--> statement-breakpoint
CREATE INDEX `scheduled_statuses_due` ON `scheduled_statuses` (`scheduled_at`);--> statement-breakpoint
ALTER TABLE `media_attachments` ADD `scheduled_status_id` integer REFERENCES scheduled_statuses(id) ON DELETE SET NULL;--> statement-breakpoint
CREATE INDEX `media_attachments_scheduled` ON `media_attachments` (`scheduled_status_id`);