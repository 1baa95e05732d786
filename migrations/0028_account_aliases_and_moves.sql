-- Local accounts' aliases (alsoKnownAs, the accounts they come from) and when a local account last
-- moved (Mastodon's 30-day cooldown before moving again counts from it).
ALTER TABLE `accounts` ADD `moved_at` integer;--> statement-breakpoint
ALTER TABLE `accounts` ADD `also_known_as` text DEFAULT '[]' NOT NULL;