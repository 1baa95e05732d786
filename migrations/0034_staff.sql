CREATE TABLE `admin_actions` (
	`id` integer PRIMARY KEY NOT NULL,
	`account_id` integer,
	`action` text NOT NULL,
	`target_type` text NOT NULL,
	`target_id` text,
	`summary` text DEFAULT '' NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `admin_actions_created` ON `admin_actions` (`id`);--> statement-breakpoint
ALTER TABLE `accounts` ADD `suspended_at` integer;--> statement-breakpoint
ALTER TABLE `accounts` ADD `silenced_at` integer;--> statement-breakpoint
ALTER TABLE `users` ADD `role` text DEFAULT 'user' NOT NULL;--> statement-breakpoint
ALTER TABLE `users` ADD `approved` integer DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE `users` ADD `sign_up_reason` text;--> statement-breakpoint
-- A server upgraded from before roles: its oldest user (on a single-user server, its only one) runs it.
UPDATE `users` SET `role` = 'owner' WHERE `account_id` = (SELECT min(`account_id`) FROM `users`);
