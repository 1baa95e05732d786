-- URLs taken from other servers are stored only when they are http(s) (src/net/http-url.ts).
-- Rows written before that rule may hold others (a status url of "javascript:alert(1)"):
-- those URLs are dropped as the rule would have dropped them.
UPDATE `statuses` SET `url` = NULL
  WHERE `url` IS NOT NULL AND lower(substr(`url`, 1, 7)) <> 'http://' AND lower(substr(`url`, 1, 8)) <> 'https://';
--> statement-breakpoint
UPDATE `accounts` SET `url` = NULL
  WHERE `url` IS NOT NULL AND lower(substr(`url`, 1, 7)) <> 'http://' AND lower(substr(`url`, 1, 8)) <> 'https://';
--> statement-breakpoint
UPDATE `accounts` SET `avatar_remote_url` = NULL
  WHERE `avatar_remote_url` IS NOT NULL AND lower(substr(`avatar_remote_url`, 1, 7)) <> 'http://' AND lower(substr(`avatar_remote_url`, 1, 8)) <> 'https://';
--> statement-breakpoint
UPDATE `accounts` SET `header_remote_url` = NULL
  WHERE `header_remote_url` IS NOT NULL AND lower(substr(`header_remote_url`, 1, 7)) <> 'http://' AND lower(substr(`header_remote_url`, 1, 8)) <> 'https://';
--> statement-breakpoint
UPDATE `media_attachments` SET `remote_url` = NULL
  WHERE `remote_url` IS NOT NULL AND lower(substr(`remote_url`, 1, 7)) <> 'http://' AND lower(substr(`remote_url`, 1, 8)) <> 'https://';
--> statement-breakpoint
-- Custom emojis of statuses and accounts: an emoji whose url or static_url is not http(s) goes.
UPDATE `statuses` SET `emojis` = (
    SELECT json_group_array(json(e.value)) FROM json_each(`statuses`.`emojis`) AS e
    WHERE (lower(substr(json_extract(e.value, '$.url'), 1, 7)) = 'http://' OR lower(substr(json_extract(e.value, '$.url'), 1, 8)) = 'https://')
      AND (json_extract(e.value, '$.static_url') IS NULL OR lower(substr(json_extract(e.value, '$.static_url'), 1, 7)) = 'http://' OR lower(substr(json_extract(e.value, '$.static_url'), 1, 8)) = 'https://')
  )
  WHERE json_valid(`emojis`) AND `emojis` <> '[]' AND EXISTS (
    SELECT 1 FROM json_each(`statuses`.`emojis`) AS e
    WHERE NOT ((lower(substr(json_extract(e.value, '$.url'), 1, 7)) = 'http://' OR lower(substr(json_extract(e.value, '$.url'), 1, 8)) = 'https://')
      AND (json_extract(e.value, '$.static_url') IS NULL OR lower(substr(json_extract(e.value, '$.static_url'), 1, 7)) = 'http://' OR lower(substr(json_extract(e.value, '$.static_url'), 1, 8)) = 'https://'))
  );
--> statement-breakpoint
UPDATE `accounts` SET `emojis` = (
    SELECT json_group_array(json(e.value)) FROM json_each(`accounts`.`emojis`) AS e
    WHERE (lower(substr(json_extract(e.value, '$.url'), 1, 7)) = 'http://' OR lower(substr(json_extract(e.value, '$.url'), 1, 8)) = 'https://')
      AND (json_extract(e.value, '$.static_url') IS NULL OR lower(substr(json_extract(e.value, '$.static_url'), 1, 7)) = 'http://' OR lower(substr(json_extract(e.value, '$.static_url'), 1, 8)) = 'https://')
  )
  WHERE json_valid(`emojis`) AND `emojis` <> '[]' AND EXISTS (
    SELECT 1 FROM json_each(`accounts`.`emojis`) AS e
    WHERE NOT ((lower(substr(json_extract(e.value, '$.url'), 1, 7)) = 'http://' OR lower(substr(json_extract(e.value, '$.url'), 1, 8)) = 'https://')
      AND (json_extract(e.value, '$.static_url') IS NULL OR lower(substr(json_extract(e.value, '$.static_url'), 1, 7)) = 'http://' OR lower(substr(json_extract(e.value, '$.static_url'), 1, 8)) = 'https://'))
  );
