CREATE TABLE `account_conversations` (
	`id` integer PRIMARY KEY NOT NULL,
	`account_id` integer NOT NULL,
	`conversation_id` integer NOT NULL,
	`participant_ids` text NOT NULL,
	`status_ids` text DEFAULT '[]' NOT NULL,
	`last_status_id` integer NOT NULL,
	`unread` integer DEFAULT false NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `account_conversations_thread` ON `account_conversations` (`account_id`,`conversation_id`,`participant_ids`);--> statement-breakpoint
CREATE INDEX `account_conversations_recent` ON `account_conversations` (`account_id`,`last_status_id`);--> statement-breakpoint
CREATE TABLE `custom_filter_keywords` (
	`id` integer PRIMARY KEY NOT NULL,
	`filter_id` integer NOT NULL,
	`keyword` text NOT NULL,
	`whole_word` integer DEFAULT true NOT NULL,
	FOREIGN KEY (`filter_id`) REFERENCES `custom_filters`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `custom_filter_keywords_filter` ON `custom_filter_keywords` (`filter_id`);--> statement-breakpoint
CREATE TABLE `custom_filter_statuses` (
	`id` integer PRIMARY KEY NOT NULL,
	`filter_id` integer NOT NULL,
	`status_id` integer NOT NULL,
	FOREIGN KEY (`filter_id`) REFERENCES `custom_filters`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`status_id`) REFERENCES `statuses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `custom_filter_statuses_pair` ON `custom_filter_statuses` (`filter_id`,`status_id`);--> statement-breakpoint
CREATE TABLE `custom_filters` (
	`id` integer PRIMARY KEY NOT NULL,
	`account_id` integer NOT NULL,
	`title` text NOT NULL,
	`context` text NOT NULL,
	`action` text DEFAULT 'warn' NOT NULL,
	`expires_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `custom_filters_account` ON `custom_filters` (`account_id`);--> statement-breakpoint
CREATE TABLE `list_accounts` (
	`list_id` integer NOT NULL,
	`account_id` integer NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`list_id`, `account_id`),
	FOREIGN KEY (`list_id`) REFERENCES `lists`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `list_accounts_account` ON `list_accounts` (`account_id`);--> statement-breakpoint
CREATE TABLE `list_feed` (
	`list_id` integer NOT NULL,
	`status_id` integer NOT NULL,
	`author_id` integer NOT NULL,
	PRIMARY KEY(`list_id`, `status_id`),
	FOREIGN KEY (`list_id`) REFERENCES `lists`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`status_id`) REFERENCES `statuses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `list_feed_author` ON `list_feed` (`list_id`,`author_id`);--> statement-breakpoint
CREATE TABLE `lists` (
	`id` integer PRIMARY KEY NOT NULL,
	`account_id` integer NOT NULL,
	`title` text NOT NULL,
	`replies_policy` text DEFAULT 'list' NOT NULL,
	`exclusive` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `lists_account` ON `lists` (`account_id`,`id`);