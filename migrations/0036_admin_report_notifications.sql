ALTER TABLE `notifications` ADD `report_id` integer REFERENCES reports(id) ON DELETE CASCADE;
