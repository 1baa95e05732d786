ALTER TABLE `statuses` ADD `uri` text;--> statement-breakpoint
ALTER TABLE `statuses` ADD `url` text;--> statement-breakpoint
CREATE UNIQUE INDEX `statuses_uri` ON `statuses` (`uri`);