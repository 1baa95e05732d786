CREATE TABLE `federation_traffic` (
	`hour` integer PRIMARY KEY NOT NULL,
	`attempted` integer DEFAULT 0 NOT NULL,
	`failed` integer DEFAULT 0 NOT NULL,
	`received` integer DEFAULT 0 NOT NULL
);
