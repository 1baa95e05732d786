CREATE TABLE `push_subscriptions` (
	`id` integer PRIMARY KEY NOT NULL,
	`access_token_id` integer NOT NULL,
	`account_id` integer NOT NULL,
	`endpoint` text NOT NULL,
	`key_p256dh` text NOT NULL,
	`key_auth` text NOT NULL,
	`alerts` text DEFAULT '{}' NOT NULL,
	`policy` text DEFAULT 'all' NOT NULL,
	`standard` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`access_token_id`) REFERENCES `oauth_access_tokens`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `push_subscriptions_access_token_id_unique` ON `push_subscriptions` (`access_token_id`);--> statement-breakpoint
CREATE INDEX `push_subscriptions_account` ON `push_subscriptions` (`account_id`);