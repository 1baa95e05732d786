ALTER TABLE `reports` ADD `action_taken_by_account_id` integer REFERENCES accounts(id) ON DELETE set null;--> statement-breakpoint
ALTER TABLE `reports` ADD `assigned_account_id` integer REFERENCES accounts(id) ON DELETE set null;--> statement-breakpoint
ALTER TABLE `reports` ADD `updated_at` integer;