ALTER TABLE `media_attachments` ADD `claimed_by` text;--> statement-breakpoint
ALTER TABLE `media_attachments` ADD `claimed_until` integer;--> statement-breakpoint
CREATE INDEX `media_attachments_unprocessed` ON `media_attachments` (`id`) WHERE processing IN ('queued', 'in_progress');