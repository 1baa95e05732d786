-- Keys and documents fetched before a key's owner had to confirm it (src/federation/key-owners.ts)
-- may hold a key whose claimed owner never did: Fedify would keep verifying with it from its
-- cache. The cache is emptied; keys and documents are fetched again, and checked, when needed.
DELETE FROM `fedify_kv` WHERE `key` LIKE '["_fedify","publicKey",%' OR `key` LIKE '["_fedify","remoteDocument",%';
