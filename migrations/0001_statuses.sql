CREATE TABLE `blocks` (
	`id` integer PRIMARY KEY NOT NULL,
	`account_id` integer NOT NULL,
	`target_account_id` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`target_account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `blocks_pair` ON `blocks` (`account_id`,`target_account_id`);--> statement-breakpoint
CREATE INDEX `blocks_target` ON `blocks` (`target_account_id`);--> statement-breakpoint
CREATE TABLE `bookmarks` (
	`id` integer PRIMARY KEY NOT NULL,
	`account_id` integer NOT NULL,
	`status_id` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`status_id`) REFERENCES `statuses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `bookmarks_pair` ON `bookmarks` (`account_id`,`status_id`);--> statement-breakpoint
CREATE INDEX `bookmarks_account` ON `bookmarks` (`account_id`,`id`);--> statement-breakpoint
CREATE TABLE `conversation_mutes` (
	`account_id` integer NOT NULL,
	`conversation_id` integer NOT NULL,
	PRIMARY KEY(`account_id`, `conversation_id`),
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `favourites` (
	`id` integer PRIMARY KEY NOT NULL,
	`account_id` integer NOT NULL,
	`status_id` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`status_id`) REFERENCES `statuses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `favourites_pair` ON `favourites` (`account_id`,`status_id`);--> statement-breakpoint
CREATE INDEX `favourites_account` ON `favourites` (`account_id`,`id`);--> statement-breakpoint
CREATE INDEX `favourites_status` ON `favourites` (`status_id`,`id`);--> statement-breakpoint
CREATE TABLE `home_feed` (
	`account_id` integer NOT NULL,
	`status_id` integer NOT NULL,
	`author_id` integer NOT NULL,
	`origin_author_id` integer NOT NULL,
	PRIMARY KEY(`account_id`, `status_id`),
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`status_id`) REFERENCES `statuses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `home_feed_author` ON `home_feed` (`account_id`,`author_id`);--> statement-breakpoint
CREATE INDEX `home_feed_origin` ON `home_feed` (`account_id`,`origin_author_id`);--> statement-breakpoint
CREATE TABLE `mentions` (
	`status_id` integer NOT NULL,
	`account_id` integer NOT NULL,
	PRIMARY KEY(`status_id`, `account_id`),
	FOREIGN KEY (`status_id`) REFERENCES `statuses`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `mentions_account` ON `mentions` (`account_id`,`status_id`);--> statement-breakpoint
CREATE TABLE `mutes` (
	`id` integer PRIMARY KEY NOT NULL,
	`account_id` integer NOT NULL,
	`target_account_id` integer NOT NULL,
	`hide_notifications` integer DEFAULT true NOT NULL,
	`expires_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`target_account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `mutes_pair` ON `mutes` (`account_id`,`target_account_id`);--> statement-breakpoint
CREATE TABLE `notifications` (
	`id` integer PRIMARY KEY NOT NULL,
	`account_id` integer NOT NULL,
	`from_account_id` integer NOT NULL,
	`type` text NOT NULL,
	`status_id` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`from_account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`status_id`) REFERENCES `statuses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `notifications_account` ON `notifications` (`account_id`,`id`);--> statement-breakpoint
CREATE INDEX `notifications_activity` ON `notifications` (`account_id`,`from_account_id`,`type`);--> statement-breakpoint
CREATE TABLE `poll_votes` (
	`id` integer PRIMARY KEY NOT NULL,
	`poll_id` integer NOT NULL,
	`account_id` integer NOT NULL,
	`choice` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`poll_id`) REFERENCES `polls`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `poll_votes_choice` ON `poll_votes` (`poll_id`,`account_id`,`choice`);--> statement-breakpoint
CREATE TABLE `polls` (
	`id` integer PRIMARY KEY NOT NULL,
	`status_id` integer NOT NULL,
	`account_id` integer NOT NULL,
	`options` text NOT NULL,
	`tallies` text NOT NULL,
	`multiple` integer DEFAULT false NOT NULL,
	`hide_totals` integer DEFAULT false NOT NULL,
	`votes_count` integer DEFAULT 0 NOT NULL,
	`voters_count` integer DEFAULT 0 NOT NULL,
	`expires_at` integer NOT NULL,
	`ended_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`status_id`) REFERENCES `statuses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `polls_status_id_unique` ON `polls` (`status_id`);--> statement-breakpoint
CREATE TABLE `status_pins` (
	`id` integer PRIMARY KEY NOT NULL,
	`account_id` integer NOT NULL,
	`status_id` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`status_id`) REFERENCES `statuses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `status_pins_pair` ON `status_pins` (`account_id`,`status_id`);--> statement-breakpoint
CREATE TABLE `status_tags` (
	`status_id` integer NOT NULL,
	`tag_id` integer NOT NULL,
	PRIMARY KEY(`status_id`, `tag_id`),
	FOREIGN KEY (`status_id`) REFERENCES `statuses`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`tag_id`) REFERENCES `tags`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `status_tags_tag` ON `status_tags` (`tag_id`,`status_id`);--> statement-breakpoint
CREATE TABLE `statuses` (
	`id` integer PRIMARY KEY NOT NULL,
	`account_id` integer NOT NULL,
	`application_id` integer,
	`text` text DEFAULT '' NOT NULL,
	`content_html` text DEFAULT '' NOT NULL,
	`spoiler_text` text DEFAULT '' NOT NULL,
	`sensitive` integer DEFAULT false NOT NULL,
	`visibility` text NOT NULL,
	`language` text,
	`in_reply_to_id` integer,
	`in_reply_to_account_id` integer,
	`reblog_of_id` integer,
	`conversation_id` integer NOT NULL,
	`mentions` text DEFAULT '[]' NOT NULL,
	`tags` text DEFAULT '[]' NOT NULL,
	`has_media` integer DEFAULT false NOT NULL,
	`has_poll` integer DEFAULT false NOT NULL,
	`replies_count` integer DEFAULT 0 NOT NULL,
	`reblogs_count` integer DEFAULT 0 NOT NULL,
	`favourites_count` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`application_id`) REFERENCES `applications`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `statuses_account` ON `statuses` (`account_id`,`id`);--> statement-breakpoint
CREATE INDEX `statuses_reblog_of` ON `statuses` (`reblog_of_id`,`account_id`);--> statement-breakpoint
CREATE INDEX `statuses_in_reply_to` ON `statuses` (`in_reply_to_id`);--> statement-breakpoint
CREATE INDEX `statuses_conversation` ON `statuses` (`conversation_id`);--> statement-breakpoint
CREATE INDEX `statuses_public` ON `statuses` (`id`) WHERE visibility = 'public' AND reblog_of_id IS NULL AND (in_reply_to_id IS NULL OR in_reply_to_account_id = account_id);--> statement-breakpoint
CREATE TABLE `tags` (
	`id` integer PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `tags_name_unique` ON `tags` (`name`);