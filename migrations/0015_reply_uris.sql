ALTER TABLE `statuses` ADD `in_reply_to_uri` text;--> statement-breakpoint
CREATE INDEX `statuses_in_reply_to_uri` ON `statuses` (`in_reply_to_uri`) WHERE in_reply_to_uri IS NOT NULL;