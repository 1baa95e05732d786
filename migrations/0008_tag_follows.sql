CREATE TABLE `tag_follows` (
	`id` integer PRIMARY KEY NOT NULL,
	`account_id` integer NOT NULL,
	`tag_id` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`tag_id`) REFERENCES `tags`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `tag_follows_account_tag` ON `tag_follows` (`account_id`,`tag_id`);--> statement-breakpoint
CREATE INDEX `tag_follows_tag` ON `tag_follows` (`tag_id`);