ALTER TABLE `web_sessions` ADD `user_agent` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `web_sessions` ADD `ip` text;