CREATE TABLE `invites` (
	`id` integer PRIMARY KEY NOT NULL,
	`code_hash` text NOT NULL,
	`account_id` integer NOT NULL,
	`max_uses` integer,
	`uses` integer DEFAULT 0 NOT NULL,
	`expires_at` integer,
	`comment` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `invites_code_hash` ON `invites` (`code_hash`);--> statement-breakpoint
CREATE INDEX `invites_account` ON `invites` (`account_id`);--> statement-breakpoint
ALTER TABLE `users` ADD `invite_id` integer REFERENCES invites(id) ON DELETE SET NULL;--> statement-breakpoint
ALTER TABLE `notifications` ADD `report_id` integer REFERENCES reports(id) ON DELETE CASCADE;