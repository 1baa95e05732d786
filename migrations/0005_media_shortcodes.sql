ALTER TABLE `media_attachments` ADD `shortcode` text;--> statement-breakpoint
CREATE UNIQUE INDEX `media_attachments_shortcode` ON `media_attachments` (`shortcode`);