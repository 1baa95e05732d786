CREATE TABLE `push_deliveries` (
	`id` integer PRIMARY KEY NOT NULL,
	`subscription_id` integer NOT NULL,
	`notification_id` integer NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`due_at` integer NOT NULL,
	FOREIGN KEY (`subscription_id`) REFERENCES `push_subscriptions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `push_deliveries_subscription` ON `push_deliveries` (`subscription_id`);--> statement-breakpoint
ALTER TABLE `push_subscriptions` ADD `sealed_token` text;