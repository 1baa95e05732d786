CREATE TABLE `account_pins` (
	`id` integer PRIMARY KEY NOT NULL,
	`account_id` integer NOT NULL,
	`target_account_id` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`target_account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `account_pins_pair` ON `account_pins` (`account_id`,`target_account_id`);--> statement-breakpoint
CREATE INDEX `account_pins_target` ON `account_pins` (`target_account_id`);--> statement-breakpoint
CREATE TABLE `featured_tags` (
	`id` integer PRIMARY KEY NOT NULL,
	`account_id` integer NOT NULL,
	`tag_id` integer NOT NULL,
	`name` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`tag_id`) REFERENCES `tags`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `featured_tags_account_tag` ON `featured_tags` (`account_id`,`tag_id`);--> statement-breakpoint
CREATE TABLE `announcement_dismissals` (
	`account_id` integer NOT NULL,
	`announcement_id` integer NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`account_id`, `announcement_id`),
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`announcement_id`) REFERENCES `announcements`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `announcement_reactions` (
	`id` integer PRIMARY KEY NOT NULL,
	`account_id` integer NOT NULL,
	`announcement_id` integer NOT NULL,
	`name` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`announcement_id`) REFERENCES `announcements`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `announcement_reactions_account_name` ON `announcement_reactions` (`announcement_id`,`account_id`,`name`);--> statement-breakpoint
CREATE TABLE `announcements` (
	`id` integer PRIMARY KEY NOT NULL,
	`text` text NOT NULL,
	`starts_at` integer,
	`ends_at` integer,
	`all_day` integer DEFAULT false NOT NULL,
	`published_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `custom_emojis` (
	`id` integer PRIMARY KEY NOT NULL,
	`shortcode` text NOT NULL,
	`image_file` text NOT NULL,
	`static_file` text NOT NULL,
	`category` text,
	`visible_in_picker` integer DEFAULT true NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `custom_emojis_shortcode` ON `custom_emojis` (`shortcode`);--> statement-breakpoint
CREATE TABLE `instance_rules` (
	`id` integer PRIMARY KEY NOT NULL,
	`text` text NOT NULL,
	`hint` text DEFAULT '' NOT NULL,
	`position` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `instance_rules_position` ON `instance_rules` (`position`,`id`);--> statement-breakpoint
CREATE TABLE `reports` (
	`id` integer PRIMARY KEY NOT NULL,
	`account_id` integer NOT NULL,
	`target_account_id` integer NOT NULL,
	`status_ids` text DEFAULT '[]' NOT NULL,
	`rule_ids` text,
	`comment` text DEFAULT '' NOT NULL,
	`category` text NOT NULL,
	`forwarded` integer DEFAULT false NOT NULL,
	`uri` text NOT NULL,
	`action_taken_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`target_account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `reports_target` ON `reports` (`target_account_id`);--> statement-breakpoint
CREATE INDEX `reports_unresolved` ON `reports` (`id`) WHERE action_taken_at IS NULL;