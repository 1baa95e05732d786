CREATE TABLE `oauth_access_tokens` (
	`id` integer PRIMARY KEY NOT NULL,
	`token_hash` text NOT NULL,
	`application_id` integer NOT NULL,
	`account_id` integer,
	`scopes` text NOT NULL,
	`created_at` integer NOT NULL,
	`revoked_at` integer,
	FOREIGN KEY (`application_id`) REFERENCES `applications`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `oauth_access_tokens_token_hash_unique` ON `oauth_access_tokens` (`token_hash`);--> statement-breakpoint
CREATE INDEX `oauth_access_tokens_account` ON `oauth_access_tokens` (`account_id`);--> statement-breakpoint
CREATE INDEX `oauth_access_tokens_app` ON `oauth_access_tokens` (`application_id`);--> statement-breakpoint
CREATE TABLE `accounts` (
	`id` integer PRIMARY KEY NOT NULL,
	`username` text NOT NULL,
	`display_name` text DEFAULT '' NOT NULL,
	`note` text DEFAULT '' NOT NULL,
	`note_html` text DEFAULT '' NOT NULL,
	`fields` text DEFAULT '[]' NOT NULL,
	`locked` integer DEFAULT false NOT NULL,
	`bot` integer DEFAULT false NOT NULL,
	`discoverable` integer DEFAULT true NOT NULL,
	`indexable` integer DEFAULT true NOT NULL,
	`hide_collections` integer DEFAULT false NOT NULL,
	`avatar_file` text,
	`header_file` text,
	`created_at` integer NOT NULL,
	`followers_count` integer DEFAULT 0 NOT NULL,
	`following_count` integer DEFAULT 0 NOT NULL,
	`statuses_count` integer DEFAULT 0 NOT NULL,
	`last_status_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `accounts_username_lower` ON `accounts` (lower("username"));--> statement-breakpoint
CREATE TABLE `applications` (
	`id` integer PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`website` text,
	`redirect_uris` text NOT NULL,
	`scopes` text NOT NULL,
	`client_id` text NOT NULL,
	`client_secret_hash` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `applications_client_id_unique` ON `applications` (`client_id`);--> statement-breakpoint
CREATE TABLE `oauth_authorization_codes` (
	`id` integer PRIMARY KEY NOT NULL,
	`code_hash` text NOT NULL,
	`application_id` integer NOT NULL,
	`account_id` integer NOT NULL,
	`redirect_uri` text NOT NULL,
	`scopes` text NOT NULL,
	`code_challenge` text,
	`code_challenge_method` text,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`used_at` integer,
	FOREIGN KEY (`application_id`) REFERENCES `applications`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `oauth_authorization_codes_code_hash_unique` ON `oauth_authorization_codes` (`code_hash`);--> statement-breakpoint
CREATE TABLE `follow_requests` (
	`id` integer PRIMARY KEY NOT NULL,
	`account_id` integer NOT NULL,
	`target_account_id` integer NOT NULL,
	`show_reblogs` integer DEFAULT true NOT NULL,
	`notify` integer DEFAULT false NOT NULL,
	`languages` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`target_account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `follow_requests_pair` ON `follow_requests` (`account_id`,`target_account_id`);--> statement-breakpoint
CREATE INDEX `follow_requests_target` ON `follow_requests` (`target_account_id`,`id`);--> statement-breakpoint
CREATE TABLE `follows` (
	`id` integer PRIMARY KEY NOT NULL,
	`account_id` integer NOT NULL,
	`target_account_id` integer NOT NULL,
	`show_reblogs` integer DEFAULT true NOT NULL,
	`notify` integer DEFAULT false NOT NULL,
	`languages` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`target_account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `follows_pair` ON `follows` (`account_id`,`target_account_id`);--> statement-breakpoint
CREATE INDEX `follows_target` ON `follows` (`target_account_id`,`id`);--> statement-breakpoint
CREATE TABLE `instance_settings` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `markers` (
	`account_id` integer NOT NULL,
	`timeline` text NOT NULL,
	`last_read_id` text NOT NULL,
	`version` integer DEFAULT 0 NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`account_id`, `timeline`),
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `users` (
	`account_id` integer PRIMARY KEY NOT NULL,
	`email` text NOT NULL,
	`password_hash` text NOT NULL,
	`locale` text,
	`default_privacy` text DEFAULT 'public' NOT NULL,
	`default_sensitive` integer DEFAULT false NOT NULL,
	`default_language` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_email_lower` ON `users` (lower("email"));--> statement-breakpoint
CREATE TABLE `web_sessions` (
	`id` integer PRIMARY KEY NOT NULL,
	`token_hash` text NOT NULL,
	`account_id` integer NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `web_sessions_token_hash_unique` ON `web_sessions` (`token_hash`);