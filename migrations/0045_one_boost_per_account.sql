-- One boost of a status per account. Two boosts at once could both be written on PostgreSQL
-- (each found none); a copy of such a database may hold them. The later ones go, the first
-- kept: the original's boosts and the booster's statuses are counted back by what goes, and
-- what hangs on them (feed entries, notifications) goes by foreign key.
UPDATE `statuses` SET `reblogs_count` = max(0, `reblogs_count` - (
    SELECT count(*) FROM `statuses` AS d WHERE d.`reblog_of_id` = `statuses`.`id`
      AND EXISTS (SELECT 1 FROM `statuses` AS k WHERE k.`account_id` = d.`account_id` AND k.`reblog_of_id` = d.`reblog_of_id` AND k.`id` < d.`id`)))
  WHERE `id` IN (
    SELECT d.`reblog_of_id` FROM `statuses` AS d WHERE d.`reblog_of_id` IS NOT NULL
      AND EXISTS (SELECT 1 FROM `statuses` AS k WHERE k.`account_id` = d.`account_id` AND k.`reblog_of_id` = d.`reblog_of_id` AND k.`id` < d.`id`));
--> statement-breakpoint
UPDATE `accounts` SET `statuses_count` = max(0, `statuses_count` - (
    SELECT count(*) FROM `statuses` AS d WHERE d.`account_id` = `accounts`.`id` AND d.`reblog_of_id` IS NOT NULL AND d.`visibility` <> 'direct'
      AND EXISTS (SELECT 1 FROM `statuses` AS k WHERE k.`account_id` = d.`account_id` AND k.`reblog_of_id` = d.`reblog_of_id` AND k.`id` < d.`id`)))
  WHERE `id` IN (
    SELECT d.`account_id` FROM `statuses` AS d WHERE d.`reblog_of_id` IS NOT NULL
      AND EXISTS (SELECT 1 FROM `statuses` AS k WHERE k.`account_id` = d.`account_id` AND k.`reblog_of_id` = d.`reblog_of_id` AND k.`id` < d.`id`));
--> statement-breakpoint
DELETE FROM `statuses` WHERE `reblog_of_id` IS NOT NULL
  AND EXISTS (SELECT 1 FROM `statuses` AS k WHERE k.`account_id` = `statuses`.`account_id` AND k.`reblog_of_id` = `statuses`.`reblog_of_id` AND k.`id` < `statuses`.`id`);
--> statement-breakpoint
CREATE UNIQUE INDEX `statuses_account_reblog_of` ON `statuses` (`account_id`,`reblog_of_id`) WHERE reblog_of_id IS NOT NULL;
