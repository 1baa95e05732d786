CREATE TABLE `two_factor_recovery_codes` (
	`id` integer PRIMARY KEY NOT NULL,
	`account_id` integer NOT NULL,
	`code_digest` text NOT NULL,
	`used_at` integer,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `two_factor_recovery_codes_digest` ON `two_factor_recovery_codes` (`account_id`,`code_digest`);--> statement-breakpoint
CREATE TABLE `two_factor_secrets` (
	`account_id` integer PRIMARY KEY NOT NULL,
	`sealed_secret` text NOT NULL,
	`enabled_at` integer,
	`last_used_step` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
