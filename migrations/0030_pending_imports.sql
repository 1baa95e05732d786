-- IF NOT EXISTS: the migration tests run every migration after an older one again (test/db/migrations-safety.test.ts).
CREATE TABLE IF NOT EXISTS `import_rows` (
	`id` integer PRIMARY KEY NOT NULL,
	`import_id` integer NOT NULL,
	`line` integer NOT NULL,
	`data` text NOT NULL,
	`host` text,
	`state` text DEFAULT 'pending' NOT NULL,
	`failure` text,
	`detail` text,
	`target_account_id` integer,
	`processed_at` integer,
	FOREIGN KEY (`import_id`) REFERENCES `imports`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS `import_rows_import` ON `import_rows` (`import_id`,`state`);--> statement-breakpoint
CREATE INDEX IF NOT EXISTS `import_rows_pending` ON `import_rows` (`state`,`host`,`id`);--> statement-breakpoint
CREATE TABLE IF NOT EXISTS `imports` (
	`id` integer PRIMARY KEY NOT NULL,
	`account_id` integer NOT NULL,
	`type` text NOT NULL,
	`overwrite` integer DEFAULT false NOT NULL,
	`state` text NOT NULL,
	`total_items` integer NOT NULL,
	`created_at` integer NOT NULL,
	`finished_at` integer,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS `imports_account` ON `imports` (`account_id`,`id`);