ALTER TABLE "media_attachments" ADD COLUMN "claimed_by" text;--> statement-breakpoint
ALTER TABLE "media_attachments" ADD COLUMN "claimed_until" bigint;--> statement-breakpoint
CREATE INDEX "media_attachments_unprocessed" ON "media_attachments" USING btree ("id") WHERE processing IN ('queued', 'in_progress');