CREATE TABLE `idempotency_keys` (
	`account_id` integer NOT NULL,
	`key` text NOT NULL,
	`status_id` integer,
	`scheduled_status_id` integer,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`account_id`, `key`),
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `idempotency_keys_expiry` ON `idempotency_keys` (`expires_at`);